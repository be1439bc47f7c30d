"""EventBridge API destinations (webhooks), delivered as EventBridge delivers them.

moto, asked to, sends an API destination a bare request: no body, no authorization, no
retry. Here a rule's API destination target gets what AWS sends
(``patches.api_destinations`` hands each matched event to ``WebhookDelivery``, whose
thread sleeps until an event is handed over or a retry is due):

* the event as JSON (whole, as the target's other deliveries get it), by the destination's
  HTTP method, with ``Content-Type: application/json; charset=utf-8`` and the connection's
  authorization: an API key's header, or HTTP Basic, read from the connection's Secrets
  Manager secret as EventBridge reads it;
* within 5 seconds, EventBridge's client timeout, and at most the destination's
  ``InvocationRateLimitPerSecond`` requests a second;
* a 2xx answer delivers the event. A timeout, a refused connection, a 401, 407, 409, 429
  or 5xx answer is retried with exponential back-off and full jitter until the target's
  ``RetryPolicy`` runs out (``MaximumRetryAttempts``, 185 by default;
  ``MaximumEventAgeInSeconds``, 24 hours), any other answer is not retried; the event then
  goes to the target's dead-letter queue with EventBridge's attributes (``RULE_ARN``,
  ``TARGET_ARN``, ``ERROR_CODE``, ``ERROR_MESSAGE``, ``EXHAUSTED_RETRY_CONDITION``,
  ``RETRY_ATTEMPTS``), or is dropped without one; on a strict stack only if the queue's
  policy lets ``events.amazonaws.com`` send to it for the rule (``strict.queue_policies``),
  else it is dropped too (EventBridge's ``InvocationsFailedToBeSentToDlq``);
* on a strict stack, the target's role must allow ``events:InvokeApiDestination`` on the
  destination, or the event goes to the dead-letter queue at once (``NO_PERMISSIONS``).

Time is compressed as the stack's retry delays are (``delay_scale``): the back-off waits
and the event age limit are both scaled, so EventBridge's 24 hours are about 15 minutes at
the default 0.01; with 0 (the tests) retries follow at once and only the attempt limit
applies. Endpoints are HTTPS only, as on AWS (``endpoint_problem``, which the deployment
asks first), and the endpoint's certificate is verified: against the system's trusted
authorities, as EventBridge trusts public ones, and also against ``trusted_ca_file`` when
the stack is given one, so that a receiver on this machine with a certificate of a local
authority (the tests', ``RICHDOC_WEBHOOK_CA_FILE`` on the command line) is reached over
TLS too. A certificate neither trusts fails the request, as a connection error.
"""

from __future__ import annotations

import base64
import json
import random
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.events import endpoint_problem
from richdoc_tools.local.runtime.loops import EventLoop, Signal
from richdoc_tools.local.strict.queue_policies import EVENTBRIDGE, service_may_send

if TYPE_CHECKING:
    from types_boto3_events import EventBridgeClient
    from types_boto3_secretsmanager import SecretsManagerClient
    from types_boto3_sqs import SQSClient

    from richdoc_tools.local.clients import Clients
    from richdoc_tools.local.strict.access import AccessControl

# EventBridge's client timeout for an API destination.
TIMEOUT_S = 5.0
# Statuses EventBridge retries (and every 5xx); it retries no other answer.
RETRIED_STATUSES = frozenset({401, 407, 409, 429})
# A target without a RetryPolicy: EventBridge's defaults.
DEFAULT_MAXIMUM_RETRY_ATTEMPTS = 185
DEFAULT_MAXIMUM_EVENT_AGE_S = 86_400
# The emulation's back-off (AWS publishes no numbers, only "exponential back-off and
# jitter"): the n-th retry waits a random part of min(CAP, BASE * 2**n) seconds, which
# spreads 185 attempts over about the 24 hours AWS retries for.
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 900.0
USER_AGENT = "Amazon/EventBridge/ApiDestinations"
INVOKE_ACTION = "events:InvokeApiDestination"
# How long the idle loop sleeps when nothing wakes it: a handed-over event and a due
# retry both do.
IDLE_S = 1.0


def authorization_headers(authorization_type: str, secret: Mapping[str, str]) -> dict[str, str]:
    """The headers a connection's authorization adds to every request."""
    if authorization_type == "API_KEY":
        return {secret["api_key_name"]: secret["api_key_value"]}
    if authorization_type == "BASIC":
        pair = f"{secret['username']}:{secret['password']}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    raise ValueError(f"connections of type {authorization_type} are not emulated")


@dataclass
class Delivery:
    """One event on its way to one API destination target."""

    rule_arn: str
    target: Mapping[str, Any]
    event: Mapping[str, Any]
    received_at: float = field(default_factory=time.monotonic)
    attempts: int = 0
    due: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Outcome:
    """What one request came to: delivered, or why not and whether EventBridge retries."""

    delivered: bool
    retried: bool = False
    code: str = ""
    message: str = ""


class WebhookDelivery(EventLoop):
    """The API destination targets' deliveries: one thread, asleep until an event is
    handed over (``enqueue``) or the earliest retry is due."""

    def __init__(
        self,
        clients: Clients,
        *,
        delay_scale: float,
        access: AccessControl | None = None,
        trusted_ca_file: Path | None = None,
    ) -> None:
        super().__init__(name="api-destinations", interval_s=IDLE_S, wakes_on=Signal())
        self.opener = endpoint_opener(trusted_ca_file)
        self.events: EventBridgeClient = clients("events")
        self.secrets: SecretsManagerClient = clients("secretsmanager")
        self.sqs: SQSClient = clients("sqs")
        self.delay_scale = delay_scale
        # Strict stacks: the target's role decides each request, the dead-letter queue's
        # policy each dead letter.
        self.access = access
        self._pending: list[Delivery] = []
        self._busy = 0
        self._lock = threading.Lock()
        self._last_send: dict[str, float] = {}  # destination ARN -> monotonic time
        self.dropped: list[Mapping[str, Any]] = []  # events with no dead-letter queue
        # Events their dead-letter queue's policy refused (InvocationsFailedToBeSentToDlq).
        self.failed_to_dead_letter: list[Mapping[str, Any]] = []

    # ---- what the bus hands over -----------------------------------------------------

    def enqueue(self, rule_arn: str, target: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        """An event a rule matched, for its API destination target (asynchronous, as on
        AWS: PutEvents has returned long before the endpoint answers)."""
        with self._lock:
            self._pending.append(Delivery(rule_arn=rule_arn, target=target, event=event))
        self._handed_over()

    def idle(self) -> bool:
        """Every event handed over so far has been delivered, dead-lettered or dropped."""
        with self._lock:
            return not self._pending and self._busy == 0

    def _handed_over(self) -> None:
        assert self.wakes_on is not None
        self.wakes_on.notify()

    # ---- the loop --------------------------------------------------------------------

    def idle_wait_s(self) -> float:
        """Until the earliest retry is due (a handed-over event wakes the loop sooner)."""
        now = time.monotonic()
        with self._lock:
            due = [d.due - now for d in self._pending]
        return max(0.0, min([self.interval_s, *due]))

    def tick(self) -> bool:
        now = time.monotonic()
        with self._lock:
            ready = [d for d in self._pending if d.due <= now]
            for delivery in ready:
                self._pending.remove(delivery)
            self._busy += len(ready)
        for delivery in ready:
            try:
                self._attempt(delivery)
            finally:
                with self._lock:
                    self._busy -= 1
        return bool(ready)

    def _attempt(self, delivery: Delivery) -> None:
        delivery.attempts += 1
        outcome = self._invoke(delivery)
        if outcome.delivered:
            return
        policy = delivery.target.get("RetryPolicy", {})
        retries = int(policy.get("MaximumRetryAttempts", DEFAULT_MAXIMUM_RETRY_ATTEMPTS))
        max_age = int(policy.get("MaximumEventAgeInSeconds", DEFAULT_MAXIMUM_EVENT_AGE_S))
        exhausted = None
        if outcome.retried and delivery.attempts > retries:
            exhausted = "MaximumRetryAttempts"
        elif outcome.retried and self._older_than(delivery, max_age):
            exhausted = "MaximumEventAgeInSeconds"
        if outcome.retried and exhausted is None:
            wait = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (delivery.attempts - 1))
            delivery.due = time.monotonic() + random.uniform(0, wait) * self.delay_scale
            with self._lock:
                self._pending.append(delivery)
            return
        self._dead_letter(delivery, outcome, exhausted)

    def _older_than(self, delivery: Delivery, max_age_s: int) -> bool:
        if self.delay_scale <= 0:
            return False  # no time passes in a compressed-to-nothing clock
        return time.monotonic() - delivery.received_at >= max_age_s * self.delay_scale

    # ---- one request -----------------------------------------------------------------

    def _invoke(self, delivery: Delivery) -> Outcome:
        arn = delivery.target["Arn"]
        role = delivery.target.get("RoleArn")
        if self.access is not None and not self._role_may_invoke(role, arn):
            return Outcome(
                delivered=False,
                code="NO_PERMISSIONS",
                message=f"the target's role {role} may not {INVOKE_ACTION} on {arn}",
            )
        destination = self.events.describe_api_destination(Name=_destination_name(arn))
        endpoint = destination["InvocationEndpoint"]
        problem = endpoint_problem(endpoint)
        if problem is not None:
            return Outcome(delivered=False, code="INVALID_PARAMETER", message=problem)
        connection = self.events.describe_connection(
            Name=destination["ConnectionArn"].split(":connection/", 1)[1].split("/", 1)[0]
        )
        secret = json.loads(
            self.secrets.get_secret_value(SecretId=connection["SecretArn"])["SecretString"]
        )
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": USER_AGENT,
            **authorization_headers(connection["AuthorizationType"], secret),
        }
        self._pace(arn, int(destination.get("InvocationRateLimitPerSecond", 300)))
        request = urllib.request.Request(
            endpoint,
            data=json.dumps(delivery.event).encode(),
            headers=headers,
            method=destination.get("HttpMethod", "POST"),
        )
        return send(self.opener, request)

    def _role_may_invoke(self, role_arn: str | None, destination_arn: str) -> bool:
        assert self.access is not None
        principal = self.access.principal_for_role(role_arn) if role_arn else None
        return principal is not None and self.access.allows(
            principal, INVOKE_ACTION, destination_arn
        )

    def _pace(self, destination_arn: str, per_second: int) -> None:
        """At most ``per_second`` requests a second to one destination."""
        earliest = self._last_send.get(destination_arn, 0.0) + 1.0 / max(1, per_second)
        pause = earliest - time.monotonic()
        if pause > 0:
            self.stopping.wait(pause)
        self._last_send[destination_arn] = time.monotonic()

    def _dead_letter(self, delivery: Delivery, outcome: Outcome, exhausted: str | None) -> None:
        queue_arn = delivery.target.get("DeadLetterConfig", {}).get("Arn")
        if not queue_arn:
            self.dropped.append(delivery.event)  # as on AWS: gone
            return
        attributes = {
            "RULE_ARN": delivery.rule_arn,
            "TARGET_ARN": delivery.target["Arn"],
            "ERROR_CODE": outcome.code,
            "ERROR_MESSAGE": outcome.message or "-",
            "RETRY_ATTEMPTS": str(delivery.attempts - 1),
        }
        if exhausted is not None:
            attributes["EXHAUSTED_RETRY_CONDITION"] = exhausted
        url = self.sqs.get_queue_url(QueueName=queue_arn.rsplit(":", 1)[1])["QueueUrl"]
        if self.access is not None and not self._queue_allows(url, queue_arn, delivery.rule_arn):
            self.failed_to_dead_letter.append(delivery.event)  # as on AWS: gone, counted
            return
        # EventBridge sends as the service, which the queue's policy lets in.
        self.sqs.send_message(
            QueueUrl=url,
            MessageBody=json.dumps(delivery.event),
            MessageAttributes={
                name: {"DataType": "String", "StringValue": value}
                for name, value in attributes.items()
            },
        )

    def _queue_allows(self, queue_url: str, queue_arn: str, rule_arn: str) -> bool:
        """Whether the dead-letter queue's policy lets EventBridge send for the rule."""
        answer = self.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["Policy"])
        return service_may_send(
            answer.get("Attributes", {}).get("Policy"),
            service=EVENTBRIDGE,
            queue_arn=queue_arn,
            source_arn=rule_arn,
            source_account=rule_arn.split(":")[4],
        )


def _destination_name(arn: str) -> str:
    """``arn:...:api-destination/<name>/<uuid>`` -> name."""
    return arn.split(":api-destination/", 1)[1].split("/", 1)[0]


def endpoint_opener(trusted_ca_file: Path | None) -> urllib.request.OpenerDirector:
    """Straight to the endpoint (a proxy from the environment must not see the events),
    over TLS verified against the system's authorities and ``trusted_ca_file``'s."""
    context = ssl.create_default_context()
    if trusted_ca_file is not None:
        context.load_verify_locations(cafile=trusted_ca_file)
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )


def send(opener: urllib.request.OpenerDirector, request: urllib.request.Request) -> Outcome:
    try:
        with opener.open(request, timeout=TIMEOUT_S) as response:
            status: int = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        return Outcome(delivered=False, retried=True, code="SDK_CLIENT_ERROR", message=str(exc))
    if 200 <= status < 300:
        return Outcome(delivered=True)
    retried = status in RETRIED_STATUSES or status >= 500
    return Outcome(
        delivered=False,
        retried=retried,
        code=str(status),
        message=f"the endpoint answered HTTP {status}",
    )
