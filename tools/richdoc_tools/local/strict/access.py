"""IAM as the embedded stack enforces it: each function's calls as its execution role, the
state machine's task calls as its role, operators unrestricted.

After the deployment, every function's execution role and the state machine's role are
assumed (STS AssumeRole, the session named after the function or state machine, as
Lambda and Step Functions name theirs), and each role's identity-based policies (inline
and managed, as IAM holds them) are read once. ``check`` then decides every request
signed with one of those sessions' keys (``patches.request_gate``): the permissions it
needs (``permissions.needed``) under the role's policies (``policies.evaluate``), and
answers a denial as the service does (S3's 403 ``AccessDenied``, DynamoDB's and Step
Functions' 400 ``AccessDeniedException``, SQS's 403 ``AccessDenied``, Lambda's 403
``AccessDeniedException``), with AWS's message: ``User: <session> is not authorized to
perform: <action> on resource: <resource> because no identity-based policy allows the
<action> action``. Requests signed with any other key (the tests' clients, the AWS CLI,
the stack itself) are an administrator's.

moto's own access control is not used: it is process-wide, checks DynamoDB, Step
Functions and Lambda requests against the resource ``*`` (so resource-scoped Allows fail),
treats every Allow with a Condition as a denial, checks DeleteObjects against the bucket
and a versioned HEAD as GetObject.

Only identity-based policies are evaluated; resource-based policies (bucket and queue
policies, function permissions), permission boundaries, session policies and SCPs are
not (docs/embedded-stack.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from botocore.credentials import Credentials

from richdoc_tools.local.requests.callers import Principal
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse
from richdoc_tools.local.requests.service_request import ServiceRequest
from richdoc_tools.local.strict import permissions
from richdoc_tools.local.strict.policies import (
    AuthorizationRequest,
    ConditionValues,
    Decision,
    Evaluation,
    PolicyDocument,
    evaluate,
)

if TYPE_CHECKING:
    from types_boto3_iam import IAMClient

    from richdoc_tools.local.clients import Clients

# service -> (HTTP status, error code) of an access denial
DENIALS: dict[str, tuple[int, str]] = {
    "s3": (403, "AccessDenied"),
    "sqs": (403, "AccessDenied"),
    "lambda": (403, "AccessDeniedException"),
    "dynamodb": (400, "AccessDeniedException"),
    "stepfunctions": (400, "AccessDeniedException"),
}
DEFAULT_DENIAL = (400, "AccessDeniedException")


class AccessDenied(ServiceErrorResponse):
    def __init__(self, service: str, message: str) -> None:
        status, code = DENIALS.get(service, DEFAULT_DENIAL)
        super().__init__(service, status, code, message)


def denial_message(principal: Principal, evaluation: Evaluation) -> str:
    action, resource = evaluation.request.action, evaluation.request.resource
    shown = f'"{resource}"' if action.startswith("s3:") else resource
    why = (
        "with an explicit deny in an identity-based policy"
        if evaluation.decision is Decision.EXPLICIT_DENY
        else f"because no identity-based policy allows the {action} action"
    )
    message = (
        f"User: {principal.session_arn} is not authorized to perform: {action} "
        f"on resource: {shown} {why}"
    )
    if evaluation.unevaluated:
        unknown = ", ".join(evaluation.unevaluated)
        message += f" (the embedded stack cannot evaluate the condition {unknown})"
    return message


def _document(document: str | Mapping[str, Any]) -> Mapping[str, Any]:
    """A policy document as IAM returns it: decoded by boto3, or URL-encoded JSON."""
    if isinstance(document, str):
        parsed: Mapping[str, Any] = json.loads(unquote(document))
        return parsed
    return document


class AccessControl:
    def __init__(self, *, account: str, region: str) -> None:
        self.account = account
        self.region = region
        self._by_key: dict[str, Principal] = {}
        self._by_name: dict[str, Principal] = {}
        self._by_role: dict[str, Principal] = {}
        self._policies: dict[str, tuple[PolicyDocument, ...]] = {}
        self._lock = threading.Lock()
        self.denials: list[str] = []  # the messages of the requests denied, in order

    # ---- the deployed roles ---------------------------------------------------------------

    def assume(self, clients: Clients, name: str, role_arn: str, session: str) -> Principal:
        """Assume ``role_arn`` for the function or state machine ``name`` (its logical
        id), the session named ``session``, and read the role's policies."""
        sts: Any = clients.session.client(
            "sts", region_name=clients.region, endpoint_url=clients.endpoint_url
        )
        answer = sts.assume_role(RoleArn=role_arn, RoleSessionName=session[:64])
        keys = answer["Credentials"]
        principal = Principal(
            name=name,
            role_arn=role_arn,
            session_arn=answer["AssumedRoleUser"]["Arn"],
            access_key_id=keys["AccessKeyId"],
            credentials=Credentials(
                keys["AccessKeyId"], keys["SecretAccessKey"], keys["SessionToken"]
            ),
        )
        with self._lock:
            self._by_key[principal.access_key_id] = principal
            self._by_name[name] = principal
            self._by_role[role_arn] = principal
        self.reload(clients("iam"), role_arn)
        return principal

    def reload(self, iam: IAMClient, role_arn: str) -> None:
        """Read the role's policies again (after a test changed them)."""
        role = role_arn.rsplit("/", 1)[-1]
        documents = [
            PolicyDocument.parse(
                f"{role}/{name}",
                _document(iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]),
            )
            for name in iam.list_role_policies(RoleName=role)["PolicyNames"]
        ]
        for attached in iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]:
            arn = attached["PolicyArn"]
            version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
            document = iam.get_policy_version(PolicyArn=arn, VersionId=version)
            documents.append(
                PolicyDocument.parse(arn, _document(document["PolicyVersion"]["Document"]))
            )
        with self._lock:
            self._policies[role_arn] = tuple(documents)

    def principal(self, name: str) -> Principal | None:
        """The principal acting for the function or state machine ``name`` (logical id)."""
        return self._by_name.get(name)

    def principal_for_role(self, role_arn: str) -> Principal | None:
        return self._by_role.get(role_arn)

    def principal_signing(self, access_key_id: str) -> Principal | None:
        return self._by_key.get(access_key_id)

    @property
    def principals(self) -> Mapping[str, Principal]:
        """Every principal, by the logical id it acts for."""
        return dict(self._by_name)

    # ---- decisions ---------------------------------------------------------------------------

    def context(
        self, principal: Principal, request: ServiceRequest | None
    ) -> dict[str, ConditionValues]:
        """The condition keys the emulation states for a role's request (a key it does
        not state cannot be evaluated: policies.evaluate)."""
        context: dict[str, ConditionValues] = {
            # On AWS the SDK always uses TLS; the emulation's HTTP is the local transport.
            "aws:SecureTransport": ("true",),
            "aws:PrincipalArn": (principal.role_arn,),
            "aws:PrincipalAccount": (self.account,),
            "aws:PrincipalType": ("AssumedRole",),
            "aws:RequestedRegion": (request.region if request else self.region,),
            "aws:SourceArn": (),  # set only for service principals
            "aws:SourceAccount": (),
        }
        if request is not None and request.service == "s3":
            for key, name in (("s3:prefix", "prefix"), ("s3:versionid", "versionId")):
                value = request.query.get(name)
                context[key] = (value,) if value is not None else ()
        return context

    def evaluate(
        self, principal: Principal, needed: AuthorizationRequest, request: ServiceRequest | None
    ) -> Evaluation:
        with self._lock:
            policies = self._policies.get(principal.role_arn, ())
        return evaluate(policies, needed, self.context(principal, request))

    def allows(self, principal: Principal, action: str, resource: str) -> bool:
        needed = AuthorizationRequest(action=action, resource=resource)
        return self.evaluate(principal, needed, None).allowed

    def check(self, request: ServiceRequest) -> None:
        """Raise the service's AccessDenied when the request's signer may not make it."""
        principal = self.principal_signing(request.access_key_id)
        if principal is None:
            return  # an operator's request
        for needed in permissions.needed(request, self.account):
            evaluation = self.evaluate(principal, needed, request)
            if not evaluation.allowed:
                message = denial_message(principal, evaluation)
                with self._lock:
                    self.denials.append(message)
                raise AccessDenied(request.service, message)

    def denial(self, principal: Principal, action: str, resource: str) -> str | None:
        """IAM's message (recorded with the denials) when the role may not ``action`` on
        ``resource``, else None: for what a service does with a role outside any request
        the gate sees (Lambda's stream reads, S3's answer for a missing key)."""
        evaluation = self.evaluate(
            principal, AuthorizationRequest(action=action, resource=resource), None
        )
        if evaluation.allowed:
            return None
        message = denial_message(principal, evaluation)
        with self._lock:
            self.denials.append(message)
        return message

    def missing_key_denial(self, access_key_id: str, bucket: str) -> AccessDenied | None:
        """S3 answers a GET or HEAD of a missing key (or version) with 403 AccessDenied,
        not 404, when the caller lacks ``s3:ListBucket`` on the bucket (the GetObject
        page of the S3 API reference, "Permissions")."""
        principal = self.principal_signing(access_key_id)
        if principal is None:
            return None
        message = self.denial(principal, "s3:ListBucket", f"arn:aws:s3:::{bucket}")
        return None if message is None else AccessDenied("s3", message)


def roles_of_functions(
    clients: Clients, functions: Mapping[str, str]
) -> dict[str, tuple[str, str]]:
    """Logical id -> (execution role ARN, function name), of deployed functions (name ->
    logical id)."""
    lambda_client = clients("lambda")
    return {
        logical_id: (lambda_client.get_function_configuration(FunctionName=name)["Role"], name)
        for name, logical_id in functions.items()
    }


def assume_all(
    access: AccessControl,
    clients: Clients,
    functions: Mapping[str, str],
    state_machines: Sequence[tuple[str, str]],
) -> None:
    """Assume every function's role (``functions``: name -> logical id) and every state
    machine's (``state_machines``: (logical id, ARN))."""
    for logical_id, (role_arn, name) in roles_of_functions(clients, functions).items():
        access.assume(clients, logical_id, role_arn, name)
    sfn = clients("stepfunctions")
    for logical_id, arn in state_machines:
        described = sfn.describe_state_machine(stateMachineArn=arn)
        access.assume(clients, logical_id, described["roleArn"], described["name"])


def assume_target_roles(access: AccessControl, clients: Clients) -> None:
    """Assume the role of every API destination target (EventBridge invokes it as that
    role), so that its policies decide each webhook request (``runtime.webhooks``)."""
    events = clients("events")
    for bus in events.list_event_buses()["EventBuses"]:
        for rule in events.list_rules(EventBusName=bus["Name"])["Rules"]:
            targets = events.list_targets_by_rule(Rule=rule["Name"], EventBusName=bus["Name"])
            for target in targets["Targets"]:
                if ":api-destination/" in target["Arn"] and "RoleArn" in target:
                    access.assume(clients, rule["Name"], target["RoleArn"], "events")
