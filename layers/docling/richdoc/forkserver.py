"""An isolated worker: a single-threaded zygote that forks one child per task.

Why: a parse can exhaust memory, crash in native code or run forever, and the process
that asked for it (a Lambda handler, the CLI, or one thread of the embedded local stack)
must survive and report a typed failure. A fresh interpreter per task would pay docling's
3.5 to 6.6 s import every time; forking the caller is unsafe because it may be
multi-threaded. So the caller starts a zygote once (a fresh interpreter, without cloud
credentials), the zygote imports and warms up the heavy modules, and forks a child per
task. The zygote stays single-threaded; it enforces the wall-clock timeout and the
memory ceiling of every child and reports how each one ended. It keeps one child forked
ahead (the spare, waiting for its task), so forking the zygote's heap (about 30 ms of page
table copying) happens while the previous task runs, not while the caller waits.

Only plain processes, socket pairs and file descriptors are used: AWS Lambda has no
/dev/shm, so multiprocessing queues, locks and pools do not work there.

Protocol (length-prefixed JSON frames)::

    caller -> zygote, control socket:  {"args", "result_path", "timeout_s", "mem_ceiling_mb"}
                                       + one file descriptor: the task socket
    zygote -> spare child, its socket: {"args", "result_path"} (the task it now runs)
    zygote -> caller, task socket:     {"status", "killed", "peak_rss_mb", "seconds"}
    child  -> caller, result file:     {"value": ...} or {"failure": {...}}; exit code
                                       0 / 10 / 20 / 30 / 70 / other (richdoc.taxonomy)

The caller closing its task socket cancels the task (the zygote kills the child); the
caller closing the control socket stops the zygote and every child.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import json
import os
import resource
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from richdoc.taxonomy import (
    Failure,
    FailureKind,
    InternalError,
    PipelineError,
    ResourceLimit,
    Transient,
    error_for,
    exception_chain,
    kind_of_exit_code,
    no_space_error,
    out_of_space,
)

MIB = 1 << 20
# How often the zygote samples the RSS of running children.
POLL_INTERVAL_S = 0.05
# How long the caller waits past a task's timeout before it gives up on the zygote.
GRACE_S = 30.0
_HEADER = struct.Struct("!I")
_MAX_FRAME = 1 << 20
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4

Target = Callable[[Any], Any]


# Environment ----------------------------------------------------------------------------

# Credentials, the container credential endpoint and the Lambda runtime API: a child
# parsing hostile bytes gets none of them.
_SCRUBBED_PREFIXES = ("AWS_", "_AWS_", "_X_AMZN_")
# BLAS and OpenMP start thread pools at import time unless told otherwise; a zygote must
# not have threads when it forks. Children may raise their own thread counts.
_SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def child_environment(
    environ: Mapping[str, str], overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    env.update(_SINGLE_THREADED)
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


# Framing --------------------------------------------------------------------------------


def _send_frame(sock: socket.socket, obj: Any, fds: Sequence[int] = ()) -> None:
    payload = json.dumps(obj, separators=(",", ":")).encode()
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


def _recv_frame(sock: socket.socket) -> tuple[Any, list[int]] | None:
    """One frame and the descriptors sent with it; None when the peer has closed."""
    header, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, 1)
    if not header:
        return None
    try:
        (size,) = _HEADER.unpack(header + _recv_exact(sock, _HEADER.size - len(header)))
        if size > _MAX_FRAME:
            raise ValueError(f"frame of {size} bytes")
        return json.loads(_recv_exact(sock, size)), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# Process facts (Linux /proc; elsewhere the rlimit backstop and the timeout still apply) --


def _rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, IndexError, ValueError):
        return None


def thread_count() -> int:
    """OS threads of this process (native pools included), not just Python threads."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _max_rss_mb(usage: resource.struct_rusage) -> float:
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    return usage.ru_maxrss / (MIB if sys.platform == "darwin" else 1024)


# The caller's side ----------------------------------------------------------------------


@dataclass(frozen=True)
class ChildOutcome:
    value: Any
    seconds: float  # task handed to the child to its exit, as the zygote measured it
    peak_rss_mb: float  # the child's peak resident set


class ForkServer:
    """Runs ``target(args)`` in a forked child of a warm zygote; thread-safe.

    ``warmup`` and ``target`` are ``"module:function"`` references resolved in the
    zygote: ``warmup(config)`` runs once there (imports, pipeline construction),
    ``target(args)`` runs in each child and returns a JSON-able value or raises a
    ``richdoc.taxonomy`` error. The zygote starts on first use, restarts when it has
    died, and stops at interpreter exit or ``close()``.
    """

    def __init__(
        self,
        *,
        warmup: str,
        target: str,
        config: Mapping[str, Any],
        env_overrides: Mapping[str, str] | None = None,
        quiet: bool = False,
        start_timeout_s: float = 300.0,
    ) -> None:
        self._spec = {"warmup": warmup, "target": target, "config": dict(config)}
        self._env_overrides = dict(env_overrides or {})
        self._quiet = quiet
        self._start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._hello: dict[str, Any] = {}
        atexit.register(self.close)

    @property
    def zygote_pid(self) -> int | None:
        with self._lock:
            alive = self._proc is not None and self._proc.poll() is None
            return self._proc.pid if alive and self._proc else None

    @property
    def hello(self) -> dict[str, Any]:
        """What the zygote reported once warm: pid, threads, rss_mb, warmup_s."""
        return dict(self._hello)

    def run(
        self, args: Any, *, timeout_s: float, mem_ceiling_mb: int, result_path: Path
    ) -> ChildOutcome:
        request = {
            "args": args,
            "result_path": str(result_path),
            "timeout_s": timeout_s,
            "mem_ceiling_mb": mem_ceiling_mb,
        }
        ours, theirs = socket.socketpair()
        with ours:
            try:
                proc = self._submit(request, theirs)
            finally:
                theirs.close()
            reply = self._await(ours, time.monotonic() + timeout_s + GRACE_S, proc)
        return _outcome(reply, result_path, timeout_s=timeout_s, mem_ceiling_mb=mem_ceiling_mb)

    def close(self) -> None:
        with self._lock:
            self._stop_locked()

    def _submit(self, request: dict[str, Any], task_sock: socket.socket) -> subprocess.Popen[bytes]:
        with self._lock:
            for _ in range(2):
                ctl, proc = self._ensure_started_locked()
                try:
                    _send_frame(ctl, request, fds=[task_sock.fileno()])
                    return proc
                except OSError:
                    # It died since the last task: a fresh zygote gets this one.
                    self._stop_locked()
            raise Transient("the parse worker is not accepting tasks")

    def _await(
        self, sock: socket.socket, deadline: float, proc: subprocess.Popen[bytes]
    ) -> dict[str, Any]:
        sock.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            frame = _recv_frame(sock)
        except TimeoutError:
            # The zygote enforces timeouts itself; one that does not answer is wedged.
            self._stop_if_current(proc)
            raise ResourceLimit("the parse worker did not finish within timeout_s") from None
        except (OSError, EOFError, ValueError):
            frame = None
        if frame is None:
            self._stop_if_current(proc)
            raise Transient("the parse worker exited during the task (restarted on next use)")
        reply: dict[str, Any] = frame[0]
        return reply

    def _stop_if_current(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            if self._proc is proc:
                self._stop_locked()

    def _ensure_started_locked(self) -> tuple[socket.socket, subprocess.Popen[bytes]]:
        if self._proc is not None and self._ctl is not None and self._proc.poll() is None:
            return self._ctl, self._proc
        self._stop_locked()
        protect_caller()
        ours, theirs = socket.socketpair()
        # The worker's output is diagnostics: never on the caller's stdout, which may be
        # data (`richdoc run --json`).
        sink = subprocess.DEVNULL if self._quiet else 2  # the process-level stderr
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "richdoc.forkserver", str(theirs.fileno())],
                env=child_environment(os.environ, self._env_overrides),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            theirs.close()
        try:
            ours.settimeout(self._start_timeout_s)
            _send_frame(ours, self._spec)
            frame = _recv_frame(ours)
            hello = frame[0] if frame else {"error": f"it exited with code {proc.wait()}"}
        except (OSError, EOFError, ValueError) as exc:
            hello = {"error": f"{type(exc).__name__}: {exc}"}
        if "error" in hello:
            ours.close()
            _terminate(proc)
            # A zygote that reported why its warm-up failed says what kind it is; one
            # that died before saying anything is an infrastructure event: transient.
            kind = FailureKind(hello.get("kind", FailureKind.TRANSIENT))
            reason = f"the parse worker failed to start: {hello['error']}"
            raise error_for(Failure(kind=kind, reason=reason))
        ours.settimeout(None)
        self._proc, self._ctl, self._hello = proc, ours, hello
        return ours, proc

    def _stop_locked(self) -> None:
        proc, ctl = self._proc, self._ctl
        self._proc = self._ctl = None
        if ctl is not None:
            ctl.close()  # the zygote kills its children and exits on EOF
        if proc is not None:
            _terminate(proc)


def _terminate(proc: subprocess.Popen[bytes], wait_s: float = 5.0) -> None:
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read_result(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _outcome(
    reply: dict[str, Any], result_path: Path, *, timeout_s: float, mem_ceiling_mb: int
) -> ChildOutcome:
    status = int(reply["status"])
    killed = reply.get("killed")
    if killed == "timeout":
        raise ResourceLimit(f"the conversion exceeded timeout_s={timeout_s:g} and was killed")
    if killed == "memory":
        raise ResourceLimit(
            f"the conversion exceeded mem_ceiling_mb={mem_ceiling_mb} "
            f"(peak RSS {reply['peak_rss_mb']:.0f} MB) and was killed"
        )
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else -status
        raise ResourceLimit(f"the conversion was killed by signal {name}")
    result = _read_result(result_path)
    if status == 0:
        if "value" not in result:
            raise Transient("the parse worker exited without a result")
        return ChildOutcome(
            value=result["value"],
            seconds=float(reply["seconds"]),
            peak_rss_mb=float(reply["peak_rss_mb"]),
        )
    kind = kind_of_exit_code(status)
    details = result.get("failure") or {}
    reason = details.get("reason") or f"the parse worker exited with code {status}"
    raise error_for(Failure(kind=kind, reason=reason, feature=details.get("feature")))


# The zygote -----------------------------------------------------------------------------


def _resolve(ref: str) -> Target:
    module, _, name = ref.partition(":")
    func: Target = getattr(importlib.import_module(module), name)
    return func


@dataclass
class _Task:
    pid: int
    conn: socket.socket
    deadline: float
    ceiling_bytes: int
    started: float
    killed: str | None = None


@dataclass(frozen=True)
class _Spare:
    """A child forked ahead of its task, blocked reading the task from ``sock``."""

    pid: int
    sock: socket.socket


@dataclass
class _Zygote:
    ctl: socket.socket
    target: Target
    tasks: dict[int, _Task] = field(default_factory=dict)
    sel: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    wake_r: int = -1
    wake_w: int = -1
    spare: _Spare | None = None

    def serve(self) -> None:
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        # SIGCHLD wakes the loop through the pipe, so exits are reported at once.
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.sel.register(self.ctl, selectors.EVENT_READ, "ctl")
        self.sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.spare = self._fork_spare()
        while True:
            for key, _ in self.sel.select(POLL_INTERVAL_S if self.tasks else None):
                if key.data == "ctl":
                    try:
                        frame = _recv_frame(self.ctl)
                    except (OSError, EOFError, ValueError):
                        frame = None
                    if frame is None:
                        self._shutdown()
                        return
                    self._spawn(*frame)
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                else:  # the caller closed its task socket: cancel the task
                    self._kill(key.data, "cancelled")
                    self.sel.unregister(key.fileobj)
            self._reap()
            self._enforce()

    def _spawn(self, request: dict[str, Any], fds: list[int]) -> None:
        conn = socket.socket(fileno=fds[0])
        ceiling = int(request["mem_ceiling_mb"]) * MIB
        spare = self.spare or self._fork_spare()
        self.spare = None
        try:
            _send_frame(spare.sock, request)
        except OSError:
            # The spare died waiting (killed from outside): this task gets a new one.
            spare.sock.close()
            _kill_quietly(spare.pid)
            spare = self._fork_spare()
            _send_frame(spare.sock, request)
        spare.sock.close()
        now = time.monotonic()
        task = _Task(spare.pid, conn, now + float(request["timeout_s"]), ceiling, now)
        self.tasks[spare.pid] = task
        self.sel.register(conn, selectors.EVENT_READ, task)
        # The next task's child, forked while this one runs.
        self.spare = self._fork_spare()

    def _fork_spare(self) -> _Spare:
        ours, theirs = socket.socketpair()
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:
            ours.close()
            self._child(theirs, zygote)
        theirs.close()
        return _Spare(pid, ours)

    def _child(self, sock: socket.socket, zygote: int) -> NoReturn:
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # The child needs none of the zygote's channels.
            self.sel.close()
            spares = [self.spare.sock] if self.spare else []
            for other in [self.ctl, *spares, *(t.conn for t in self.tasks.values())]:
                other.close()
            os.close(self.wake_r)
            os.close(self.wake_w)
            _die_with_zygote()
            if os.getppid() == zygote:  # else the zygote died before the signal was armed
                _no_core_dumps()
                _drop_privileges()
                frame = _recv_frame(sock)
                sock.close()
                # None: the zygote is shutting down and has no task for this spare.
                code = 0 if frame is None else _run_target(self.target, frame[0])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def _reap(self) -> None:
        while self.tasks:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and pid == self.spare.pid:
                # The spare died before it had a task (killed from outside).
                self.spare.sock.close()
                self.spare = None
                continue
            task = self.tasks.pop(pid, None)
            if task is None:
                continue
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(task.conn)
            _send_quietly(
                task.conn,
                {
                    "status": os.waitstatus_to_exitcode(status),
                    "killed": task.killed,
                    "peak_rss_mb": _max_rss_mb(usage),
                    "seconds": time.monotonic() - task.started,
                },
            )
            task.conn.close()

    def _enforce(self) -> None:
        now = time.monotonic()
        for task in self.tasks.values():
            if task.killed:
                continue
            if now >= task.deadline:
                self._kill(task, "timeout")
                continue
            rss = _rss_bytes(task.pid)
            if rss is not None and rss > task.ceiling_bytes:
                self._kill(task, "memory")

    @staticmethod
    def _kill(task: _Task, why: str) -> None:
        if task.killed is None:
            task.killed = why
            _kill_quietly(task.pid)

    def _shutdown(self) -> None:
        for task in self.tasks.values():
            self._kill(task, "cancelled")
        pids = list(self.tasks)
        if self.spare is not None:
            self.spare.sock.close()  # the spare reads end-of-file and exits
            pids.append(self.spare.pid)
        for pid in pids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _send_quietly(conn: socket.socket, obj: Any) -> None:
    # The caller may have gone away (cancelled); that is not the zygote's problem.
    with contextlib.suppress(OSError):
        _send_frame(conn, obj)


def _die_with_zygote() -> None:
    """Children must not outlive a dead zygote (Linux: parent-death signal)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    with contextlib.suppress(OSError):
        # A child that loses a bigger memory fight should be the one the OOM killer takes.
        Path("/proc/self/oom_score_adj").write_text("1000")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_PR_SET_NO_NEW_PRIVS = 38


def _drop_privileges() -> None:
    """A child parsing hostile bytes needs no privilege: it drops every capability
    (Linux), and no_new_privs keeps an exec from regaining any.

    In Lambda the function's user has none to begin with. Where the worker runs as root
    (a container, a workstation), CAP_SYS_PTRACE, CAP_SYS_ADMIN or CAP_PERFMON would let
    a child read the non-dumpable caller's /proc/<pid>/environ (``protect_caller``)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        # Zero effective, permitted and inheritable sets (two 32-bit words each).
        libc.capset(ctypes.byref(_CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)), (_CapData * 2)())


def _no_core_dumps() -> None:
    # A child that segfaults on a hostile file must not write a core of the zygote's
    # heap to the task's working directory.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    return any(isinstance(e, kind) for e in exception_chain(exc))


def classify_exception(exc: BaseException) -> tuple[int, Failure]:
    """The child's exit code and recorded failure for an exception from the target.

    Taxonomy errors keep their kind; running out of memory or of local disk is a
    resource limit (a bigger tier has more of both); anything else is a bug in the code
    that ran, ``internal``, with its own exit code (never "any other code: transient").
    """
    if isinstance(exc, PipelineError):
        return exc.exit_code, exc.failure()
    if caused_by(exc, MemoryError):
        reason = f"out of memory ({type(exc).__name__}: {exc})"
        return ResourceLimit.exit_code, Failure(kind=FailureKind.RESOURCE_LIMIT, reason=reason)
    full = out_of_space(exc)
    if full is not None:
        return ResourceLimit.exit_code, no_space_error("the parse worker", full).failure()
    reason = f"unexpected error in the parse worker: {type(exc).__name__}: {exc}"
    return InternalError.exit_code, Failure(kind=FailureKind.INTERNAL, reason=reason)


def _run_target(target: Target, request: dict[str, Any]) -> int:
    try:
        payload: dict[str, Any] = {"value": target(request["args"])}
        code = 0
    except BaseException as exc:
        code, failure = classify_exception(exc)
        payload = {"failure": {"reason": failure.reason, "feature": failure.feature}}
    path = Path(request["result_path"])
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(payload))
        tmp.replace(path)
    except OSError as exc:
        # No result file: the exit code alone tells the caller (a full disk is 30).
        write_code, _ = classify_exception(exc)
        return code if code else write_code
    return code


def _zygote_main(ctl_fd: int) -> int:
    ctl = socket.socket(fileno=ctl_fd)
    started = time.monotonic()
    try:
        frame = _recv_frame(ctl)
        if frame is None:
            return 0
        spec = frame[0]
        warmup, target = _resolve(spec["warmup"]), _resolve(spec["target"])
        warmup(spec["config"])
    except BaseException as exc:
        # A warm-up that raises is a broken install or configuration (an import that
        # fails, model weights that are missing): internal, unless it ran out of memory.
        _, failure = classify_exception(exc)
        _send_quietly(ctl, {"error": f"{type(exc).__name__}: {exc}", "kind": str(failure.kind)})
        return 1
    threads = thread_count()
    if threads > 1:
        # fork() copies only the calling thread; locks held by the others stay locked
        # forever in the child. Refuse rather than hang children at random.
        error = f"warm-up left {threads} threads; forking is unsafe"
        _send_quietly(ctl, {"error": error, "kind": str(FailureKind.INTERNAL)})
        return 1
    # Objects that exist now are shared with every child; keep the collector from
    # touching (and so copying) their pages.
    gc.freeze()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _send_frame(
        ctl,
        {
            "pid": os.getpid(),
            "threads": threads,
            "rss_mb": _max_rss_mb(usage),
            "warmup_s": time.monotonic() - started,
        },
    )
    _Zygote(ctl, target).serve()
    return 0


if __name__ == "__main__":
    sys.exit(_zygote_main(int(sys.argv[1])))
