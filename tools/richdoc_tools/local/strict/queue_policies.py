"""Resource-based policies of SQS queues, as SQS decides a service principal's send.

When EventBridge delivers an event to a queue target (a rule without a ``RoleArn``), SQS
lets it through only if the queue's policy allows the service principal
``events.amazonaws.com`` ``sqs:SendMessage`` on the queue, under the conditions the
statement sets over the request's ``aws:SourceArn`` (the rule's ARN) and
``aws:SourceAccount``; an explicit Deny wins; no policy allows nothing. A queue that does
not allow it receives nothing, and nothing says so (EventBridge's ``FailedInvocations``
metric, or the target's dead-letter queue).

``service_may_send`` is that decision: a statement applies when its ``Principal`` names
the service (or ``"*"``), and the rest is IAM's evaluation (``strict.policies``).
"""

from __future__ import annotations

import json
from typing import Any

from richdoc_tools.local.strict.policies import AuthorizationRequest, PolicyDocument, evaluate

EVENTBRIDGE = "events.amazonaws.com"


def _names(principal: Any, service: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    for kind in ("Service", "AWS"):
        values = principal.get(kind, [])
        values = values if isinstance(values, list) else [values]
        if (kind == "Service" and service in values) or "*" in values:
            return True
    return False


def service_may_send(
    policy: str | None,
    *,
    service: str,
    queue_arn: str,
    source_arn: str,
    source_account: str,
) -> bool:
    """Whether the queue's policy (its ``Policy`` attribute, JSON) lets ``service`` send
    to it on behalf of ``source_arn``."""
    if not policy:
        return False
    document = json.loads(policy)
    statements = document.get("Statement", [])
    statements = statements if isinstance(statements, list) else [statements]
    applying = [
        {**statement, "Resource": statement.get("Resource", queue_arn)}
        for statement in statements
        if _names(statement.get("Principal"), service)
    ]
    evaluation = evaluate(
        [PolicyDocument.parse(f"{queue_arn} policy", {"Statement": applying})],
        AuthorizationRequest(action="sqs:SendMessage", resource=queue_arn),
        {"aws:SourceArn": (source_arn,), "aws:SourceAccount": (source_account,)},
    )
    return evaluation.allowed
