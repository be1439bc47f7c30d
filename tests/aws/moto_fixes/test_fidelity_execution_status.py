"""moto_fixes.fidelity.execution_status: an execution that StartExecution is still
starting is listed RUNNING, as Step Functions lists an execution from the moment it
exists. Stock moto creates the execution (listed at once) with no status, sets RUNNING a
moment later, and a ListExecutions in between fails."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import boto3
import pytest
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import execution_status

from tests.support.moto_fixes import moto_differs

PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
ROLE = "arn:aws:iam::123456789012:role/sfn"


@pytest.fixture
def sfn(aws: None) -> Iterator[Any]:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _listed_while_starting(sfn: Any) -> list[tuple[str, str]]:
    """The state machine's executions as ListExecutions answers while StartExecution is
    starting one: in the moment between moto creating it and giving it its status (the
    listing is made from moto's hook in that moment, so it waits for nothing)."""
    from moto.stepfunctions.parser.backend.execution import Execution

    machine = sfn.create_state_machine(name="m", definition=json.dumps(PASS), roleArn=ROLE)[
        "stateMachineArn"
    ]
    listed: list[tuple[str, str]] = []
    build: Callable[[Execution], Any] = Execution._get_start_execution_worker

    def listing_first(execution: Execution) -> Any:
        answer = sfn.list_executions(stateMachineArn=machine)["executions"]
        listed.extend((e["name"], e["status"]) for e in answer)
        return build(execution)

    with mock.patch.object(Execution, "_get_start_execution_worker", listing_first):
        sfn.start_execution(stateMachineArn=machine, name="e", input="{}")
    return listed


@moto_differs("fails a listing of an execution it is still starting", raises=AttributeError)
def test_stock_moto_lists_an_execution_it_is_starting_as_running(sfn: Any) -> None:
    assert _listed_while_starting(sfn) == [("e", "RUNNING")]


def test_with_the_fix_an_execution_being_started_is_listed_running(sfn: Any) -> None:
    with contextlib.ExitStack() as exit_stack:
        execution_status.install(exit_stack)
        assert _listed_while_starting(sfn) == [("e", "RUNNING")]
