"""A stack's outputs as an operator finds them (``StackResources.from_outputs``), for tests
that run operator commands against tables and buckets of their own in moto."""

from __future__ import annotations

import json

import boto3

ACCOUNT_ARN = "arn:aws:{service}:us-east-1:123456789012:{name}"
QUEUE_URL = "https://sqs.us-east-1.amazonaws.com/123456789012/{name}"


def stack_outputs(jobs_table: str, **more: str) -> dict[str, str]:
    """The outputs of a stack whose ingest bucket is ``ingest``, its results bucket
    ``results``, and its jobs table ``jobs_table`` (``more`` adds or replaces outputs)."""
    return {
        "IngestBucketName": "ingest",
        "ArtifactBucketName": "results",
        "IngestQueueUrl": QUEUE_URL.format(name="ingest"),
        "IngestQueueArn": ACCOUNT_ARN.format(service="sqs", name="ingest"),
        "DeadLetterQueueUrl": QUEUE_URL.format(name="dlq"),
        "DeadLetterQueueArn": ACCOUNT_ARN.format(service="sqs", name="dlq"),
        "JobsTableName": jobs_table,
        "StateMachineArn": ACCOUNT_ARN.format(service="states", name="stateMachine:richdoc"),
        **more,
    }


def create_stack(name: str, outputs: dict[str, str]) -> None:
    """A CloudFormation stack (in moto) with these outputs, for ``--stack NAME``."""
    template = {
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName=name, TemplateBody=json.dumps(template)
    )
