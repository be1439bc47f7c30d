"""SendMessage refuses what SQS refuses.

What moto does: it takes a message body or String attribute holding any character, and
counts a message's size as its body's characters.

What AWS does: a message body, and every String (and Number) message attribute value,
may hold only ``#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF``
(``InvalidMessageContents``); the message's size, in UTF-8 bytes, counts the body and
every attribute's name, data type and value, and may not exceed the queue's
``MaximumMessageSize`` (1 MiB, the default and the most; ``InvalidParameterValue``,
"Message must be shorter than N bytes") (SendMessage:
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html;
MessageAttributeValue; "Amazon SQS message quotas").

The fix validates where every SendMessage reaches moto, ``SQSBackend.send_message`` (a
SendMessageBatch entry too), whoever sends: a handler, the state machine's
``sqs:sendMessage`` task, the stack's event delivery. (A batch with an invalid entry is
refused as a whole, where SQS reports the entry as failed: moto's batch handles only its
own errors per entry, and the pipeline sends no batches.)
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.sqs.models import Message, SQSBackend

TARGET = "moto.sqs.models.SQSBackend.send_message"
PATCHED = (TARGET,)

# Anything outside SQS's allowed set.
INVALID_CHARACTERS = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def message_size(body: str, attributes: Mapping[str, Mapping[str, Any]] | None) -> int:
    """The message's size as SQS counts it: UTF-8 bytes of the body and of every
    attribute's name, data type and value."""
    size = len(body.encode("utf-8", "surrogatepass"))
    for name, attribute in (attributes or {}).items():
        size += len(name.encode()) + len(str(attribute.get("DataType", "")).encode())
        value = attribute.get("StringValue")
        if value is not None:
            size += len(str(value).encode("utf-8", "surrogatepass"))
        binary = attribute.get("BinaryValue")
        if binary is not None:
            size += len(binary) if isinstance(binary, bytes) else len(str(binary).encode())
    return size


def problem(
    body: str, attributes: Mapping[str, Mapping[str, Any]] | None, maximum: int
) -> tuple[str, str] | None:
    """(error code, message) SQS would answer, or None for a valid message."""
    if INVALID_CHARACTERS.search(body):
        return (
            "InvalidMessageContents",
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | "
            "#x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        )
    for name, attribute in (attributes or {}).items():
        value = attribute.get("StringValue")
        if value is not None and INVALID_CHARACTERS.search(str(value)):
            return (
                "InvalidMessageContents",
                f"Message (user) attribute '{name}' value contains invalid characters. "
                "Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | "
                "#xE000 to #xFFFD | #x10000 to #x10FFFF",
            )
    if message_size(body, attributes) > maximum:
        return (
            "InvalidParameterValue",
            f"One or more parameters are invalid. Reason: Message must be shorter than "
            f"{maximum} bytes.",
        )
    return None


def validated(send: Callable[..., Message]) -> Callable[..., Message]:
    from moto.sqs.exceptions import SQSException

    @functools.wraps(send)
    def send_message(
        backend: SQSBackend,
        queue_name: str,
        message_body: str,
        message_attributes: dict[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Message:
        queue = backend.get_queue(queue_name)
        found = problem(message_body, message_attributes, int(queue.maximum_message_size))  # type: ignore[attr-defined]
        if found is not None:
            raise SQSException(*found)
        return send(backend, queue_name, message_body, message_attributes, *args, **kwargs)

    return send_message


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, validated(original(TARGET)))
