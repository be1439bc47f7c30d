"""A run's execution as Step Functions tells it: its description, its history, and the
definition it ran (the console draws and colours the state machine from them). Called
through the module (``executions.describe``, ``executions.history``), as the names
alone say little."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types_boto3_stepfunctions.type_defs import (
        DescribeExecutionOutputTypeDef,
        HistoryEventTypeDef,
    )

    from richdoc_tools.ops.operator import Operator


def describe(operator: Operator, execution_arn: str) -> DescribeExecutionOutputTypeDef:
    return operator.stepfunctions.describe_execution(executionArn=execution_arn)


def history(operator: Operator, execution_arn: str) -> list[HistoryEventTypeDef]:
    """Every event of an execution, oldest first."""
    pages = operator.stepfunctions.get_paginator("get_execution_history").paginate(
        executionArn=execution_arn
    )
    return [event for page in pages for event in page["events"]]


def definition(operator: Operator, execution_arn: str | None = None) -> dict[str, Any]:
    """The state machine definition an execution ran (the stack's current one when no
    execution is given), as deployed."""
    sfn = operator.stepfunctions
    if execution_arn:
        text = sfn.describe_state_machine_for_execution(executionArn=execution_arn)["definition"]
    else:
        text = sfn.describe_state_machine(stateMachineArn=operator.resources.state_machine_arn)[
            "definition"
        ]
    machine: dict[str, Any] = json.loads(text)
    return machine
