"""Functions whose code is another checkout's (another release's), each invocation in a
process of its own, as Lambda runs each function in a sandbox with its own code and layer.

The stack's own handlers run in this process (``lambdas``), importing this checkout's
``richdoc`` package; a process imports one ``richdoc``, so the code of another release (a
stack deployed from an earlier template, before an upgrade) cannot run beside it. Such an
invocation runs in a sandbox process (``sandbox_child``) whose ``PYTHONPATH`` is that
release's ``layers/docling`` and the function's folder, with the function's environment as
its configuration holds it, the Lambda variables, and the credentials of its execution
role's session (a strict stack's IAM decides its requests as it decides the in-process
ones'); it reaches the emulation by its URL, so the stack must be served
(``EmbeddedStack(server_port=...)``). A sandbox serves one invocation at a time and is
kept for the next of the same code and configuration; one that outlives the function's
timeout is killed (``Sandbox.Timedout``), as Lambda stops it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from richdoc_tools.local.cloudformation.template import HandlerSource

CHILD = Path(__file__).with_name("sandbox_child.py")


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox process is made for: one function's code and environment."""

    source: HandlerSource
    environment: tuple[tuple[str, str], ...]


@dataclass
class _Sandbox:
    process: subprocess.Popen[bytes]
    requests: IO[str]
    answers: IO[str]


@dataclass
class Sandboxes:
    """The sandbox processes of an embedded stack, kept per ``SandboxSpec``."""

    log: Path | None = None  # where the sandboxes' output goes (None: this process's)
    started: int = 0  # sandbox processes started so far
    _idle: dict[SandboxSpec, list[_Sandbox]] = field(default_factory=dict)
    _all: list[_Sandbox] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def invoke(
        self,
        source: HandlerSource,
        environment: Mapping[str, str],
        event: Any,
        context: Mapping[str, Any],
        timeout_s: float,
    ) -> dict[str, Any]:
        """Run one invocation: ``{"result": ...}`` or Lambda's error envelope."""
        spec = SandboxSpec(source, tuple(sorted(environment.items())))
        sandbox = self._take(spec)
        request = {"event": event, "context": {**context, "remaining_ms": timeout_s * 1000}}
        sandbox.requests.write(json.dumps(request) + "\n")
        sandbox.requests.flush()
        ready, _, _ = select.select([sandbox.answers], [], [], timeout_s)
        if not ready:  # Lambda stops a sandbox at its timeout
            self._kill(sandbox)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            return {
                "errorType": "Sandbox.Timedout",
                "errorMessage": f"{stamp} Task timed out after {timeout_s:.2f} seconds",
            }
        line = sandbox.answers.readline()
        if not line:  # the process died (killed, out of memory)
            self._kill(sandbox)
            code = sandbox.process.wait()
            return {
                "errorType": "Runtime.ExitError",
                "errorMessage": f"RequestId: {context['aws_request_id']} Error: Runtime exited "
                f"with error: exit status {code}",
            }
        with self._lock:
            self._idle.setdefault(spec, []).append(sandbox)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stop(self) -> None:
        with self._lock:
            sandboxes, self._all, self._idle = self._all, [], {}
        for sandbox in sandboxes:
            self._kill(sandbox)

    def _take(self, spec: SandboxSpec) -> _Sandbox:
        with self._lock:
            idle = self._idle.get(spec)
            if idle:
                return idle.pop()
        return self._start(spec)

    def _start(self, spec: SandboxSpec) -> _Sandbox:
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()
        environment = dict(spec.environment)
        source = spec.source
        assert source.layer_dir is not None, "a sandbox runs another checkout's code"
        environment["PYTHONPATH"] = os.pathsep.join([str(source.layer_dir), str(source.code_dir)])
        with contextlib.ExitStack() as opened:
            output = opened.enter_context(open(self.log, "ab")) if self.log else None
            opened.callback(os.close, requests_read)  # the child has its own copies
            opened.callback(os.close, answers_write)
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-P",  # the script's folder (this package) is not on its path
                    str(CHILD),
                    str(requests_read),
                    str(answers_write),
                    str(source.module_path),
                    source.function_name,
                ],
                pass_fds=(requests_read, answers_write),
                env=environment,
                cwd=source.code_dir,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
            )
        sandbox = _Sandbox(
            process,
            os.fdopen(requests_write, "w"),
            os.fdopen(answers_read, "r"),
        )
        with self._lock:
            self._all.append(sandbox)
            self.started += 1
        return sandbox

    def _kill(self, sandbox: _Sandbox) -> None:
        sandbox.process.kill()
        sandbox.process.wait()
        for stream in (sandbox.requests, sandbox.answers):
            with contextlib.suppress(OSError):  # the pipe's other end is gone with it
                stream.close()
        with self._lock:
            if sandbox in self._all:
                self._all.remove(sandbox)
