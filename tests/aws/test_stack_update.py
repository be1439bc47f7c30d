"""The embedded stack's update, as CloudFormation updates a stack (``cloudformation.update``):
a changed property is updated in place when its type's reference says so (a queue keeps
its messages), replaced when it says replacement (a new resource, the old one deleted
after the update), refused when a replacement would keep a custom name; more than one
global secondary index per table update fails the update with CloudFormation's reason,
and everything done before is undone; a resource the template no longer has is deleted,
unless its DeletionPolicy retains it. Every provisioner declares how its type updates and
is deleted."""

from __future__ import annotations

import copy
from typing import Any

import boto3
import pytest
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.deploy import Deployment
from richdoc_tools.local.cloudformation.provisioners import PROVISIONERS
from richdoc_tools.local.cloudformation.provisioners.dynamodb import MORE_THAN_ONE_GSI
from richdoc_tools.local.cloudformation.template import Template, TemplateError
from richdoc_tools.local.cloudformation.update import StackUpdateFailed, update_stack


def _template(template: Template, resources: dict[str, Any]) -> Template:
    cfn = {**copy.deepcopy(template.cfn), "Resources": resources, "Outputs": {}}
    return Template(root=template.root, sam=template.sam, cfn=cfn, handlers={})


def _deployed(template: Template, resources: dict[str, Any]) -> Deployment:
    deployment = Deployment(
        Clients(boto3.Session(), region="us-east-1"),
        _template(template, resources),
        stack_name="upd",
        region="us-east-1",
        account="123456789012",
    )
    deployment.deploy()
    return deployment


def _queue(**props: Any) -> dict[str, Any]:
    return {"Type": "AWS::SQS::Queue", "Properties": {"MessageRetentionPeriod": 1209600, **props}}


def _alarm(threshold: int) -> dict[str, Any]:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "Namespace": "richdoc",
            "MetricName": "Test",
            "Statistic": "Sum",
            "Period": 60,
            "EvaluationPeriods": 1,
            "Threshold": threshold,
            "ComparisonOperator": "GreaterThanThreshold",
        },
    }


def _table(*indexes: str, key: str = "pk", **props: Any) -> dict[str, Any]:
    table: dict[str, Any] = {
        "Type": "AWS::DynamoDB::Table",
        "DeletionPolicy": "Retain",
        "Properties": {
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": "S"} for name in (key, *indexes)
            ],
            "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}],
            **props,
        },
    }
    if indexes:
        table["Properties"]["GlobalSecondaryIndexes"] = [
            {
                "IndexName": name,
                "KeySchema": [{"AttributeName": name, "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
            for name in indexes
        ]
    return table


def _indexes(deployment: Deployment) -> list[str]:
    described = boto3.client("dynamodb").describe_table(TableName=deployment.deployed.refs["Jobs"])
    return [i["IndexName"] for i in described["Table"].get("GlobalSecondaryIndexes", [])]


def test_every_provisioner_declares_how_its_type_updates_and_is_deleted() -> None:
    for resource_type, provisioner in PROVISIONERS.items():
        assert provisioner.delete is not None, resource_type
        # Every property the type knows either updates in place or replaces it.
        known = provisioner.consumes | provisioner.inert | set(provisioner.not_emulated)
        assert provisioner.update is not None or known <= provisioner.replaces, resource_type


def test_a_change_in_place_keeps_the_resource_and_what_it_holds(
    aws: None, template: Template
) -> None:
    deployment = _deployed(template, {"Work": _queue()})
    url = deployment.deployed.refs["Work"]
    sqs = boto3.client("sqs")
    sqs.send_message(QueueUrl=url, MessageBody="kept")
    result = update_stack(
        deployment, _template(template, {"Work": _queue(VisibilityTimeout=120)}), {}
    )
    assert (result.updated, result.replaced) == (["Work"], [])
    assert deployment.deployed.refs["Work"] == url
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "120"
    [message] = sqs.receive_message(QueueUrl=url)["Messages"]
    assert message["Body"] == "kept"


def test_a_replacing_change_makes_a_new_resource_and_deletes_the_old_after(
    aws: None, template: Template
) -> None:
    deployment = _deployed(template, {"Work": _queue(QueueName="work-1")})
    result = update_stack(deployment, _template(template, {"Work": _queue(QueueName="work-2")}), {})
    assert (result.replaced, result.deleted) == (["Work"], ["Work"])
    urls = boto3.client("sqs").list_queues().get("QueueUrls", [])
    assert [u.rsplit("/", 1)[1] for u in urls] == ["work-2"]


def test_a_replacement_that_keeps_a_custom_name_is_refused(aws: None, template: Template) -> None:
    """A key schema change replaces a table; under the same TableName it cannot be."""
    deployment = _deployed(template, {"Jobs": _table(TableName="jobs")})
    rekeyed = _template(template, {"Jobs": _table(key="id", TableName="jobs")})
    with pytest.raises(StackUpdateFailed, match="custom-named resource requires replacing"):
        update_stack(deployment, rekeyed, {})
    assert boto3.client("dynamodb").list_tables()["TableNames"] == ["jobs"]


def test_two_indexes_in_one_update_fail_it_and_everything_done_before_is_undone(
    aws: None, template: Template
) -> None:
    deployment = _deployed(template, {"Alarm": _alarm(1), "Jobs": _table()})
    changed = {
        "Alarm": _alarm(5),
        "Jobs": {**_table("by-queue", "by-lane"), "DependsOn": "Alarm"},  # after the alarm
        "Later": _queue(),
    }
    with pytest.raises(StackUpdateFailed) as failed:
        update_stack(deployment, _template(template, changed), {})
    assert failed.value.logical_id == "Jobs"
    assert failed.value.reason == MORE_THAN_ONE_GSI
    # Rolled back: the alarm as it was, no index, nothing created.
    [alarm] = boto3.client("cloudwatch").describe_alarms()["MetricAlarms"]
    assert alarm["Threshold"] == 1
    assert _indexes(deployment) == []
    assert boto3.client("sqs").list_queues().get("QueueUrls", []) == []
    assert set(deployment.applied) == {"Alarm", "Jobs"}
    # One index per update goes through, as DynamoDB builds them.
    update_stack(deployment, _template(template, {**changed, "Jobs": _table("by-queue")}), {})
    update_stack(deployment, _template(template, changed), {})
    assert _indexes(deployment) == ["by-queue", "by-lane"]


def test_a_removed_resource_is_deleted_unless_its_deletion_policy_retains_it(
    aws: None, template: Template
) -> None:
    deployment = _deployed(template, {"Work": _queue(QueueName="gone"), "Jobs": _table()})
    table = deployment.deployed.refs["Jobs"]
    result = update_stack(deployment, _template(template, {}), {})
    assert (result.deleted, result.retained) == (["Work"], ["Jobs"])
    assert boto3.client("sqs").list_queues().get("QueueUrls", []) == []
    assert boto3.client("dynamodb").list_tables()["TableNames"] == [table]
    assert deployment.applied == {}


def test_a_parameter_the_template_refuses_stops_the_update_before_it_starts(
    aws: None, template: Template
) -> None:
    deployment = _deployed(template, {"Work": _queue()})
    with pytest.raises(TemplateError, match="WebhookUrl"):
        update_stack(
            deployment,
            _template(template, {"Work": _queue(VisibilityTimeout=5)}),
            {"WebhookUrl": "http://example.com/"},
        )
    attributes = boto3.client("sqs").get_queue_attributes(
        QueueUrl=deployment.deployed.refs["Work"], AttributeNames=["VisibilityTimeout"]
    )
    assert attributes["Attributes"]["VisibilityTimeout"] == "30"


def test_an_update_that_changes_only_resources_is_published_and_an_unchanged_one_refused(
    aws: None, template: Template
) -> None:
    """The stack's published outputs and parameters stay the same when only a resource (or
    a function's code) changes: it is still an update, as the packaged template differs.
    The same template and parameters again are refused as CloudFormation refuses them."""
    deployment = _deployed(template, {"Work": _queue()})
    deployment.publish({}, updated=False)
    changed = _template(template, {"Work": _queue(VisibilityTimeout=120)})
    update_stack(deployment, changed, {})
    deployment.publish({}, updated=True)
    cloudformation = boto3.client("cloudformation")
    [stack] = cloudformation.describe_stacks(StackName="upd")["Stacks"]
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    with pytest.raises(cloudformation.exceptions.ClientError, match="No updates are to be"):
        deployment.publish({}, updated=True)
