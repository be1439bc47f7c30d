"""Single template resources created in moto, for tests that need one table or queue
rather than the whole embedded stack."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import boto3
import pytest
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.deploy import Deployment
from richdoc_tools.local.cloudformation.provisioners import PROVISIONERS
from richdoc_tools.local.cloudformation.template import Template

REGION = "us-east-1"


def provision_one(template: Template, logical_id: str) -> Any:
    """Create a single resource of the template (its properties must not reference others)."""
    deployment = Deployment(
        Clients(boto3.Session(), region=REGION),
        template,
        stack_name="unit",
        region=REGION,
        account="123456789012",
    )
    resource = template.resources[logical_id]
    props = deployment.resolver.resolve(resource.get("Properties", {}))
    PROVISIONERS[resource["Type"]](deployment, logical_id, props)
    return deployment.deployed.refs[logical_id]


@contextlib.contextmanager
def executing_state_machines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto with its Step Functions interpreter running executions, and throwaway
    credentials."""
    from moto import mock_aws

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        yield


def state_machine(definition: Mapping[str, Any], name: str = "m") -> str:
    """A state machine of ``definition`` (and a role for it) in the current emulation;
    its ARN."""
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName=f"{name}-role", AssumeRolePolicyDocument="{}")["Role"]
    sfn = boto3.client("stepfunctions", region_name=REGION)
    created = sfn.create_state_machine(
        name=name, definition=json.dumps(definition), roleArn=role["Arn"]
    )
    return created["stateMachineArn"]


def table_with_stream(name: str = "t", *, sort_key: str | None = None) -> str:
    """A table keyed by ``pk`` (and ``sort_key``, a string, when given) whose stream
    carries old and new images; its stream ARN."""
    keys: list[tuple[str, Literal["HASH", "RANGE"]]] = [("pk", "HASH")]
    if sort_key:
        keys.append((sort_key, "RANGE"))
    created = boto3.client("dynamodb", region_name=REGION).create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key, _ in keys],
        KeySchema=[{"AttributeName": key, "KeyType": kind} for key, kind in keys],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    return str(created["TableDescription"]["LatestStreamArn"])
