"""The IAM permissions each AWS request needs, resolved per request as AWS resolves them
(richdoc_tools.local.strict.permissions)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from richdoc_tools.local.requests.service_request import ServiceRequest
from richdoc_tools.local.strict.permissions import needed

ACCOUNT = "123456789012"
TABLE = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/jobs"


def request(
    service: str,
    operation: str,
    *,
    body: object = None,
    uri: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> ServiceRequest:
    return ServiceRequest(
        service=service,
        operation=operation,
        region="us-east-1",
        access_key_id="ASIAEXAMPLE",
        invocation_id=None,
        method="POST",
        uri_params=uri or {},
        query=query or {},
        body=raw if raw is not None else json.dumps(body or {}).encode(),
    )


def pairs(service_request: ServiceRequest) -> list[tuple[str, str]]:
    return [(p.action, p.resource) for p in needed(service_request, ACCOUNT)]


@pytest.mark.parametrize(
    ("operation", "query", "action"),
    [
        ("GetObject", {}, "s3:GetObject"),
        ("GetObject", {"versionId": "v1"}, "s3:GetObjectVersion"),
        ("HeadObject", {}, "s3:GetObject"),
        ("HeadObject", {"versionId": "v1"}, "s3:GetObjectVersion"),
        ("DeleteObject", {"versionId": "v1"}, "s3:DeleteObjectVersion"),
        ("UploadPart", {"partNumber": "1", "uploadId": "u"}, "s3:PutObject"),
        ("CompleteMultipartUpload", {"uploadId": "u"}, "s3:PutObject"),
    ],
)
def test_s3_object_requests_need_the_action_their_version_makes_them(
    operation: str, query: dict[str, str], action: str
) -> None:
    found = pairs(request("s3", operation, uri={"Bucket": "b", "Key": "a/b c.pdf"}, query=query))
    assert found == [(action, "arn:aws:s3:::b/a/b c.pdf")]


def test_s3_listings_are_on_the_bucket() -> None:
    assert pairs(request("s3", "ListObjectsV2", uri={"Bucket": "b"})) == [
        ("s3:ListBucket", "arn:aws:s3:::b")
    ]
    assert pairs(request("s3", "ListObjectVersions", uri={"Bucket": "b"})) == [
        ("s3:ListBucketVersions", "arn:aws:s3:::b")
    ]


def test_a_copy_needs_put_on_the_target_and_get_on_the_source_its_header_names() -> None:
    """The header as botocore sends it: its name capitalised, its value URL-encoded."""
    copy = request("s3", "CopyObject", uri={"Bucket": "b", "Key": "documents/d/x.json"})
    headers = {"X-Amz-Copy-Source": "b/jobs/j/run-001/a%20b.json"}
    assert pairs(dataclasses.replace(copy, headers=headers)) == [
        ("s3:PutObject", "arn:aws:s3:::b/documents/d/x.json"),
        ("s3:GetObject", "arn:aws:s3:::b/jobs/j/run-001/a b.json"),
    ]
    versioned = {"x-amz-copy-source": "/b/k?versionId=v1"}
    assert pairs(dataclasses.replace(copy, headers=versioned))[1] == (
        "s3:GetObjectVersion",
        "arn:aws:s3:::b/k",
    )


def test_delete_objects_needs_each_keys_delete_on_each_key() -> None:
    body = (
        b'<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        b"<Object><Key>a</Key></Object><Object><Key>b</Key><VersionId>v2</VersionId></Object>"
        b"</Delete>"
    )
    assert pairs(request("s3", "DeleteObjects", uri={"Bucket": "bk"}, raw=body)) == [
        ("s3:DeleteObject", "arn:aws:s3:::bk/a"),
        ("s3:DeleteObjectVersion", "arn:aws:s3:::bk/b"),
    ]


def test_a_transaction_needs_each_items_own_action_on_its_table() -> None:
    body = {
        "TransactItems": [
            {"Update": {"TableName": "jobs", "Key": {}}},
            {"Put": {"TableName": "other", "Item": {}}},
            {"ConditionCheck": {"TableName": "jobs", "Key": {}}},
        ]
    }
    assert pairs(request("dynamodb", "TransactWriteItems", body=body)) == [
        ("dynamodb:UpdateItem", TABLE),
        ("dynamodb:PutItem", f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/other"),
        ("dynamodb:ConditionCheckItem", TABLE),
    ]


def test_a_query_of_an_index_is_on_the_index() -> None:
    body = {"TableName": "jobs", "IndexName": "by-status"}
    assert pairs(request("dynamodb", "Query", body=body)) == [
        ("dynamodb:Query", f"{TABLE}/index/by-status")
    ]
    assert pairs(request("dynamodb", "Query", body={"TableName": "jobs"})) == [
        ("dynamodb:Query", TABLE)
    ]


def test_sqs_batches_need_their_single_action_on_the_queue_the_url_names() -> None:
    url = f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/dead-letters"
    assert pairs(request("sqs", "SendMessageBatch", body={"QueueUrl": url})) == [
        ("sqs:SendMessage", f"arn:aws:sqs:us-east-1:{ACCOUNT}:dead-letters")
    ]


def test_invoke_is_invoke_function_on_the_function_or_its_qualified_arn() -> None:
    assert pairs(request("lambda", "Invoke", uri={"FunctionName": "fn"})) == [
        ("lambda:InvokeFunction", f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:fn")
    ]
    arn = f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:fn"
    qualified = request("lambda", "Invoke", uri={"FunctionName": arn}, query={"Qualifier": "2"})
    assert pairs(qualified) == [("lambda:InvokeFunction", f"{arn}:2")]


def test_step_functions_requests_are_on_the_execution_or_state_machine() -> None:
    arn = f"arn:aws:states:us-east-1:{ACCOUNT}:execution:pipeline:job-r1"
    assert pairs(request("stepfunctions", "DescribeExecution", body={"executionArn": arn})) == [
        ("states:DescribeExecution", arn)
    ]


def test_an_operation_it_does_not_model_is_on_every_resource_never_allowed_by_a_scoped_grant() -> (
    None
):
    assert pairs(request("kms", "Decrypt")) == [("kms:Decrypt", "*")]
    assert pairs(request("sts", "GetCallerIdentity")) == []


EVENTS = f"arn:aws:events:us-east-1:{ACCOUNT}"


def test_a_replay_needs_the_archive_the_bus_and_the_replay_all_three() -> None:
    """The authorization reference lists archive*, event-bus* and replay* for
    StartReplay: a grant on the archive alone does not let anyone replay."""
    start = request(
        "events",
        "StartReplay",
        body={
            "ReplayName": "catch-up",
            "EventSourceArn": f"{EVENTS}:archive/richdoc",
            "Destination": {"Arn": f"{EVENTS}:event-bus/richdoc-bus"},
        },
    )
    assert pairs(start) == [
        ("events:StartReplay", f"{EVENTS}:archive/richdoc"),
        ("events:StartReplay", f"{EVENTS}:event-bus/richdoc-bus"),
        ("events:StartReplay", f"{EVENTS}:replay/catch-up"),
    ]
    assert pairs(request("events", "DescribeReplay", body={"ReplayName": "catch-up"})) == [
        ("events:DescribeReplay", f"{EVENTS}:replay/catch-up")
    ]


def test_rule_operations_are_on_the_rule_of_its_bus_and_listings_on_no_resource() -> None:
    custom = request("events", "PutTargets", body={"Rule": "mine", "EventBusName": "bus"})
    assert pairs(custom) == [("events:PutTargets", f"{EVENTS}:rule/bus/mine")]
    default = request("events", "DescribeRule", body={"Name": "mine"})
    assert pairs(default) == [("events:DescribeRule", f"{EVENTS}:rule/mine")]
    by_arn = request(
        "events", "PutRule", body={"Name": "r", "EventBusName": f"{EVENTS}:event-bus/b"}
    )
    assert pairs(by_arn) == [("events:PutRule", f"{EVENTS}:rule/b/r")]
    # ListRules takes no resource: only a grant of "*" covers it.
    assert pairs(request("events", "ListRules", body={"EventBusName": "bus"})) == [
        ("events:ListRules", "*")
    ]
