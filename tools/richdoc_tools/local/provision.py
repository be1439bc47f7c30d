"""Deploy a translated template into the AWS emulation, resource by resource.

moto's own CloudFormation drops properties this pipeline depends on (bucket
notifications and versioning, state machine definition substitutions, image functions),
so each resource type is created here through the regular AWS APIs, in dependency order,
with the template's intrinsic functions resolved the way CloudFormation resolves them.

Nothing in the template is dropped silently. Each resource type's provisioner declares,
with ``@provisions``, every property it knows: those it ``consumes`` (passes to the
emulation), the ``inert`` ones (descriptions and other metadata without behaviour) and the
``not_emulated`` ones (AWS behaviour the emulation lacks, with what differs; ``richdoc
local serve`` lists them). A resource type without a provisioner, or a property none of
these names, fails the deployment with a ``TemplateError`` that says what to declare, so
the emulation cannot drift from the template. The handlers' code always comes from the
checkout (see ``lambdas``), never from the packaged ``Code``/``Content``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import uuid
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from typing import Any

from richdoc_tools.local.template import LOCAL_CODE_BUCKET, Template

PSEUDO_PARAMETERS = (
    "AWS::Region",
    "AWS::AccountId",
    "AWS::StackName",
    "AWS::StackId",
    "AWS::Partition",
    "AWS::URLSuffix",
    "AWS::NoValue",
)


class TemplateError(ValueError):
    """The template uses something the embedded stack cannot deploy."""


@dataclass(frozen=True)
class NotEmulated:
    """Something the template asks of AWS that the emulation does without."""

    resource: str  # logical id
    item: str  # the property or statement
    why: str


# Resource attributes besides Type and Properties that the emulation may disregard.
# Condition is evaluated by the deploy loop (a false condition skips the resource).
RESOURCE_ATTRIBUTES = frozenset(
    {"Condition", "DependsOn", "Metadata", "DeletionPolicy", "UpdateReplacePolicy"}
)

Create = Callable[["Provisioner", str, dict[str, Any]], None]


@dataclass(frozen=True)
class ResourceProvisioner:
    """How one resource type is deployed, and which of its properties that covers."""

    resource_type: str
    create: Create
    consumes: frozenset[str]
    inert: frozenset[str] = frozenset()
    not_emulated: Mapping[str, str] = field(default_factory=dict)  # property -> what differs

    def __call__(self, p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
        self.create(p, logical_id, props)

    def check(self, logical_id: str, resource: Mapping[str, Any]) -> list[NotEmulated]:
        """The resource's not-emulated notes; a TemplateError for anything undeclared."""
        for attribute in resource:
            if attribute not in ("Type", "Properties", *RESOURCE_ATTRIBUTES):
                raise TemplateError(
                    f"{logical_id}: resource attribute {attribute} is not supported by the "
                    "embedded stack (tools/richdoc_tools/local/provision.py)"
                )
        known = self.consumes | self.inert | set(self.not_emulated)
        for name in resource.get("Properties", {}):
            if name not in known:
                raise TemplateError(
                    f"{logical_id}: {self.resource_type} property {name} is not declared by "
                    "the embedded stack. Declare it at @provisions("
                    f"{self.resource_type!r}, ...) in tools/richdoc_tools/local/provision.py: "
                    f"in consumes= (and pass it to the emulation in {self.create.__name__}), "
                    "in inert= if it has no behaviour to emulate, or in not_emulated= with "
                    "what differs from AWS."
                )
        return [
            NotEmulated(logical_id, name, self.not_emulated[name])
            for name in resource.get("Properties", {})
            if name in self.not_emulated
        ]


PROVISIONERS: dict[str, ResourceProvisioner] = {}


def provisions(
    resource_type: str,
    *,
    consumes: Iterable[str],
    inert: Iterable[str] = (),
    not_emulated: Mapping[str, str] | None = None,
) -> Callable[[Create], Create]:
    """Register ``create`` as the provisioner of ``resource_type`` with its declarations."""

    def register(create: Create) -> Create:
        PROVISIONERS[resource_type] = ResourceProvisioner(
            resource_type, create, frozenset(consumes), frozenset(inert), dict(not_emulated or {})
        )
        return create

    return register


@dataclass
class Deployed:
    """Physical ids (what Ref returns) and attributes (what GetAtt returns)."""

    refs: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)


class Resolver:
    def __init__(
        self,
        *,
        stack_name: str,
        stack_id: str,
        region: str,
        account: str,
        parameters: Mapping[str, str],
        deployed: Deployed,
        conditions: Mapping[str, Any] | None = None,
    ) -> None:
        self.pseudo = {
            "AWS::Region": region,
            "AWS::AccountId": account,
            "AWS::StackName": stack_name,
            "AWS::StackId": stack_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }
        self.parameters = dict(parameters)
        self.deployed = deployed
        self.conditions = dict(conditions or {})  # the template's Conditions section

    def condition(self, name: str) -> bool:
        """A named condition of the template, evaluated as CloudFormation does."""
        if name not in self.conditions:
            raise TemplateError(f"unknown Condition {name}")
        return self._truth(self.conditions[name])

    def _truth(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, dict) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::Equals":
                left, right = (self.resolve(a) for a in arg)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self._truth(arg[0])
            if key == "Fn::And":
                return all(self._truth(a) for a in arg)
            if key == "Fn::Or":
                return any(self._truth(a) for a in arg)
        raise TemplateError(f"not a condition: {value!r}")

    def ref(self, name: str) -> str:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.deployed.refs:
            return self.deployed.refs[name]
        raise TemplateError(f"unresolved Ref {name}")

    def get_att(self, logical_id: str, attribute: str) -> str:
        try:
            return self.deployed.attributes[logical_id][attribute]
        except KeyError:
            raise TemplateError(f"unresolved GetAtt {logical_id}.{attribute}") from None

    def sub(self, template: str, variables: Mapping[str, Any]) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(self.resolve(variables[name]))
            if "." in name and name.split(".", 1)[0] not in self.pseudo:
                logical_id, attribute = name.split(".", 1)
                return self.get_att(logical_id, attribute)
            return self.ref(name)

        return re.sub(r"\$\{([^}]+)\}", replace, template)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return _NO_VALUE if arg == "AWS::NoValue" else self.ref(arg)
            if key == "Fn::GetAtt":
                logical_id, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
                return self.get_att(logical_id, attribute)
            if key == "Fn::Sub":
                if isinstance(arg, str):
                    return self.sub(arg, {})
                return self.sub(arg[0], arg[1])
            if key == "Fn::Join":
                return str(arg[0]).join(str(v) for v in self.resolve(arg[1]))
            if key == "Fn::Select":
                return self.resolve(arg[1])[int(self.resolve(arg[0]))]
            if key == "Fn::Split":
                return str(self.resolve(arg[1])).split(arg[0])
            if key == "Fn::If":
                name, if_true, if_false = arg
                return self.resolve(if_true if self.condition(name) else if_false)
            if key.startswith("Fn::") or key == "Condition":
                raise TemplateError(f"intrinsic {key} is not supported by the embedded stack")
        return {
            k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not _NO_VALUE
        }


_NO_VALUE = object()


def _references(value: Any) -> set[str]:
    """Logical ids a property value depends on."""
    found: set[str] = set()
    if isinstance(value, list):
        for v in value:
            found |= _references(v)
    elif isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(arg[0] if isinstance(arg, list) else arg.split(".", 1)[0])
            elif key == "Fn::Sub":
                text = arg if isinstance(arg, str) else arg[0]
                for name in re.findall(r"\$\{([^}!][^}]*)\}", text):
                    found.add(name.split(".", 1)[0])
                if isinstance(arg, list):
                    found |= _references(arg[1])
            elif key == "Fn::If":  # the condition's name is not a resource
                found |= _references(arg[1:])
            else:
                found |= _references(arg)
    return found


def deployment_order(resources: Mapping[str, Any]) -> list[str]:
    graph: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        deps = _references(resource.get("Properties", {}))
        depends_on = resource.get("DependsOn", [])
        deps |= set([depends_on] if isinstance(depends_on, str) else depends_on)
        graph[logical_id] = {d for d in deps if d in resources}
    return list(TopologicalSorter(graph).static_order())


def _tags(props: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"Key": t["Key"], "Value": str(t["Value"])} for t in props.get("Tags", [])]


def _placeholder_zip() -> bytes:
    """Code the emulated Lambda service stores; invocations run the repository's handlers."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("README.txt", "richdoc embedded stack: see richdoc_tools.local.lambdas\n")
    return buffer.getvalue()


class Provisioner:
    """Creates every resource of a translated template through boto3 (against moto)."""

    def __init__(
        self,
        session: Any,
        template: Template,
        *,
        stack_name: str,
        region: str,
        account: str,
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        self.session = session
        self.template = template
        self.stack_name = stack_name
        self.region = region
        self.account = account
        self.deployed = Deployed()
        # Deterministic, CloudFormation-shaped stack id (its UUID names the ingest bucket).
        stack_uuid = uuid.UUID(hashlib.md5(stack_name.encode()).hexdigest())
        self.stack_id = f"arn:aws:cloudformation:{region}:{account}:stack/{stack_name}/{stack_uuid}"
        self.resolver = Resolver(
            stack_name=stack_name,
            stack_id=self.stack_id,
            region=region,
            account=account,
            parameters={**template.parameter_defaults(), **(parameters or {})},
            deployed=self.deployed,
            conditions=template.cfn.get("Conditions", {}),
        )
        self._clients: dict[str, Any] = {}
        self.not_emulated: list[NotEmulated] = []

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self.session.client(service, region_name=self.region)
        return self._clients[service]

    def physical_name(self, logical_id: str, max_length: int = 64, lower: bool = False) -> str:
        suffix = hashlib.sha256(f"{self.stack_name}/{logical_id}".encode()).hexdigest()[:12]
        name = f"{self.stack_name}-{logical_id}"[: max_length - 13] + "-" + suffix.upper()
        return name.lower() if lower else name

    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{self.account}:{resource}"

    def deploy(self) -> Deployed:
        self.client("s3").create_bucket(Bucket=LOCAL_CODE_BUCKET)
        resources = self.template.resources
        for logical_id in deployment_order(resources):
            resource = resources[logical_id]
            if "Condition" in resource and not self.resolver.condition(resource["Condition"]):
                continue  # as CloudFormation: the resource is not created
            provisioner = PROVISIONERS.get(resource["Type"])
            if provisioner is None:
                raise TemplateError(
                    f"{logical_id}: resource type {resource['Type']} has no provisioner "
                    "(add one with @provisions in tools/richdoc_tools/local/provision.py)"
                )
            self.not_emulated.extend(provisioner.check(logical_id, resource))
            props = self.resolver.resolve(resource.get("Properties", {}))
            self.deployed.types[logical_id] = resource["Type"]
            provisioner(self, logical_id, props)
        return self.deployed

    def outputs(self) -> dict[str, str]:
        return {
            name: str(self.resolver.resolve(spec["Value"]))
            for name, spec in self.template.cfn.get("Outputs", {}).items()
        }

    def _set(self, logical_id: str, ref: str, **attributes: str) -> None:
        self.deployed.refs[logical_id] = ref
        self.deployed.attributes[logical_id] = attributes


# ---- one function per resource type -------------------------------------------------------


_QUEUE_ATTRIBUTES = (
    "VisibilityTimeout",
    "MessageRetentionPeriod",
    "RedrivePolicy",
    "SqsManagedSseEnabled",
    "DelaySeconds",
    "ReceiveMessageWaitTimeSeconds",
)


@provisions("AWS::SQS::Queue", consumes=("QueueName", *_QUEUE_ATTRIBUTES))
def _sqs_queue(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("QueueName") or p.physical_name(logical_id, 80)
    attributes = {
        key: json.dumps(props[key])
        if isinstance(props[key], dict)
        else str(props[key]).lower()
        if isinstance(props[key], bool)
        else str(props[key])
        for key in _QUEUE_ATTRIBUTES
        if key in props
    }
    url = p.client("sqs").create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    p._set(logical_id, url, Arn=p.arn("sqs", name), QueueName=name, QueueUrl=url)


@provisions("AWS::SQS::QueuePolicy", consumes=("Queues", "PolicyDocument"))
def _sqs_queue_policy(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    for url in props["Queues"]:
        p.client("sqs").set_queue_attributes(
            QueueUrl=url, Attributes={"Policy": json.dumps(props["PolicyDocument"])}
        )
    p._set(logical_id, logical_id)


@provisions(
    "AWS::S3::Bucket",
    consumes=(
        "BucketName",
        "VersioningConfiguration",
        "BucketEncryption",
        "PublicAccessBlockConfiguration",
        "OwnershipControls",
        "NotificationConfiguration",
    ),
)
def _s3_bucket(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    s3 = p.client("s3")
    name = props.get("BucketName") or p.physical_name(logical_id, 63, lower=True)
    s3.create_bucket(Bucket=name)
    if "VersioningConfiguration" in props:
        s3.put_bucket_versioning(
            Bucket=name, VersioningConfiguration=props["VersioningConfiguration"]
        )
    if "BucketEncryption" in props:
        rules = [
            {"ApplyServerSideEncryptionByDefault": rule["ServerSideEncryptionByDefault"]}
            for rule in props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        ]
        s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules})
    if "PublicAccessBlockConfiguration" in props:
        s3.put_public_access_block(
            Bucket=name, PublicAccessBlockConfiguration=props["PublicAccessBlockConfiguration"]
        )
    if "OwnershipControls" in props:
        s3.put_bucket_ownership_controls(Bucket=name, OwnershipControls=props["OwnershipControls"])
    notifications = props.get("NotificationConfiguration", {})
    if notifications:
        queues = [
            {
                "QueueArn": q["Queue"],
                "Events": [q["Event"]],
                **({"Filter": q["Filter"]} if "Filter" in q else {}),
            }
            for q in notifications.get("QueueConfigurations", [])
        ]
        unsupported = set(notifications) - {"QueueConfigurations"}
        if unsupported:
            raise TemplateError(f"{logical_id}: notifications {sorted(unsupported)} not emulated")
        s3.put_bucket_notification_configuration(
            Bucket=name, NotificationConfiguration={"QueueConfigurations": queues}
        )
    p._set(logical_id, name, Arn=f"arn:aws:s3:::{name}", DomainName=f"{name}.s3.amazonaws.com")


def _tls_only(statement: Mapping[str, Any]) -> bool:
    return statement.get("Effect") == "Deny" and "aws:SecureTransport" in statement.get(
        "Condition", {}
    ).get("Bool", {})


@provisions("AWS::S3::BucketPolicy", consumes=("Bucket", "PolicyDocument"))
def _s3_bucket_policy(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    # moto evaluates a Deny whose Condition it cannot check as an unconditional Deny, so
    # a TLS-only statement would refuse every request. All traffic here is in-process,
    # so those statements are recorded as not emulated (the static template tests check
    # they exist) and the rest of the policy is applied.
    document = dict(props["PolicyDocument"])
    statements = document["Statement"]
    kept = [s for s in statements if not _tls_only(s)]
    p.not_emulated.extend(
        NotEmulated(
            logical_id,
            f"statement {s.get('Sid', '(no Sid)')}",
            "TLS-only deny left out: moto cannot evaluate aws:SecureTransport and would deny "
            "every request; all traffic here is local",
        )
        for s in statements
        if _tls_only(s)
    )
    if kept:
        document["Statement"] = kept
        p.client("s3").put_bucket_policy(Bucket=props["Bucket"], Policy=json.dumps(document))
    p._set(logical_id, logical_id)


@provisions(
    "AWS::DynamoDB::Table",
    consumes=(
        "TableName",
        "AttributeDefinitions",
        "KeySchema",
        "BillingMode",
        "GlobalSecondaryIndexes",
        "SSESpecification",
        "PointInTimeRecoverySpecification",
    ),
)
def _dynamodb_table(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    ddb = p.client("dynamodb")
    name = props.get("TableName") or p.physical_name(logical_id, 255)
    kwargs: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PROVISIONED"),
    }
    if "GlobalSecondaryIndexes" in props:
        kwargs["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    if "SSESpecification" in props:
        kwargs["SSESpecification"] = {"Enabled": props["SSESpecification"]["SSEEnabled"]}
    table = ddb.create_table(**kwargs)["TableDescription"]
    pitr = props.get("PointInTimeRecoverySpecification", {})
    if pitr.get("PointInTimeRecoveryEnabled"):
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True},
        )
    p._set(logical_id, name, Arn=table["TableArn"])


@provisions(
    "AWS::IAM::Role",
    consumes=("RoleName", "AssumeRolePolicyDocument", "Tags", "Policies", "ManagedPolicyArns"),
    inert=("Description",),
)
def _iam_role(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    iam = p.client("iam")
    name = props.get("RoleName") or p.physical_name(logical_id, 64)
    role = iam.create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(props["AssumeRolePolicyDocument"]),
        Tags=_tags(props),
    )["Role"]
    for policy in props.get("Policies", []):
        # IAM reads a document without Version as 2008-10-17 (SAM's policy templates omit
        # it); moto rejects such documents, so the emulation states the version.
        document = {"Version": "2012-10-17", **policy["PolicyDocument"]}
        iam.put_role_policy(
            RoleName=name, PolicyName=policy["PolicyName"], PolicyDocument=json.dumps(document)
        )
    for arn in props.get("ManagedPolicyArns", []):
        iam.attach_role_policy(RoleName=name, PolicyArn=arn)
    p._set(logical_id, name, Arn=role["Arn"], RoleId=role["RoleId"])


@provisions(
    "AWS::Lambda::LayerVersion",
    consumes=("LayerName", "CompatibleRuntimes"),
    inert=("Description", "CompatibleArchitectures", "LicenseInfo"),
    not_emulated={"Content": "the layer's code is imported from the checkout (layers/docling)"},
)
def _lambda_layer(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    layer = p.client("lambda").publish_layer_version(
        LayerName=props.get("LayerName", logical_id),
        Content={"ZipFile": _placeholder_zip()},
        CompatibleRuntimes=props.get("CompatibleRuntimes", []),
    )
    p._set(logical_id, layer["LayerVersionArn"])


@provisions(
    "AWS::Lambda::Function",
    consumes=(
        "FunctionName",
        "Role",
        "MemorySize",
        "Timeout",
        "Environment",
        "Tags",
        "TracingConfig",
        "PackageType",
        "Code",
        "ImageConfig",
        "Runtime",
        "Handler",
        "ReservedConcurrentExecutions",  # LambdaRuntime's slots per function
        "LoggingConfig",
        "Layers",
        "EphemeralStorage",
    ),
    inert=("Description",),
    not_emulated={"Architectures": "handlers run on this machine's CPU, in this process"},
)
def _lambda_function(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("FunctionName") or p.physical_name(logical_id, 64)
    kwargs: dict[str, Any] = {
        "FunctionName": name,
        "Role": props["Role"],
        "MemorySize": int(props.get("MemorySize", 128)),
        "Timeout": int(props.get("Timeout", 3)),
        "Environment": {
            "Variables": {
                k: str(v) for k, v in props.get("Environment", {}).get("Variables", {}).items()
            }
        },
        "Tags": {t["Key"]: t["Value"] for t in _tags(props)},
        "TracingConfig": props.get("TracingConfig", {"Mode": "PassThrough"}),
    }
    if props.get("PackageType") == "Image":
        kwargs.update(
            PackageType="Image",
            Code={"ImageUri": props["Code"]["ImageUri"]},
            ImageConfig=props.get("ImageConfig", {}),
        )
    else:
        kwargs.update(
            Runtime=props["Runtime"],
            Handler=props["Handler"],
            Code={"ZipFile": _placeholder_zip()},
            Layers=props.get("Layers", []),
        )
    if "EphemeralStorage" in props:
        kwargs["EphemeralStorage"] = {"Size": int(props["EphemeralStorage"]["Size"])}
    if "LoggingConfig" in props:
        kwargs["LoggingConfig"] = props["LoggingConfig"]
    client = p.client("lambda")
    function = client.create_function(**kwargs)
    if "ReservedConcurrentExecutions" in props:
        # Read back by the Lambda runtime (richdoc_tools.local.lambdas) to size the
        # function's invocation slots.
        client.put_function_concurrency(
            FunctionName=name,
            ReservedConcurrentExecutions=int(props["ReservedConcurrentExecutions"]),
        )
    p._set(logical_id, name, Arn=function["FunctionArn"])


@provisions(
    "AWS::Lambda::EventSourceMapping",
    consumes=(
        "EventSourceArn",
        "FunctionName",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "FunctionResponseTypes",
        "ScalingConfig",  # one poller per mapping is always within MaximumConcurrency
    ),
)
def _lambda_event_source(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    # Created disabled: moto delivers SQS messages synchronously inside SendMessage and
    # ignores batchItemFailures; richdoc_tools.local.events polls with the mapping's settings.
    mapping = p.client("lambda").create_event_source_mapping(
        EventSourceArn=props["EventSourceArn"],
        FunctionName=props["FunctionName"],
        BatchSize=int(props.get("BatchSize", 10)),
        MaximumBatchingWindowInSeconds=int(props.get("MaximumBatchingWindowInSeconds", 0)),
        FunctionResponseTypes=props.get("FunctionResponseTypes", []),
        Enabled=False,
        **(
            {"ScalingConfig": {"MaximumConcurrency": int(scaling["MaximumConcurrency"])}}
            if (scaling := props.get("ScalingConfig"))
            else {}
        ),
    )
    p._set(logical_id, mapping["UUID"])


@provisions(
    "AWS::Lambda::Permission", consumes=("FunctionName", "Action", "Principal", "SourceArn")
)
def _lambda_permission(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    kwargs = {
        "FunctionName": props["FunctionName"],
        "StatementId": logical_id,
        "Action": props["Action"],
        "Principal": props["Principal"],
    }
    if "SourceArn" in props:
        kwargs["SourceArn"] = props["SourceArn"]
    p.client("lambda").add_permission(**kwargs)
    p._set(logical_id, logical_id)


@provisions(
    "AWS::Events::Rule",
    consumes=("Name", "EventPattern", "ScheduleExpression", "State", "Targets"),
    inert=("Description",),
)
def _events_rule(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    # moto stores the rules; richdoc_tools.local.events delivers to their targets (status
    # changes, schedules) the way EventBridge would.
    events = p.client("events")
    name = props.get("Name") or p.physical_name(logical_id, 64)
    trigger = (
        {"ScheduleExpression": props["ScheduleExpression"]}
        if "ScheduleExpression" in props
        else {"EventPattern": json.dumps(props["EventPattern"])}
    )
    rule = events.put_rule(Name=name, State=props.get("State", "ENABLED"), **trigger)
    target_keys = ("Id", "Arn", "Input", "DeadLetterConfig", "RetryPolicy")
    targets = [{k: t[k] for k in target_keys if k in t} for t in props.get("Targets", [])]
    if targets:
        events.put_targets(Rule=name, Targets=targets)
    p._set(logical_id, name, Arn=rule["RuleArn"])


@provisions(
    "AWS::StepFunctions::StateMachine",
    consumes=(
        "DefinitionString",
        "DefinitionSubstitutions",
        "StateMachineName",
        "RoleArn",
        "StateMachineType",
        "LoggingConfiguration",
        "TracingConfiguration",
        "Tags",
    ),
)
def _state_machine(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    definition = props["DefinitionString"]
    for key, value in props.get("DefinitionSubstitutions", {}).items():
        definition = definition.replace("${" + key + "}", str(value))
    leftover = re.findall(r"\$\{([A-Za-z0-9_]+)\}", definition)
    if leftover:
        raise TemplateError(f"{logical_id}: unsubstituted placeholders {leftover}")
    name = props.get("StateMachineName") or p.physical_name(logical_id, 80)
    kwargs: dict[str, Any] = {
        "name": name,
        "definition": definition,
        "roleArn": props["RoleArn"],
        "type": props.get("StateMachineType", "STANDARD"),
    }
    logging = props.get("LoggingConfiguration")
    if logging:
        kwargs["loggingConfiguration"] = {
            "level": logging["Level"],
            "includeExecutionData": logging.get("IncludeExecutionData", False),
            "destinations": [
                {
                    "cloudWatchLogsLogGroup": {
                        "logGroupArn": d["CloudWatchLogsLogGroup"]["LogGroupArn"]
                    }
                }
                for d in logging.get("Destinations", [])
            ],
        }
    if "TracingConfiguration" in props:
        kwargs["tracingConfiguration"] = {"enabled": props["TracingConfiguration"]["Enabled"]}
    if "Tags" in props:
        kwargs["tags"] = [{"key": t["Key"], "value": t["Value"]} for t in _tags(props)]
    arn = p.client("stepfunctions").create_state_machine(**kwargs)["stateMachineArn"]
    p._set(logical_id, arn, Name=name, Arn=arn)


@provisions("AWS::Logs::LogGroup", consumes=("LogGroupName", "RetentionInDays"))
def _log_group(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    logs = p.client("logs")
    name = props.get("LogGroupName") or p.physical_name(logical_id, 512)
    logs.create_log_group(logGroupName=name)
    if "RetentionInDays" in props:
        logs.put_retention_policy(logGroupName=name, retentionInDays=int(props["RetentionInDays"]))
    p._set(logical_id, name, Arn=p.arn("logs", f"log-group:{name}:*"))


@provisions("AWS::SNS::Topic", consumes=("TopicName", "KmsMasterKeyId"))
def _sns_topic(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("TopicName") or p.physical_name(logical_id, 256)
    attributes = {"KmsMasterKeyId": props["KmsMasterKeyId"]} if "KmsMasterKeyId" in props else {}
    arn = p.client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
    p._set(logical_id, arn, TopicName=name)


@provisions(
    "AWS::KMS::Key",
    consumes=("Description", "KeyPolicy", "KeyUsage", "EnableKeyRotation"),
)
def _kms_key(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    kms = p.client("kms")
    key = kms.create_key(
        Description=props.get("Description", ""),
        Policy=json.dumps(props["KeyPolicy"]),
        KeyUsage=props.get("KeyUsage", "ENCRYPT_DECRYPT"),
    )["KeyMetadata"]
    if props.get("EnableKeyRotation"):
        kms.enable_key_rotation(KeyId=key["KeyId"])
    p._set(logical_id, key["KeyId"], Arn=key["Arn"], KeyId=key["KeyId"])


@provisions("AWS::SNS::Subscription", consumes=("TopicArn", "Protocol", "Endpoint"))
def _sns_subscription(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    # An email subscription stays pending confirmation; nothing is sent locally.
    arn = p.client("sns").subscribe(
        TopicArn=props["TopicArn"], Protocol=props["Protocol"], Endpoint=props["Endpoint"]
    )["SubscriptionArn"]
    p._set(logical_id, arn)


@provisions("AWS::IAM::Policy", consumes=("PolicyDocument", "PolicyName", "Roles"))
def _iam_policy(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    document = {"Version": "2012-10-17", **props["PolicyDocument"]}
    for role in props.get("Roles", []):
        p.client("iam").put_role_policy(
            RoleName=role, PolicyName=props["PolicyName"], PolicyDocument=json.dumps(document)
        )
    p._set(logical_id, logical_id)


@provisions(
    "AWS::Lambda::EventInvokeConfig",
    consumes=(
        "FunctionName",
        "Qualifier",
        "MaximumRetryAttempts",
        "MaximumEventAgeInSeconds",
        "DestinationConfig",
    ),
)
def _lambda_event_invoke_config(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    # Read back by richdoc_tools.local.events, which invokes asynchronously the way Lambda
    # does: the retries, then the OnFailure destination.
    config = {
        key: props[key]
        for key in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds", "DestinationConfig")
        if key in props
    }
    p.client("lambda").put_function_event_invoke_config(
        FunctionName=props["FunctionName"], Qualifier=props.get("Qualifier", "$LATEST"), **config
    )
    p._set(logical_id, logical_id)


_ALARM_PROPERTIES = (
    "AlarmDescription",
    "Namespace",
    "MetricName",
    "Dimensions",
    "Statistic",
    "Period",
    "EvaluationPeriods",
    "Threshold",
    "DatapointsToAlarm",
    "ComparisonOperator",
    "TreatMissingData",
    "AlarmActions",
    "Metrics",
)


@provisions("AWS::CloudWatch::Alarm", consumes=("AlarmName", *_ALARM_PROPERTIES))
def _alarm(p: Provisioner, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("AlarmName") or p.physical_name(logical_id, 255)
    kwargs = {k: props[k] for k in _ALARM_PROPERTIES if k in props}
    for numeric in ("Period", "EvaluationPeriods", "DatapointsToAlarm"):
        if numeric in kwargs:
            kwargs[numeric] = int(kwargs[numeric])
    if "Threshold" in kwargs:
        kwargs["Threshold"] = float(kwargs["Threshold"])
    p.client("cloudwatch").put_metric_alarm(AlarmName=name, **kwargs)
    p._set(logical_id, name, Arn=p.arn("cloudwatch", f"alarm:{name}"))
