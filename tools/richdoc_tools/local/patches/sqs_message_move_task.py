"""SQS message move tasks, refused with a 4xx that says what to do instead.

moto has no ``StartMessageMoveTask``, ``ListMessageMoveTasks`` or
``CancelMessageMoveTask``: its dispatcher raised ``NotImplementedError`` in process, and
``richdoc local serve`` answered ``aws sqs start-message-move-task`` with an HTTP 500
after the CLI's retries (about 11 seconds), which reads as an outage. The embedded stack
does not run move tasks, so it refuses to start or cancel one as SQS refuses an action
it does not support: HTTP 400 ``UnsupportedOperation``, the message naming ``richdoc dlq
redrive``, which on this answer moves the dead-letter queue's messages itself, with the
same effect (each body and its attributes, to the ingest queue:
``richdoc_tools.ops.dead_letter_queue.acting.redrive_all``). ``ListMessageMoveTasks``
answers truthfully that there are none. The canary
(``tests/aws/canaries/test_patch_sqs_message_move_task.py``) fails when a moto upgrade
adds the calls, so that this refusal can give way to them.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, NoReturn

from richdoc_tools.local.patches.target import add

if TYPE_CHECKING:
    from moto.sqs.responses import SQSResponse

START_TARGET = "moto.sqs.responses.SQSResponse.start_message_move_task"
LIST_TARGET = "moto.sqs.responses.SQSResponse.list_message_move_tasks"
CANCEL_TARGET = "moto.sqs.responses.SQSResponse.cancel_message_move_task"
PATCHED = (START_TARGET, LIST_TARGET, CANCEL_TARGET)
ADDED = PATCHED  # moto has none of them

REFUSAL_CODE = "UnsupportedOperation"
REFUSAL = (
    "The embedded stack does not run SQS message move tasks. Move a dead-letter queue's "
    "messages with: richdoc dlq redrive --endpoint-url <this endpoint> (every message, its "
    "body and attributes, to the ingest queue)"
)


def _refuse(self: SQSResponse) -> NoReturn:
    from moto.core.exceptions import AWSError

    raise AWSError(REFUSAL, exception_type=REFUSAL_CODE, status=400)


def _list_message_move_tasks(self: SQSResponse) -> Any:
    from moto.core.responses import ActionResult

    source = self._get_param("SourceArn")
    queue_name = str(source).rsplit(":", 1)[-1]
    self.sqs_backend.get_queue(queue_name)  # QueueDoesNotExist, as SQS answers
    return ActionResult({"Results": []})


def install(exit_stack: contextlib.ExitStack) -> None:
    for target, replacement in (
        (START_TARGET, _refuse),
        (LIST_TARGET, _list_message_move_tasks),
        (CANCEL_TARGET, _refuse),
    ):
        add(exit_stack, target, replacement)
