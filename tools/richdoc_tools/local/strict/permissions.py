"""The IAM permissions one AWS request needs: its actions and resources, resolved per
request the way each service's "Actions, resources, and condition keys" page (Service
Authorization Reference) defines them.

Most operations need the action of their own name on the resource they name. The ones
that do not, for the services the pipeline uses:

* S3: a GET or HEAD with ``versionId`` needs ``s3:GetObjectVersion`` (HeadObject, like
  GetObject, needs ``s3:GetObject``), GetObjectTagging with it
  ``s3:GetObjectVersionTagging``; a DELETE with ``versionId`` ``s3:DeleteObjectVersion``;
  DeleteObjects needs the delete action of each key it lists, on each key;
  ListObjects(V2) and HeadBucket ``s3:ListBucket`` and ListObjectVersions
  ``s3:ListBucketVersions`` on the bucket; a multipart upload's parts ``s3:PutObject``;
  CopyObject ``s3:PutObject`` on the target and ``s3:GetObject`` (or ``...Version``) on
  the source.
* DynamoDB: TransactWriteItems needs, per item, the action of its kind (Put, Update,
  Delete, ConditionCheck: ``dynamodb:PutItem``, ``UpdateItem``, ``DeleteItem``,
  ``ConditionCheckItem``) on that item's table; TransactGetItems ``dynamodb:GetItem`` per
  item; a Query or Scan of an index is on the index's ARN (``table/T/index/I``).
* SQS: the batch operations need their single action (``sqs:SendMessage`` for
  SendMessageBatch, ...) on the queue; a queue URL names the queue's ARN.
* Lambda: Invoke is ``lambda:InvokeFunction``; a qualified name is on the qualified ARN.
* Step Functions (``states:``): executions' operations are on the execution's ARN.
* DynamoDB Streams (``dynamodb:``): on the stream's ARN, which GetRecords reads from the
  shard iterator it is given.
* EventBridge: PutEvents needs ``events:PutEvents`` on the bus of each entry (the
  account's ``default`` bus when an entry names none); StartReplay on the archive, the
  bus it replays into and the replay, all three; CreateArchive on the archive and its
  bus; a rule's operations on the rule (``rule/NAME`` on the default bus,
  ``rule/BUS/NAME`` on another); the List operations and TestEventPattern on no
  resource, so only ``*`` grants them.

An operation not listed is resolved to its own action on the resource it names, or ``*``:
a permission granted on a specific resource then does not cover it (a denial, never a
silent allow).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlparse

from richdoc_tools.local.requests.service_request import ServiceRequest
from richdoc_tools.local.strict.policies import AuthorizationRequest

# boto3's service name -> the IAM action prefix.
PREFIXES = {"stepfunctions": "states", "lambda": "lambda", "dynamodbstreams": "dynamodb"}
# Operations any principal may call (no IAM permission is needed).
UNAUTHORIZED = frozenset({("sts", "GetCallerIdentity")})


def needed(request: ServiceRequest, account: str) -> list[AuthorizationRequest]:
    """The permissions ``request`` needs, every one of them (empty: none)."""
    if (request.service, request.operation) in UNAUTHORIZED:
        return []
    resolve = _RESOLVERS.get(request.service, _generic)
    return [
        AuthorizationRequest(action=action, resource=resource)
        for action, resource in resolve(request, account)
    ]


Needed = Iterator[tuple[str, str]]


def _prefix(service: str) -> str:
    return PREFIXES.get(service, service)


def _generic(request: ServiceRequest, account: str) -> Needed:
    yield f"{_prefix(request.service)}:{request.operation}", "*"


# ---- S3 ---------------------------------------------------------------------------------

S3_BUCKET_ACTIONS = {
    "ListObjects": "s3:ListBucket",
    "ListObjectsV2": "s3:ListBucket",
    "HeadBucket": "s3:ListBucket",
    "ListObjectVersions": "s3:ListBucketVersions",
    "ListMultipartUploads": "s3:ListBucketMultipartUploads",
}
S3_PUT_PARTS = frozenset(
    {"PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"}
)


def _s3(request: ServiceRequest, account: str) -> Needed:
    params = request.params
    bucket = str(params.get("Bucket", ""))
    bucket_arn = f"arn:aws:s3:::{bucket}"
    key = params.get("Key")
    object_arn = f"{bucket_arn}/{key}"
    version = request.query.get("versionId")
    operation = request.operation
    if operation in S3_BUCKET_ACTIONS:
        yield S3_BUCKET_ACTIONS[operation], bucket_arn
    elif operation in ("GetObject", "HeadObject"):
        yield ("s3:GetObjectVersion" if version else "s3:GetObject"), object_arn
    elif operation == "GetObjectTagging":
        yield ("s3:GetObjectVersionTagging" if version else "s3:GetObjectTagging"), object_arn
    elif operation == "DeleteObject":
        yield ("s3:DeleteObjectVersion" if version else "s3:DeleteObject"), object_arn
    elif operation == "DeleteObjects":
        for each_key, each_version in request.deleted_objects():
            action = "s3:DeleteObjectVersion" if each_version else "s3:DeleteObject"
            yield action, f"{bucket_arn}/{each_key}"
    elif operation in S3_PUT_PARTS:
        yield "s3:PutObject", object_arn
    elif operation == "CopyObject":
        yield "s3:PutObject", object_arn
        # The header's name in any case, its value URL-encoded (as botocore sends it).
        copied = (v for k, v in request.headers.items() if k.lower() == "x-amz-copy-source")
        source = unquote(next(copied, "")).lstrip("/")
        path, _, version_query = source.partition("?versionId=")
        yield ("s3:GetObjectVersion" if version_query else "s3:GetObject"), f"arn:aws:s3:::{path}"
    elif operation == "ListParts":
        yield "s3:ListMultipartUploadParts", object_arn
    elif key is not None:
        yield f"s3:{operation}", object_arn
    elif bucket:
        yield f"s3:{operation}", bucket_arn
    else:
        yield f"s3:{operation}", "*"


# ---- DynamoDB ---------------------------------------------------------------------------

TRANSACT_WRITE_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}


def _table_arn(request: ServiceRequest, account: str, table: str) -> str:
    if table.startswith("arn:"):
        return table
    return f"arn:aws:dynamodb:{request.region}:{account}:table/{table}"


def _dynamodb(request: ServiceRequest, account: str) -> Needed:
    params: dict[str, Any] = request.params
    operation = request.operation
    if operation == "TransactWriteItems":
        for item in params.get("TransactItems", []):
            for kind, spec in item.items():
                yield TRANSACT_WRITE_ACTIONS[kind], _table_arn(request, account, spec["TableName"])
    elif operation == "TransactGetItems":
        for item in params.get("TransactItems", []):
            table = item["Get"]["TableName"]
            yield "dynamodb:GetItem", _table_arn(request, account, table)
    elif operation in ("BatchWriteItem", "BatchGetItem"):
        for table in params.get("RequestItems", {}):
            yield f"dynamodb:{operation}", _table_arn(request, account, table)
    elif "TableName" in params:
        arn = _table_arn(request, account, str(params["TableName"]))
        if operation in ("Query", "Scan") and params.get("IndexName"):
            arn = f"{arn}/index/{params['IndexName']}"
        yield f"dynamodb:{operation}", arn
    else:
        yield f"dynamodb:{operation}", "*"


# ---- SQS --------------------------------------------------------------------------------

SQS_BATCH_ACTIONS = {
    "SendMessageBatch": "sqs:SendMessage",
    "DeleteMessageBatch": "sqs:DeleteMessage",
    "ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
}


def _sqs(request: ServiceRequest, account: str) -> Needed:
    params = request.params
    action = SQS_BATCH_ACTIONS.get(request.operation, f"sqs:{request.operation}")
    if "QueueUrl" in params:
        path = urlparse(str(params["QueueUrl"])).path.strip("/").split("/")
        owner, name = (path[0], path[-1]) if len(path) >= 2 else (account, path[-1])
        yield action, f"arn:aws:sqs:{request.region}:{owner}:{name}"
    elif "QueueName" in params:
        owner = str(params.get("QueueOwnerAWSAccountId") or account)
        yield action, f"arn:aws:sqs:{request.region}:{owner}:{params['QueueName']}"
    else:
        yield action, "*"


# ---- Lambda -----------------------------------------------------------------------------


def _function_arn(request: ServiceRequest, account: str, name: str, qualifier: str | None) -> str:
    if name.startswith("arn:"):
        arn = name
    elif ":function:" in name:  # a partial ARN: <account>:function:<name>
        arn = f"arn:aws:lambda:{request.region}:{name}"
    else:
        arn = f"arn:aws:lambda:{request.region}:{account}:function:{name}"
    return f"{arn}:{qualifier}" if qualifier and arn.count(":") == 6 else arn


def _lambda(request: ServiceRequest, account: str) -> Needed:
    action = (
        "lambda:InvokeFunction"
        if request.operation == "Invoke"
        else (f"lambda:{request.operation}")
    )
    name = request.uri_params.get("FunctionName")
    if name is None:
        yield action, "*"
        return
    yield action, _function_arn(request, account, name, request.query.get("Qualifier"))


# ---- Step Functions ---------------------------------------------------------------------


def _states(request: ServiceRequest, account: str) -> Needed:
    params = request.params
    action = f"states:{request.operation}"
    for name in ("executionArn", "stateMachineArn", "activityArn", "mapRunArn"):
        if name in params:
            yield action, str(params[name])
            return
    yield action, "*"


# ---- DynamoDB Streams -------------------------------------------------------------------


def _dynamodb_streams(request: ServiceRequest, account: str) -> Needed:
    params = request.params
    action = f"dynamodb:{request.operation}"
    if "StreamArn" in params:
        yield action, str(params["StreamArn"])
    elif "ShardIterator" in params:
        # An iterator names its stream: "<stream ARN>|<shard>|<position>".
        yield action, str(params["ShardIterator"]).split("|", 1)[0]
    else:
        yield action, "*"


# ---- EventBridge ------------------------------------------------------------------------

# Operations authorized on the rule they name (``rule/NAME`` on the default bus,
# ``rule/BUS/NAME`` on another).
EVENTS_RULE_OPERATIONS = frozenset(
    {
        "PutRule",
        "DeleteRule",
        "DescribeRule",
        "EnableRule",
        "DisableRule",
        "PutTargets",
        "RemoveTargets",
        "ListTargetsByRule",
    }
)
# Operations authorized on no resource at all: only a grant of "*" covers them.
EVENTS_RESOURCE_LESS = frozenset(
    {
        "ListRules",
        "ListEventBuses",
        "ListArchives",
        "ListReplays",
        "ListRuleNamesByTarget",
        "ListApiDestinations",
        "ListConnections",
        "TestEventPattern",
    }
)


def _events_arn(request: ServiceRequest, account: str, kind: str, name: str) -> str:
    if name.startswith("arn:"):
        return name
    return f"arn:aws:events:{request.region}:{account}:{kind}/{name}"


def _bus_name(bus: str) -> str:
    return bus.rsplit("/", 1)[-1] if bus.startswith("arn:") else bus


def _events(request: ServiceRequest, account: str) -> Needed:
    params: dict[str, Any] = request.params
    operation = request.operation
    action = f"events:{operation}"

    def arn(kind: str, name: str) -> str:
        return _events_arn(request, account, kind, name)

    if operation == "PutEvents":
        for entry in params.get("Entries", []):
            yield action, arn("event-bus", str(entry.get("EventBusName") or "default"))
    elif operation == "StartReplay":
        # The archive replayed, the bus it is replayed into, and the replay itself.
        yield action, str(params["EventSourceArn"])
        yield action, arn("event-bus", str(params["Destination"]["Arn"]))
        yield action, arn("replay", str(params["ReplayName"]))
    elif operation in ("DescribeReplay", "CancelReplay"):
        yield action, arn("replay", str(params["ReplayName"]))
    elif operation == "CreateArchive":
        yield action, arn("archive", str(params["ArchiveName"]))
        yield action, arn("event-bus", str(params["EventSourceArn"]))
    elif operation in ("DescribeArchive", "UpdateArchive", "DeleteArchive"):
        yield action, arn("archive", str(params["ArchiveName"]))
    elif operation in ("DescribeEventBus", "CreateEventBus", "DeleteEventBus"):
        yield action, arn("event-bus", str(params.get("Name") or "default"))
    elif operation in EVENTS_RULE_OPERATIONS:
        rule = str(params.get("Name") or params.get("Rule"))
        bus = _bus_name(str(params.get("EventBusName") or "default"))
        yield action, arn("rule", rule if bus == "default" else f"{bus}/{rule}")
    elif operation in EVENTS_RESOURCE_LESS:
        yield action, "*"
    else:
        yield from _generic(request, account)


_RESOLVERS: dict[str, Callable[[ServiceRequest, str], Needed]] = {
    "s3": _s3,
    "dynamodb": _dynamodb,
    "sqs": _sqs,
    "lambda": _lambda,
    "stepfunctions": _states,
    "dynamodbstreams": _dynamodb_streams,
    "events": _events,
}
