"""SQS message move tasks (dead-letter queue redrive): ``StartMessageMoveTask``,
``ListMessageMoveTasks`` and ``CancelMessageMoveTask``, run as SQS runs them.

What moto does: it has none of the three calls. In process its dispatcher raises
``NotImplementedError``; served, it answers HTTP 500 (``aws sqs start-message-move-task``
against ``richdoc local serve`` retried for about 11 seconds, then failed as an outage).

What AWS does: StartMessageMoveTask "starts an asynchronous task to move messages from a
specified source queue to a specified destination queue", the source being a queue
configured as another queue's dead-letter queue, and answers a ``TaskHandle``; only one
task per source queue is active at a time (API reference, StartMessageMoveTask:
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html;
ListMessageMoveTasks, ListMessageMoveTasksResultEntry, CancelMessageMoveTask). Messages
move oldest first, each as a new message (a new message id, its body and message
attributes kept: "Configure a dead-letter queue redrive",
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html);
the number to move is taken when the task starts. Without a ``DestinationArn`` each
message goes back to the queue it was dead-lettered from. ListMessageMoveTasks answers a
source queue's latest tasks, newest first (``MaxResults``: 1 by default, at most 10), with
their status (RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED), counts and start time,
the ``TaskHandle`` only while RUNNING. CancelMessageMoveTask stops a RUNNING task (what
moved stays moved) and answers how many moved.

The fix runs each task on a thread of its own, as SQS runs it asynchronously: it moves
the source's visible messages one by one through the queues' own ``add_message`` (a move
is not a SendMessage request), at ``MaxNumberOfMessagesPerSecond`` when given. moto keeps
no record of the queue a dead-lettered message came from, so a task without a
``DestinationArn`` ends FAILED, moving nothing (docs/embedded-stack.md says so).
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import add

if TYPE_CHECKING:
    from moto.core.responses import ActionResult
    from moto.sqs.models import Message, Queue, SQSBackend
    from moto.sqs.responses import SQSResponse

START = "moto.sqs.responses.SQSResponse.start_message_move_task"
LIST = "moto.sqs.responses.SQSResponse.list_message_move_tasks"
CANCEL = "moto.sqs.responses.SQSResponse.cancel_message_move_task"
PATCHED = (START, LIST, CANCEL)
ADDED = PATCHED  # moto has none of them

RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED = (
    "RUNNING",
    "COMPLETED",
    "CANCELLING",
    "CANCELLED",
    "FAILED",
)
ACTIVE = (RUNNING, CANCELLING)
LISTED_AT_MOST = 10
NO_SOURCE_RECORDED = (
    "The embedded stack keeps no record of the queue a dead-lettered message came from: "
    "name the destination queue (DestinationArn)"
)


def _error(code: str, message: str) -> Exception:
    from moto.sqs.exceptions import SQSException

    return SQSException(code, message)


@dataclass
class MoveTask:
    """One message move task, as ListMessageMoveTasks describes it."""

    source: Queue
    destination: Queue | None
    rate: int | None
    handle: str = field(init=False)
    started_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    to_move: int = 0
    moved: int = 0
    status: str = RUNNING
    failure: str | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)  # status changes

    def __post_init__(self) -> None:
        token = {"taskId": str(uuid.uuid4()), "sourceArn": self.source.queue_arn}
        self.handle = base64.b64encode(json.dumps(token).encode()).decode("ascii")

    def described(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "Status": self.status,
            "SourceArn": self.source.queue_arn,
            "ApproximateNumberOfMessagesMoved": self.moved,
            "ApproximateNumberOfMessagesToMove": self.to_move,
            "StartedTimestamp": self.started_ms,
        }
        if self.status == RUNNING:
            entry["TaskHandle"] = self.handle
        if self.destination is not None:
            entry["DestinationArn"] = self.destination.queue_arn
        if self.rate is not None:
            entry["MaxNumberOfMessagesPerSecond"] = self.rate
        if self.failure is not None:
            entry["FailureReason"] = self.failure
        return entry

    def run(self) -> None:
        if self.destination is None:
            with self.lock:
                self.status, self.failure = FAILED, NO_SOURCE_RECORDED
            return
        while self.moved < self.to_move:
            message = _take_oldest(self.source, self.cancelled)
            if message is None:
                break
            self.destination.add_message(_as_new(message))
            self.moved += 1
            if self.rate and self.cancelled.wait(1 / self.rate):
                break
        with self.lock:
            self.status = CANCELLED if self.cancelled.is_set() else COMPLETED

    def cancel(self) -> None:
        """Stop moving (what moved stays moved); only a RUNNING task can be cancelled."""
        with self.lock:
            if self.status != RUNNING:
                raise _error(
                    "UnsupportedOperation",
                    f"Only a RUNNING task can be cancelled: it is {self.status}.",
                )
            self.status = CANCELLING
            self.cancelled.set()


def _take_oldest(queue: Queue, cancelled: threading.Event) -> Message | None:
    """The oldest visible message of ``queue``, removed from it; None once the task is
    cancelled (decided under the queue's lock, so that nothing moves after a cancel)."""
    with queue._messages_lock:
        visible = queue.messages
        if cancelled.is_set() or not visible:
            return None
        oldest = min(visible, key=lambda m: m.sent_timestamp or 0)
        queue._messages.remove(oldest)
        return oldest


def _as_new(message: Message) -> Message:
    """``message`` moved: a new message (its own id and times), the same body and
    attributes."""
    from moto.sqs.models import Message

    moved = Message(str(uuid.uuid4()), message.body)
    moved.message_attributes = dict(message.message_attributes)
    moved.group_id, moved.deduplication_id = message.group_id, message.deduplication_id
    moved.mark_sent()
    return moved


class MoveTasks:
    """The tasks started while the fix is installed, each source queue's newest last."""

    def __init__(self) -> None:
        self.by_source: dict[str, list[MoveTask]] = {}
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def start(
        self, backend: SQSBackend, source_arn: str, destination_arn: str | None, rate: int | None
    ) -> MoveTask:
        source = _queue(backend, source_arn, "SourceArn")
        if not any(queue.dead_letter_queue is source for queue in backend.queues.values()):
            raise _error(
                "InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue."
            )
        destination = (
            _queue(backend, destination_arn, "DestinationArn") if destination_arn else None
        )
        task = MoveTask(source=source, destination=destination, rate=rate)
        with self.lock:
            tasks = self.by_source.setdefault(source_arn, [])
            if any(t.status in ACTIVE for t in tasks):
                raise _error(
                    "InvalidParameterValue",
                    "There is already a task running. Only one active task is allowed for "
                    "a source queue arn at a given time.",
                )
            task.to_move = len(source.messages)
            tasks.append(task)
            thread = threading.Thread(target=task.run, name="sqs-message-move-task", daemon=True)
            self.threads.append(thread)
        thread.start()
        return task

    def listed(self, backend: SQSBackend, source_arn: str, max_results: int) -> list[MoveTask]:
        _queue(backend, source_arn, "SourceArn")
        if not 1 <= max_results <= LISTED_AT_MOST:
            raise _error(
                "InvalidParameterValue",
                f"Value {max_results} for parameter MaxResults is invalid. Reason: You must "
                f"enter a number that's between 1 and {LISTED_AT_MOST}.",
            )
        with self.lock:
            tasks = list(self.by_source.get(source_arn, []))
        return list(reversed(tasks))[:max_results]

    def cancel(self, handle: str) -> MoveTask:
        with self.lock:
            task = next(
                (t for tasks in self.by_source.values() for t in tasks if t.handle == handle),
                None,
            )
        if task is None:
            raise _error("ResourceNotFoundException", "Task does not exist.")
        task.cancel()
        return task

    def stop(self) -> None:
        """Cancel what still runs and wait for it (the stack is stopping)."""
        with self.lock:
            tasks = [t for ts in self.by_source.values() for t in ts]
            threads = list(self.threads)
        for task in tasks:
            task.cancelled.set()
        for thread in threads:
            thread.join(timeout=10)


def _queue(backend: SQSBackend, arn: str, parameter: str) -> Queue:
    queue = next((q for q in backend.queues.values() if q.queue_arn == arn), None)
    if queue is None:
        raise _error(
            "ResourceNotFoundException",
            f"The resource that you specified for the {parameter} parameter doesn't exist.",
        )
    return queue


def responses(tasks: MoveTasks) -> dict[str, Callable[[SQSResponse], ActionResult]]:
    """The three actions, as ``SQSResponse`` methods answering from ``tasks``."""
    from moto.core.responses import ActionResult

    def start_message_move_task(self: SQSResponse) -> ActionResult:
        rate = self._get_param("MaxNumberOfMessagesPerSecond")
        task = tasks.start(
            self.sqs_backend,
            self._get_param("SourceArn"),
            self._get_param("DestinationArn"),
            int(rate) if rate is not None else None,
        )
        return ActionResult({"TaskHandle": task.handle})

    def list_message_move_tasks(self: SQSResponse) -> ActionResult:
        listed = tasks.listed(
            self.sqs_backend,
            self._get_param("SourceArn"),
            int(self._get_param("MaxResults") or 1),
        )
        return ActionResult({"Results": [task.described() for task in listed]})

    def cancel_message_move_task(self: SQSResponse) -> ActionResult:
        task = tasks.cancel(self._get_param("TaskHandle"))
        return ActionResult({"ApproximateNumberOfMessagesMoved": task.moved})

    return {
        START: start_message_move_task,
        LIST: list_message_move_tasks,
        CANCEL: cancel_message_move_task,
    }


def install(exit_stack: contextlib.ExitStack) -> None:
    tasks = MoveTasks()
    for target, response in responses(tasks).items():
        add(exit_stack, target, response)
    exit_stack.callback(tasks.stop)
