"""Canary: GetTemplate is answered by one backend method, given the stack's name or id
(patches.stack_templates)."""

from __future__ import annotations

import contextlib
import json

import boto3
from richdoc_tools.local.patches import stack_templates

PLACEHOLDER = {"Resources": {"Outputs": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}}


def test_get_template_answers_the_deployed_template_of_the_embedded_stack_only(
    aws: None,
) -> None:
    cfn = boto3.client("cloudformation")
    for name in ("richdoc", "other"):
        cfn.create_stack(StackName=name, TemplateBody=json.dumps(PLACEHOLDER))
    with contextlib.ExitStack() as exit_stack:
        stack_templates.install(exit_stack, {"richdoc": "Resources: {}\n"}.get)
        body: object = cfn.get_template(StackName="richdoc", TemplateStage="Original")[
            "TemplateBody"
        ]
        assert body == "Resources: {}\n"
        assert cfn.get_template(StackName="other")["TemplateBody"] == PLACEHOLDER
    assert cfn.get_template(StackName="richdoc")["TemplateBody"] == PLACEHOLDER  # moto's own
