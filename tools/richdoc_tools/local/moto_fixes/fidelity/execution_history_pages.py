"""GetExecutionHistory answers in pages and in either order.

What moto does: its GetExecutionHistory answers every event, oldest first, whatever
``reverseOrder`` and ``maxResults`` say, and never a ``nextToken``: ``aws stepfunctions
get-execution-history --reverse-order --max-results 1`` against ``richdoc local serve``
printed the whole history from the start, and a paginator's code path was never run
locally.

What AWS does: at most ``maxResults`` events a call ("The default is 100 and the maximum
allowed page size is 1000. A value of 0 uses the default"), with a ``nextToken`` when more
follow, newest first with ``reverseOrder``; a token it did not give is refused with HTTP
400 ``InvalidToken`` (GetExecutionHistory:
https://docs.aws.amazon.com/step-functions/latest/apireference/API_GetExecutionHistory.html).

The fix pages and orders moto's history, with a token that names the execution, the
order and the offset.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import replace

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.stepfunctions.responses import StepFunctionResponse

TARGET = "moto.stepfunctions.responses.StepFunctionResponse.get_execution_history"
PATCHED = (TARGET,)

DEFAULT_PAGE = 100
LARGEST_PAGE = 1000


def _token(execution_arn: str, reverse: bool, offset: int) -> str:
    data = json.dumps({"arn": execution_arn, "reverse": reverse, "offset": offset})
    return base64.urlsafe_b64encode(data.encode()).decode("ascii")


def _offset(token: str, execution_arn: str, reverse: bool) -> int:
    from moto.stepfunctions.exceptions import InvalidToken

    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
        offset = int(data["offset"])
    except (binascii.Error, ValueError, KeyError, TypeError, UnicodeError) as exc:
        raise InvalidToken() from exc
    if data.get("arn") != execution_arn or data.get("reverse") != reverse or offset < 0:
        raise InvalidToken("the token was not given for this execution and order")
    return offset


def page(
    events: list[dict[str, Any]],
    execution_arn: str,
    *,
    reverse: bool,
    max_results: int,
    next_token: str | None,
) -> dict[str, Any]:
    """One page of an execution's history, as GetExecutionHistory answers it."""
    from moto.stepfunctions.exceptions import ValidationException

    if not 0 <= max_results <= LARGEST_PAGE:
        raise ValidationException(
            f"1 validation error detected: Value '{max_results}' at 'maxResults' failed to "
            f"satisfy constraint: Member must have value less than or equal to {LARGEST_PAGE}"
        )
    ordered = list(reversed(events)) if reverse else list(events)
    size = max_results or DEFAULT_PAGE
    start = _offset(next_token, execution_arn, reverse) if next_token else 0
    answer: dict[str, Any] = {"events": ordered[start : start + size]}
    if start + size < len(ordered):
        answer["nextToken"] = _token(execution_arn, reverse, start + size)
    return answer


def get_execution_history(self: StepFunctionResponse) -> ActionResult:
    from moto.core.responses import ActionResult

    arn = self._get_param("executionArn")
    history = self.stepfunction_backend.get_execution_history(arn)
    return ActionResult(
        page(
            list(history["events"]),
            arn,
            reverse=bool(self._get_param("reverseOrder", False)),
            max_results=int(self._get_param("maxResults", 0) or 0),
            next_token=self._get_param("nextToken"),
        )
    )


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, get_execution_history)
