"""The caller's side: ``ForkServer``, the handle on a zygote that starts it, hands it
tasks and replaces it when it dies.

The caller may be multi-threaded (the embedded stack runs handlers in threads), so it
never forks itself: it starts the zygote as a fresh interpreter (fork+exec, safe from
any thread) without the caller's credentials, and makes itself non-dumpable so that no
child can read them from /proc. A zygote replaced after dying or after a failed start
is logged as a warning (``richdoc.worker.client``): its warm-up is paid again.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from richdoc.taxonomy import (
    Failure,
    FailureKind,
    MemoryUse,
    PipelineError,
    ResourceLimit,
    Transient,
    error_for,
    kind_of_exit_code,
)
from richdoc.worker.protocol import (
    START_REPLY,
    Hello,
    Raised,
    Refusal,
    Returned,
    Spec,
    StartFailed,
    Task,
    TaskStatus,
    read_result,
    receive,
    send,
)

# The module the zygote runs as (``python -m``); the parse image must hold it.
ZYGOTE_MODULE = "richdoc.worker.zygote"
# How long the caller waits past a task's timeout before it gives up on the zygote.
GRACE_S = 30.0
_PR_SET_DUMPABLE = 4

_log = logging.getLogger(__name__)


# Environment ----------------------------------------------------------------------------

# Credentials, the container credential endpoint and the Lambda runtime API: a child
# parsing hostile bytes gets none of them.
_SCRUBBED_PREFIXES = ("AWS_", "_AWS_", "_X_AMZN_")
# BLAS and OpenMP start thread pools at import time unless told otherwise; a zygote must
# not have threads when it forks. Children may raise their own thread counts; OpenMP's
# threads then sleep between parallel regions instead of spinning (GNU OpenMP spins by
# default: measured, a child that raised torch to 2 threads spent twice the CPU seconds
# of one thread, and 13 % fewer with the passive policy; docs/parse.md).
_SINGLE_THREADED = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "PASSIVE",
}


def child_environment(
    environ: Mapping[str, str], overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    env.update(_SINGLE_THREADED)
    # Lambda sets no HOME and its user has no passwd entry, so Path.home() raises (docling
    # calls it at import); /tmp is the one writable place there.
    env.setdefault("HOME", tempfile.gettempdir())
    # The caller's import path (pytest's pythonpath, Lambda's /var/task) must reach the
    # fresh interpreter.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    env.update(overrides or {})
    return env


def protect_caller() -> bool:
    """Make the calling process non-dumpable (Linux; elsewhere a no-op returning False).

    Children parse hostile bytes under the caller's uid. The zygote's environment is
    scrubbed, but the caller's is not: in Lambda it holds the function role's session
    credentials, and a compromised child could read them from /proc/<caller>/environ
    (or its memory). A non-dumpable process's /proc entries that need ptrace access
    (environ, mem, maps, fd) belong to root, and no same-uid process may ptrace it.
    Dumpability resets at execve, so the zygote and its children are unaffected: the
    zygote still samples each child's /proc/<pid>/statm. The caller also writes no core.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)


def _signal_name(status: int) -> str:
    number = -status
    return signal.Signals(number).name if number in signal.valid_signals() else str(number)


def _ending(status: int | None) -> str:
    """How a process ended, from its ``Popen.returncode``."""
    if status is None:
        return "was stopped"
    if status < 0:
        return f"was killed by signal {_signal_name(status)}"
    return f"exited with code {status}"


# The caller's handle --------------------------------------------------------------------


@dataclass(frozen=True)
class ChildOutcome:
    value: Any  # what the target returned, as JSON
    seconds: float  # task handed to the child to its exit, as the zygote measured it
    peak_rss_mb: float  # the child's peak resident set
    mem_ceiling_mb: int  # the RSS ceiling it ran under
    cpu_s: float = 0.0  # the child's CPU time, user and system, all its threads


class ForkServer:
    """Runs ``target(args)`` in a forked child of a warm zygote; thread-safe.

    ``warmup`` and ``target`` are ``"module:function"`` references resolved in the
    zygote: ``warmup(config)`` runs once there (imports, pipeline construction),
    ``target(args)`` runs in each child and returns a JSON-able value or raises a
    ``richdoc.taxonomy`` error. The zygote starts on first use, is replaced when it has
    died, and stops at interpreter exit or ``close()``.
    """

    def __init__(
        self,
        *,
        warmup: str,
        target: str,
        config: Mapping[str, JsonValue],
        env_overrides: Mapping[str, str] | None = None,
        quiet: bool = False,
        start_timeout_s: float = 300.0,
    ) -> None:
        self._spec = Spec(warmup=warmup, target=target, config=dict(config))
        self._env_overrides = dict(env_overrides or {})
        self._quiet = quiet
        self._start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._hello: Hello | None = None
        # Why the last zygote is gone, when it did not stop on request: the next start
        # replaces it, and says so.
        self._lost: str | None = None
        atexit.register(self.close)

    @property
    def zygote_pid(self) -> int | None:
        with self._lock:
            alive = self._proc is not None and self._proc.poll() is None
            return self._proc.pid if alive and self._proc else None

    @property
    def hello(self) -> Hello | None:
        """What the current (or last) zygote reported once warm."""
        return self._hello

    def start(self) -> Hello:
        """Start the zygote unless it runs, and wait until it is warm: what it reported.
        Raises as a task would when it cannot start."""
        with self._lock:
            self._ensure_started_locked()
            assert self._hello is not None
            return self._hello

    def run(
        self, args: JsonValue, *, timeout_s: float, mem_ceiling_mb: int, result_path: Path
    ) -> ChildOutcome:
        task = Task(
            args=args,
            result_path=str(result_path),
            timeout_s=timeout_s,
            mem_ceiling_mb=mem_ceiling_mb,
        )
        ours, theirs = socket.socketpair()
        with ours:
            try:
                proc = self._submit(task, theirs)
            finally:
                theirs.close()
            status = self._await(ours, time.monotonic() + timeout_s + GRACE_S, proc)
        return _outcome(status, result_path, timeout_s=timeout_s, mem_ceiling_mb=mem_ceiling_mb)

    def close(self) -> None:
        with self._lock:
            self._stop_locked()
            self._lost = None

    def _submit(self, task: Task, task_sock: socket.socket) -> subprocess.Popen[bytes]:
        with self._lock:
            for _ in range(2):
                ctl, proc = self._ensure_started_locked()
                try:
                    send(ctl, task, fds=[task_sock.fileno()])
                    return proc
                except OSError:
                    # It died since the last task: a fresh zygote gets this one.
                    self._retire_locked(proc)
            raise Transient("the parse worker is not accepting tasks")

    def _await(
        self, sock: socket.socket, deadline: float, proc: subprocess.Popen[bytes]
    ) -> TaskStatus:
        sock.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            frame = receive(sock, TaskStatus.model_validate_json)
        except TimeoutError:
            # The zygote enforces timeouts itself; one that does not answer is wedged.
            self._retire(proc, f"stopped answering for {GRACE_S:g} s past a task's timeout")
            raise ResourceLimit("the parse worker did not finish within timeout_s") from None
        except (OSError, EOFError, ValueError):
            frame = None
        if frame is None:
            self._retire(proc)
            raise Transient("the parse worker exited during the task (restarted on next use)")
        return frame[0]

    def _retire(self, proc: subprocess.Popen[bytes], why: str | None = None) -> None:
        with self._lock:
            if self._proc is proc:
                self._retire_locked(proc, why)

    def _retire_locked(self, proc: subprocess.Popen[bytes], why: str | None = None) -> None:
        """Stop a zygote that failed (died, or stopped answering): the next task's start
        replaces it."""
        self._stop_locked()
        self._lost = why or _ending(proc.returncode)

    def _ensure_started_locked(self) -> tuple[socket.socket, subprocess.Popen[bytes]]:
        if self._proc is not None and self._ctl is not None:
            if self._proc.poll() is None:
                return self._ctl, self._proc
            self._retire_locked(self._proc)
        self._stop_locked()
        protect_caller()
        started = time.monotonic()
        proc, ours, reply = self._start()
        if isinstance(reply, StartFailed):
            ours.close()
            _terminate(proc)
            self._lost = f"failed to start: {reply.error}"
            reason = f"the parse worker failed to start: {reply.error}"
            raise error_for(Failure(kind=reply.kind, reason=reason))
        ours.settimeout(None)
        self._proc, self._ctl, self._hello = proc, ours, reply
        if self._lost is not None:
            self._warn_replaced(reply, time.monotonic() - started)
            self._lost = None
        return ours, proc

    def _start(self) -> tuple[subprocess.Popen[bytes], socket.socket, Hello | StartFailed]:
        ours, theirs = socket.socketpair()
        # The worker's output is diagnostics: never on the caller's stdout, which may be
        # data (`richdoc run --json`).
        sink = subprocess.DEVNULL if self._quiet else 2  # the process-level stderr
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", ZYGOTE_MODULE, str(theirs.fileno())],
                env=child_environment(os.environ, self._env_overrides),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        reply: Hello | StartFailed
        try:
            ours.settimeout(self._start_timeout_s)
            send(ours, self._spec)
            frame = receive(ours, START_REPLY.validate_json)
            # One that died before saying anything is an infrastructure event: transient.
            reply = frame[0] if frame else _died_starting(f"it exited with code {proc.wait()}")
        except (OSError, EOFError, ValueError) as exc:
            reply = _died_starting(f"{type(exc).__name__}: {exc}")
        return proc, ours, reply

    def _warn_replaced(self, hello: Hello, start_s: float) -> None:
        _log.warning(
            "the parse worker's zygote was replaced: the previous one %s; the new one "
            "(pid %d) took %.2f s to start (warm-up %.2f s)",
            self._lost,
            hello.pid,
            start_s,
            hello.warmup_s,
            extra={
                "zygote_replaced": {
                    "cause": self._lost,
                    "pid": hello.pid,
                    "start_s": round(start_s, 3),
                    "warmup_s": round(hello.warmup_s, 3),
                    "rss_mb": round(hello.rss_mb, 1),
                    "anon_mb": round(hello.anon_mb, 1),
                    "file_mb": round(hello.file_mb, 1),
                    "threads": hello.threads,
                }
            },
        )

    def _stop_locked(self) -> None:
        proc, ctl = self._proc, self._ctl
        self._proc = self._ctl = None
        if ctl is not None:
            ctl.close()  # the zygote kills its children and exits on EOF
        if proc is not None:
            _terminate(proc)


def _died_starting(error: str) -> StartFailed:
    return StartFailed(error=error, kind=FailureKind.TRANSIENT)


def _terminate(proc: subprocess.Popen[bytes], wait_s: float = 5.0) -> None:
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _outcome(
    status: TaskStatus, result_path: Path, *, timeout_s: float, mem_ceiling_mb: int
) -> ChildOutcome:
    try:
        return _returned(status, result_path, timeout_s=timeout_s, mem_ceiling_mb=mem_ceiling_mb)
    except PipelineError as exc:
        # The attempt record shows the memory of a failed child too.
        exc.memory = MemoryUse(ceiling_mb=mem_ceiling_mb, peak_rss_mb=status.peak_rss_mb)
        raise


def _returned(
    status: TaskStatus, result_path: Path, *, timeout_s: float, mem_ceiling_mb: int
) -> ChildOutcome:
    if status.killed == "timeout":
        raise ResourceLimit(f"the conversion exceeded timeout_s={timeout_s:g} and was killed")
    if status.killed == "memory":
        raise ResourceLimit(
            f"the conversion exceeded mem_ceiling_mb={mem_ceiling_mb} "
            f"(peak RSS {status.peak_rss_mb:.0f} MB) and was killed"
        )
    if status.status < 0:
        raise ResourceLimit(f"the conversion was killed by signal {_signal_name(status.status)}")
    result = read_result(result_path)
    if status.status == 0:
        if not isinstance(result, Returned):
            raise Transient("the parse worker exited without a result")
        return ChildOutcome(
            result.value, status.seconds, status.peak_rss_mb, mem_ceiling_mb, status.cpu_s
        )
    refusal = result.failure if isinstance(result, Raised) else Refusal(reason="")
    reason = refusal.reason or f"the parse worker exited with code {status.status}"
    kind = kind_of_exit_code(status.status)
    raise error_for(Failure(kind=kind, reason=reason, feature=refusal.feature))
