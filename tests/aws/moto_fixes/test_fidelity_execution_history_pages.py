"""moto_fixes.fidelity.execution_history_pages: GetExecutionHistory answers in pages, in
either order, with ``nextToken``, and refuses a token it did not give, as Step Functions
does. Stock moto answers every event, oldest first, whatever reverseOrder and
maxResults say."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.fidelity import execution_history_pages

from tests.support.moto_fixes import moto_differs

DEFINITION = {
    "StartAt": "One",
    "States": {"One": {"Type": "Pass", "Next": "Two"}, "Two": {"Type": "Pass", "End": True}},
}


@pytest.fixture
def execution(aws: None) -> Iterator[tuple[Any, str]]:
    with mock_aws(config=MOTO_CONFIG):
        sfn = boto3.client("stepfunctions")
        machine = sfn.create_state_machine(
            name="m", definition=json.dumps(DEFINITION), roleArn="arn:aws:iam::123456789012:role/r"
        )["stateMachineArn"]
        arn = sfn.start_execution(stateMachineArn=machine, name="e", input="{}")["executionArn"]
        deadline = time.monotonic() + 30
        while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        yield sfn, arn


@moto_differs("answers every event, oldest first, whatever the order and page size asked")
def test_stock_moto_answers_one_page_newest_first(execution: tuple[Any, str]) -> None:
    sfn, arn = execution
    page = sfn.get_execution_history(executionArn=arn, reverseOrder=True, maxResults=1)
    assert [event["type"] for event in page["events"]] == ["ExecutionSucceeded"]
    assert "nextToken" in page


def test_with_the_fix_the_history_comes_in_pages_in_the_order_asked(
    execution: tuple[Any, str],
) -> None:
    sfn, arn = execution
    with contextlib.ExitStack() as exit_stack:
        execution_history_pages.install(exit_stack)
        everything = sfn.get_execution_history(executionArn=arn)["events"]
        assert everything[0]["type"] == "ExecutionStarted" and len(everything) >= 5
        [newest] = sfn.get_execution_history(executionArn=arn, reverseOrder=True, maxResults=1)[
            "events"
        ]
        assert newest == everything[-1]
        pages, token = [], None
        while True:
            kwargs: dict[str, Any] = {"nextToken": token} if token else {}
            page = sfn.get_execution_history(
                executionArn=arn, reverseOrder=True, maxResults=2, **kwargs
            )
            pages.append(page["events"])
            token = page.get("nextToken")
            if token is None:
                break
        assert [e for p in pages for e in p] == list(reversed(everything))
        assert all(len(p) == 2 for p in pages[:-1])
        paginated = sfn.get_paginator("get_execution_history").paginate(
            executionArn=arn, PaginationConfig={"PageSize": 3}
        )
        assert [e for p in paginated for e in p["events"]] == everything
        with pytest.raises(ClientError) as refused:
            sfn.get_execution_history(executionArn=arn, maxResults=2, nextToken=token or "x")
        assert refused.value.response["Error"]["Code"] == "InvalidToken"
