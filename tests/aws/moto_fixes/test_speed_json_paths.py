"""moto_fixes.speed.json_paths: each JSONPath of a definition parsed once, where moto's
interpreter parses it at every evaluation, in two modules; executions read their paths
alike."""

from __future__ import annotations

import contextlib
import json
import pkgutil
import time
from typing import Any

import boto3
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.speed import json_paths
from richdoc_tools.local.patch_targets import original

DEFINITION = {
    "StartAt": "Shape",
    "States": {
        "Shape": {
            "Type": "Pass",
            "InputPath": "$.source",
            "Parameters": {"name.$": "$.key", "where.$": "$.bucket"},
            "ResultPath": "$.shaped",
            "OutputPath": "$.shaped",
            "End": True,
        }
    },
}


def test_both_modules_of_moto_parse_paths_with_jsonpath_ng() -> None:
    assert original(json_paths.EXTRACT) is pkgutil.resolve_name("jsonpath_ng.ext.parser.parse")
    assert original(json_paths.RESULT) is pkgutil.resolve_name("jsonpath_ng.parser.parse")


def _run(sfn: Any, name: str) -> Any:
    machine = sfn.create_state_machine(
        name=name, definition=json.dumps(DEFINITION), roleArn="arn:aws:iam::123456789012:role/r"
    )["stateMachineArn"]
    source = {"source": {"key": f"{name}.pdf", "bucket": "b"}}
    arn = sfn.start_execution(stateMachineArn=machine, input=json.dumps(source))["executionArn"]
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return json.loads(described["output"])


def test_with_the_patch_each_path_is_parsed_once_and_evaluates_as_before() -> None:
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        assert _run(sfn, "plain") == {"name": "plain.pdf", "where": "b"}
        json_paths.install(exit_stack)
        parse = pkgutil.resolve_name(json_paths.EXTRACT)  # as moto's module names it now
        assert parse("$.key") is parse("$.key")
        for name in ("first", "second"):
            assert _run(sfn, name) == {"name": f"{name}.pdf", "where": "b"}
