"""The provisioner deploys exactly what it declares: a template property or resource
attribute that no provisioner consumes, calls inert or calls not emulated fails the
deployment with a message that says what to declare."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
import pytest
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.deploy import Deployment
from richdoc_tools.local.cloudformation.provisioners import PROVISIONERS, NotEmulated
from richdoc_tools.local.cloudformation.template import Template, TemplateError


def _deploy(
    template: Template, resources: dict[str, Any], conditions: dict[str, Any] | None = None
) -> Deployment:
    cfn = {**copy.deepcopy(template.cfn), "Resources": resources, "Outputs": {}}
    if conditions is not None:
        cfn["Conditions"] = conditions
    deployment = Deployment(
        Clients(boto3.Session(), region="us-east-1"),
        Template(root=template.root, sam=template.sam, cfn=cfn, handlers={}),
        stack_name="unit",
        region="us-east-1",
        account="123456789012",
    )
    deployment.deploy()
    return deployment


def test_every_property_of_the_template_is_declared(template: Template) -> None:
    for logical_id, resource in template.resources.items():
        PROVISIONERS[resource["Type"]].check(logical_id, resource)  # raises when undeclared


def test_a_template_property_nobody_handles_fails_the_deployment(
    aws: None, template: Template
) -> None:
    queue = copy.deepcopy(template.resources["DeadLetterQueue"])
    queue["Properties"]["KmsMasterKeyId"] = "alias/richdoc"
    with pytest.raises(TemplateError) as error:
        _deploy(template, {"DeadLetterQueue": queue})
    message = str(error.value)
    assert message.startswith("DeadLetterQueue: AWS::SQS::Queue property KmsMasterKeyId ")
    where = "@provisions('AWS::SQS::Queue', ...) in "
    where += "tools/richdoc_tools/local/cloudformation/provisioners/sqs.py:"
    assert where in message
    assert "consumes=" in message and "inert=" in message and "not_emulated=" in message


def _parse_function(template: Template) -> dict[str, Any]:
    """The template's tier-1 parse function, standing alone with a role of its own."""
    role = boto3.client("iam").create_role(
        RoleName="standalone-function",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]
    function: dict[str, Any] = copy.deepcopy(template.resources["ParseTier1Function"])
    props = function["Properties"]
    props["Role"] = role["Arn"]
    props["Environment"] = {"Variables": {"POWERTOOLS_SERVICE_NAME": "parse"}}
    # Its log group and reserved concurrency reference other resources and parameters.
    props.pop("LoggingConfig", None)
    props.pop("ReservedConcurrentExecutions", None)
    return function


def test_a_function_that_gains_an_undeclared_property_fails_the_deployment(
    aws: None, template: Template
) -> None:
    function = _parse_function(template)
    function["Properties"]["SnapStart"] = {"ApplyOn": "PublishedVersions"}
    with pytest.raises(
        TemplateError,
        match="ParseTier1Function: AWS::Lambda::Function property SnapStart",
    ):
        _deploy(template, {"ParseTier1Function": function})


def test_a_resource_whose_condition_is_false_is_not_created(aws: None, template: Template) -> None:
    queue = {**copy.deepcopy(template.resources["DeadLetterQueue"]), "Condition": "Never"}
    never = {"Fn::Equals": ["a", "b"]}
    conditions = {**template.cfn.get("Conditions", {}), "Never": never}
    deployment = _deploy(template, {"DeadLetterQueue": queue}, conditions=conditions)
    assert "DeadLetterQueue" not in deployment.deployed.refs


def test_declared_but_not_emulated_properties_are_reported(aws: None, template: Template) -> None:
    deployment = _deploy(template, {"ParseTier1Function": _parse_function(template)})
    assert deployment.not_emulated == [
        NotEmulated(
            "ParseTier1Function",
            "Architectures",
            "handlers run on this machine's CPU, in this process",
        )
    ]
