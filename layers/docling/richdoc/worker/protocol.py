"""The worker's wire: length-prefixed JSON frames over socket pairs, file descriptors
passed beside them (``SCM_RIGHTS``), and the typed message each side sends.

::

    caller -> zygote, control socket, once:  Spec          what to warm up and run
    zygote -> caller, control socket, once:  Hello | StartFailed
    caller -> zygote, control socket:        Task          + one descriptor: the task socket
    zygote -> spare child, its socket:       Task          (the task it now runs)
    zygote -> caller, task socket:           TaskStatus    once the child is reaped
    child  -> caller, result file:           Returned | Raised; exit code 0 / 10 / 20 /
                                             30 / 70 / other (richdoc.taxonomy)

Only socket pairs and files: AWS Lambda has no /dev/shm, so multiprocessing's queues
and locks do not work there.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter

from richdoc.taxonomy import FailureKind

_HEADER = struct.Struct("!I")
_MAX_FRAME = 1 << 20

# Why the zygote killed a child, if it did.
Killed = Literal["timeout", "memory", "cancelled"]


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spec(Message):
    """``"module:function"`` references resolved in the zygote: ``warmup(config)`` runs
    once there (what it returns, a dict or None, is ``Hello.details``), ``target(args)``
    in each child."""

    warmup: str
    target: str
    config: dict[str, JsonValue]


class Hello(Message):
    """The zygote is warm and serving."""

    pid: int
    threads: int  # OS threads after the warm-up: 1, or it refuses to fork
    rss_mb: float  # peak resident set through the warm-up
    # Its resident set once warm, in the two parts a child's RSS counts differently: the
    # anonymous pages (fork copies their page-table entries, so a child's RSS counts them
    # from its first instruction) and the file-backed ones (counted only once a child
    # touches them). richdoc.parse.settings.ceiling_for_tier reads both.
    anon_mb: float
    file_mb: float
    warmup_s: float  # from the zygote's first instruction to this message
    # What the warm-up function returned about itself (the parse worker: torch's threads).
    details: dict[str, JsonValue] = {}


class StartFailed(Message):
    """The warm-up failed; ``kind`` says what that means for the task that waits."""

    error: str
    kind: FailureKind


class Task(Message):
    args: JsonValue
    result_path: str
    timeout_s: float
    mem_ceiling_mb: int


class TaskStatus(Message):
    status: int  # the child's exit code, or minus the signal that ended it
    killed: Killed | None
    peak_rss_mb: float  # the child's peak resident set
    seconds: float  # task handed to the child to its exit
    cpu_s: float = 0.0  # the child's CPU time, user and system, all its threads


class Returned(Message):
    value: JsonValue


class Refusal(Message):
    reason: str
    feature: str | None = None


class Raised(Message):
    failure: Refusal


START_REPLY: TypeAdapter[Hello | StartFailed] = TypeAdapter(Hello | StartFailed)
_RESULT: TypeAdapter[Returned | Raised] = TypeAdapter(Returned | Raised)

M = TypeVar("M")


def send(sock: socket.socket, message: Message, fds: Sequence[int] = ()) -> None:
    payload = message.model_dump_json().encode()
    data = _HEADER.pack(len(payload)) + payload
    sent = socket.send_fds(sock, [data], list(fds)) if fds else 0
    sock.sendall(data[sent:])


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed mid-frame")
        buf += chunk
    return buf


def receive(sock: socket.socket, parse: Callable[[bytes], M]) -> tuple[M, list[int]] | None:
    """One frame, parsed (``Task.model_validate_json``, ``START_REPLY.validate_json``), and
    the descriptors sent with it; None when the peer has closed. A malformed frame raises
    ``ValueError`` (as pydantic's ``ValidationError`` is)."""
    header, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, 1)
    if not header:
        return None
    try:
        (size,) = _HEADER.unpack(header + _recv_exact(sock, _HEADER.size - len(header)))
        if size > _MAX_FRAME:
            raise ValueError(f"frame of {size} bytes")
        return parse(_recv_exact(sock, size)), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def write_result(path: Path, result: Returned | Raised) -> None:
    """Atomically: the caller reads either the whole result or none."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(result.model_dump_json().encode())
    tmp.replace(path)


def read_result(path: Path) -> Returned | Raised | None:
    try:
        return _RESULT.validate_json(path.read_bytes())
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
