"""A child of the zygote: one task, with no privilege, then exit with a taxonomy code.

Forked ahead of its task (the spare), it sheds the zygote's channels and privileges,
waits for its task on its own socket, runs the target on the task's arguments, writes
the result file and exits: 0, or the exit code of the failure (``richdoc.taxonomy``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from richdoc.taxonomy import as_pipeline_error
from richdoc.worker.protocol import Raised, Refusal, Returned, Task, receive, write_result

Target = Callable[[Any], Any]

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def run(sock: socket.socket, *, zygote: int, target: Target, shed: Callable[[], None]) -> NoReturn:
    """The child's whole life, right after ``fork()``: ``shed()`` closes what it
    inherited from the zygote and needs not (its channels, its signal wake-up). Never
    returns into the zygote's code, whatever happens."""
    code = 1
    try:
        shed()
        _die_with_zygote()
        if os.getppid() == zygote:  # else the zygote died before the signal was armed
            _no_core_dumps()
            _drop_privileges()
            frame = receive(sock, Task.model_validate_json)
            sock.close()
            # None: the zygote is shutting down and has no task for this spare.
            code = 0 if frame is None else run_task(target, frame[0])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_task(target: Target, task: Task) -> int:
    """Run ``target`` on the task's arguments, write the result file; the exit code."""
    result: Returned | Raised
    try:
        result = Returned(value=target(task.args))
        code = 0
    except BaseException as exc:
        error = as_pipeline_error(exc)
        code = error.exit_code
        result = Raised(failure=Refusal(reason=error.reason, feature=error.feature))
    try:
        write_result(Path(task.result_path), result)
    except OSError as exc:
        # No result file: the exit code alone tells the caller (a full disk is 30).
        return code or as_pipeline_error(exc).exit_code
    return code


def _die_with_zygote() -> None:
    """Children must not outlive a dead zygote (Linux: parent-death signal)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    with contextlib.suppress(OSError):
        # A child that loses a bigger memory fight should be the one the OOM killer takes.
        Path("/proc/self/oom_score_adj").write_text("1000")


def _no_core_dumps() -> None:
    # A child that segfaults on a hostile file must not write a core of the zygote's
    # heap to the task's working directory.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_privileges() -> None:
    """A child parsing hostile bytes needs no privilege: it drops every capability
    (Linux), and no_new_privs keeps an exec from regaining any.

    In Lambda the function's user has none to begin with. Where the worker runs as root
    (a container, a workstation), CAP_SYS_PTRACE, CAP_SYS_ADMIN or CAP_PERFMON would let
    a child read the non-dumpable caller's /proc/<pid>/environ
    (``richdoc.worker.client.protect_caller``)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        # Zero effective, permitted and inheritable sets (two 32-bit words each).
        libc.capset(ctypes.byref(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)), (_CapData * 2)())
