"""RedriveExecution is answered as Step Functions answers an execution it will not redrive.

What moto does: it has no RedriveExecution. In process its dispatcher raises
``NotImplementedError``; served, it answers a bare HTTP 500 (what ``aws stepfunctions
redrive-execution`` got from ``richdoc local serve``).

What AWS does: it restarts a failed, aborted or timed-out Standard execution at the
state that failed, and refuses any other with HTTP 400 ``ExecutionNotRedrivable``; an
execution that does not exist is ``ExecutionDoesNotExist`` (RedriveExecution:
https://docs.aws.amazon.com/step-functions/latest/apireference/API_RedriveExecution.html).

The fix answers as AWS answers an execution it will not redrive, for every execution:
moto's interpreter cannot resume an ended execution at the state that failed (its program
state is gone once it ends), so a failed, aborted or timed-out execution is refused too,
its message saying what to do instead (``richdoc jobs redrive`` starts the job's next
run; docs/embedded-stack.md lists this among what the stack cannot do).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, NoReturn

from richdoc_tools.local.patch_targets import add

if TYPE_CHECKING:
    from moto.stepfunctions.responses import StepFunctionResponse

TARGET = "moto.stepfunctions.responses.StepFunctionResponse.redrive_execution"
PATCHED = (TARGET,)
ADDED = (TARGET,)  # moto has none

# What Step Functions says for the statuses it never redrives (DescribeExecution's
# redriveStatusReason has the same sentences).
NEVER_REDRIVEN = ("RUNNING", "SUCCEEDED")


def _not_redrivable(message: str) -> Exception:
    from moto.core.exceptions import AWSError

    return AWSError(message, exception_type="ExecutionNotRedrivable", status=400)


def refusal(status: str, execution_arn: str) -> str:
    """Why an execution in ``status`` is not redriven here."""
    if status in NEVER_REDRIVEN:
        return f"Execution is {status} and cannot be redriven."
    name = execution_arn.rsplit(":", 1)[-1]
    job_id = name.rsplit("-r", 1)[0]
    return (
        f"Execution is {status}: the embedded stack cannot redrive executions (its "
        "interpreter cannot resume one at the state that failed). Start the job's next "
        f"run instead: richdoc jobs redrive {job_id}"
    )


def _redrive_execution(self: StepFunctionResponse) -> NoReturn:
    arn = self._get_param("executionArn")
    execution = self.stepfunction_backend.describe_execution(arn)  # or ExecutionDoesNotExist
    raise _not_redrivable(refusal(str(execution.status), arn))


def install(exit_stack: contextlib.ExitStack) -> None:
    add(exit_stack, TARGET, _redrive_execution)
