"""The zygote: a single-threaded server that forks one child per task.

Started by the caller as ``python -m richdoc.worker.zygote <control fd>`` (a fresh
interpreter, its environment scrubbed of credentials), it warms up once (imports,
pipeline construction), says ``Hello`` and then serves tasks: it hands each one to a
child forked ahead (the spare) and forks the next spare while the task runs, so the
fork of its heap is not on the caller's path. It enforces every child's wall-clock
timeout and memory ceiling (RSS sampled from /proc, SIGKILL above it), reaps each child
with ``wait4`` and reports how it ended. It never runs task code itself, and stays
single-threaded: ``fork()`` copies only the calling thread.

The caller closing a task socket cancels that task; closing the control socket stops
the zygote and every child.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import resource
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from richdoc.taxonomy import FailureKind, as_pipeline_error
from richdoc.worker import child
from richdoc.worker.child import Target
from richdoc.worker.protocol import (
    Hello,
    Killed,
    Message,
    Spec,
    StartFailed,
    Task,
    TaskStatus,
    receive,
    send,
)

MIB = 1 << 20
# How often the zygote samples the RSS of running children.
POLL_INTERVAL_S = 0.05


# Process facts (Linux /proc; elsewhere the timeout still applies) -----------------------


def rss_bytes(pid: int) -> int | None:
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


def max_rss_mb(usage: resource.struct_rusage) -> float:
    # ru_maxrss is in KiB on Linux and in bytes on macOS.
    return usage.ru_maxrss / (MIB if sys.platform == "darwin" else 1024)


def own_peak_rss_mb() -> float:
    """This process's peak resident set since it started (its exec).

    Not ``getrusage``: Linux carries ``ru_maxrss`` across ``execve``, so a zygote started
    from a process that once held gigabytes (a test runner that built model weights, a
    handler that just downloaded a big file) would report that process's peak as its own.
    ``VmHWM`` belongs to the address space the exec created."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return max_rss_mb(resource.getrusage(resource.RUSAGE_SELF))


def resident_mb() -> tuple[float, float]:
    """This process's resident set now: (anonymous, file-backed and shared memory), MB.
    Without /proc (macOS) all of it counts as anonymous: the larger share for a ceiling."""
    kib: dict[str, int] = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                if name in ("RssAnon", "RssFile", "RssShmem"):
                    kib[name] = int(value.split()[0])
    except (OSError, ValueError):
        return max_rss_mb(resource.getrusage(resource.RUSAGE_SELF)), 0.0
    return kib.get("RssAnon", 0) / 1024, (kib.get("RssFile", 0) + kib.get("RssShmem", 0)) / 1024


# The server -----------------------------------------------------------------------------


def _resolve(ref: str) -> Target:
    module, _, name = ref.partition(":")
    func: Target = getattr(importlib.import_module(module), name)
    return func


@dataclass
class _Running:
    """A task its child is running."""

    pid: int
    conn: socket.socket
    deadline: float
    ceiling_bytes: int
    started: float
    killed: Killed | None = None


@dataclass(frozen=True)
class _Spare:
    """A child forked ahead of its task, blocked reading the task from ``sock``."""

    pid: int
    sock: socket.socket


@dataclass
class Zygote:
    ctl: socket.socket
    target: Target
    tasks: dict[int, _Running] = field(default_factory=dict)
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
                        frame = receive(self.ctl, Task.model_validate_json)
                    except (OSError, EOFError, ValueError):
                        frame = None
                    if frame is None:
                        self._shutdown()
                        return
                    self._start(*frame)
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                else:  # the caller closed its task socket: cancel the task
                    self._kill(key.data, "cancelled")
                    self.sel.unregister(key.fileobj)
            self._reap()
            self._enforce()

    def _start(self, task: Task, fds: list[int]) -> None:
        conn = socket.socket(fileno=fds[0])
        spare = self.spare or self._fork_spare()
        self.spare = None
        try:
            send(spare.sock, task)
        except OSError:
            # The spare died waiting (killed from outside): this task gets a new one.
            spare.sock.close()
            _kill_quietly(spare.pid)
            spare = self._fork_spare()
            send(spare.sock, task)
        spare.sock.close()
        now = time.monotonic()
        running = _Running(spare.pid, conn, now + task.timeout_s, task.mem_ceiling_mb * MIB, now)
        self.tasks[spare.pid] = running
        self.sel.register(conn, selectors.EVENT_READ, running)
        # The next task's child, forked while this one runs.
        self.spare = self._fork_spare()

    def _fork_spare(self) -> _Spare:
        ours, theirs = socket.socketpair()
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:

            def shed() -> None:
                ours.close()
                self._shed_in_child()

            child.run(theirs, zygote=zygote, target=self.target, shed=shed)
        theirs.close()
        return _Spare(pid, ours)

    def _shed_in_child(self) -> None:
        """In a new child: drop the zygote's signal wake-up and every channel of its."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.sel.close()
        spares = [self.spare.sock] if self.spare else []
        for other in [self.ctl, *spares, *(t.conn for t in self.tasks.values())]:
            other.close()
        os.close(self.wake_r)
        os.close(self.wake_w)

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
            running = self.tasks.pop(pid, None)
            if running is None:
                continue
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(running.conn)
            _send_quietly(
                running.conn,
                TaskStatus(
                    status=os.waitstatus_to_exitcode(status),
                    killed=running.killed,
                    peak_rss_mb=max_rss_mb(usage),
                    seconds=time.monotonic() - running.started,
                    cpu_s=usage.ru_utime + usage.ru_stime,
                ),
            )
            running.conn.close()

    def _enforce(self) -> None:
        now = time.monotonic()
        for running in self.tasks.values():
            if running.killed:
                continue
            if now >= running.deadline:
                self._kill(running, "timeout")
                continue
            rss = rss_bytes(running.pid)
            if rss is not None and rss > running.ceiling_bytes:
                self._kill(running, "memory")

    @staticmethod
    def _kill(running: _Running, why: Killed) -> None:
        if running.killed is None:
            running.killed = why
            _kill_quietly(running.pid)

    def _shutdown(self) -> None:
        for running in self.tasks.values():
            self._kill(running, "cancelled")
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


def _send_quietly(conn: socket.socket, message: Message) -> None:
    # The caller may have gone away (cancelled); that is not the zygote's problem.
    with contextlib.suppress(OSError):
        send(conn, message)


# The process ----------------------------------------------------------------------------


def main(ctl_fd: int) -> int:
    ctl = socket.socket(fileno=ctl_fd)
    started = time.monotonic()
    try:
        frame = receive(ctl, Spec.model_validate_json)
        if frame is None:
            return 0
        spec = frame[0]
        warmup, target = _resolve(spec.warmup), _resolve(spec.target)
        details = warmup(spec.config) or {}
    except BaseException as exc:
        # A warm-up that raises is a broken install or configuration (an import that
        # fails, model weights that are missing): internal, unless it ran out of memory.
        kind = as_pipeline_error(exc).kind
        _send_quietly(ctl, StartFailed(error=f"{type(exc).__name__}: {exc}", kind=kind))
        return 1
    threads = thread_count()
    if threads > 1:
        # fork() copies only the calling thread; locks held by the others stay locked
        # forever in the child. Refuse rather than hang children at random.
        error = f"warm-up left {threads} threads; forking is unsafe"
        _send_quietly(ctl, StartFailed(error=error, kind=FailureKind.INTERNAL))
        return 1
    # Objects that exist now are shared with every child; keep the collector from
    # touching (and so copying) their pages.
    gc.freeze()
    anon_mb, file_mb = resident_mb()
    send(
        ctl,
        Hello(
            pid=os.getpid(),
            threads=threads,
            rss_mb=own_peak_rss_mb(),
            anon_mb=anon_mb,
            file_mb=file_mb,
            warmup_s=time.monotonic() - started,
            details=details,
        ),
    )
    Zygote(ctl, target).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
