"""Every message that arrives on a queue wakes the queues' pollers
(``runtime.sqs_messages.messages_sent``).

Lambda's SQS event source long-polls its queue on AWS; here a poller that found nothing
sleeps until a message arrives (or, at the latest, its interval), instead of receiving 20
times a second: polling made its cost grow with the time a run takes, not with its
messages. Every message reaches a queue through moto's ``Queue.add_message``, however it
comes: a SendMessage (from an operator, a handler, the state machine, S3's
notifications; a SendMessageBatch sends each entry through it), a redrive policy moving
it to a dead-letter queue, a message move task.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.runtime.sqs_messages import messages_sent

if TYPE_CHECKING:
    from moto.sqs.models import Message, Queue

TARGET = "moto.sqs.models.Queue.add_message"
PATCHED = (TARGET,)


def announcing(add: Callable[[Queue, Message], None]) -> Callable[[Queue, Message], None]:
    @functools.wraps(add)
    def add_message(queue: Queue, message: Message) -> None:
        add(queue, message)
        messages_sent.notify()

    return add_message


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, announcing(original(TARGET)))
