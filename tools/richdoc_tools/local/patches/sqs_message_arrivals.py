"""Every message sent to a queue wakes the queues' pollers
(``runtime.sqs_messages.messages_sent``).

Lambda's SQS event source long-polls its queue on AWS; here a poller that found nothing
sleeps until a message is sent (or, at the latest, its interval), instead of receiving 20
times a second: polling made its cost grow with the time a run takes, not with its
messages. Every SendMessage passes ``SQSBackend.send_message``, whoever sends: an
operator, a handler, the state machine, S3's notifications (``SendMessageBatch`` sends
each entry through it).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patches.target import original, replace
from richdoc_tools.local.runtime.sqs_messages import messages_sent

if TYPE_CHECKING:
    from moto.sqs.models import Message, SQSBackend

TARGET = "moto.sqs.models.SQSBackend.send_message"
PATCHED = (TARGET,)


def announcing(send: Callable[..., Message]) -> Callable[..., Message]:
    @functools.wraps(send)
    def send_message(backend: SQSBackend, *args: Any, **kwargs: Any) -> Message:
        message = send(backend, *args, **kwargs)
        messages_sent.notify()
        return message

    return send_message


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, announcing(original(TARGET)))
