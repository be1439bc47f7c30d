"""Scripted failures of SQS SendMessage (``FailureScript.fail_sends``).

Every SendMessage request, from the state machine's ``sqs:sendMessage`` task or a
handler's boto3 client, reaches this backend method, so a scripted error fails it
whoever sends. (Messages SQS itself moves to a dead-letter queue by a redrive policy do
not pass here, as on AWS they are not SendMessage requests.)
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.sqs.models import Message, SQSBackend

    from richdoc_tools.local.faults.scripted import ServiceError

TARGET = "moto.sqs.models.SQSBackend.send_message"
PATCHED = (TARGET,)

FailureFor = Callable[[str], "ServiceError | None"]  # queue name -> the error to answer


def install(exit_stack: contextlib.ExitStack, failure_for: FailureFor) -> None:
    from moto.sqs.exceptions import SQSException

    send: Callable[..., Message] = original(TARGET)

    @functools.wraps(send)
    def send_message(backend: SQSBackend, queue_name: str, *args: Any, **kwargs: Any) -> Message:
        failure = failure_for(queue_name)
        if failure is not None:
            raise SQSException(failure.code, failure.message)
        return send(backend, queue_name, *args, **kwargs)

    replace(exit_stack, TARGET, send_message)
