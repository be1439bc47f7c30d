"""Function output on the embedded stack goes to the function log, as it does on AWS.

On AWS, whatever a function writes (Powertools' JSON log lines, EMF metric lines, the parse
worker's diagnostics) goes to CloudWatch Logs, never to the operator's terminal. Here the
functions are threads of the caller's process, and there are four ways their output could
reach the terminal; ``FunctionLog`` closes each of them for the stack's life:

* ``print`` and ``sys.stdout``/``sys.stderr`` writes (EMF metrics are printed): both streams
  are replaced by routers that send what a function thread writes (threads named
  ``lambda-*``) to the log file, whole lines at a time so concurrent JSON lines never
  interleave, and everything else to the console.
* ``logging`` handlers bound to a stream before the routers existed: Powertools' Logger binds
  ``sys.stdout`` when it is created, and a handler module imported under pytest's capture or
  under rich's progress bar (which swaps ``sys.stdout`` while it draws) would keep that
  stream. Handlers writing to a standard stream are pointed at the router, at start and
  again after every handler import (``route_logging``).
* descriptor-level writes (the parse worker's zygote inherits fd 2; native libraries): with
  ``capture_descriptors``, fds 1 and 2 point at the log file while the console keeps private
  duplicates of the original descriptors.
* werkzeug's request log in server mode is silenced by the stack itself (see ``stack``).

Everything is undone through the caller's ``ExitStack``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from unittest import mock

from aws_lambda_powertools.logging.constants import LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER

from richdoc_tools.local.runtime.lambdas import FUNCTION_THREAD_PREFIX


def in_function() -> bool:
    """True on a thread that runs a Lambda handler (see lambdas.LambdaRuntime)."""
    return threading.current_thread().name.startswith(FUNCTION_THREAD_PREFIX)


class FunctionOutputRouter(io.TextIOBase):
    """A standard stream that sends function threads' writes to the log, whole lines at a
    time, and every other thread's writes to the console."""

    def __init__(self, console: IO[str], log: IO[str], log_lock: threading.Lock) -> None:
        self.console = console
        self.log = log
        self._log_lock = log_lock
        self._partial = threading.local()

    def write(self, text: str) -> int:
        if not in_function():
            return self.console.write(text)
        pending = getattr(self._partial, "text", "") + text
        complete, newline, rest = pending.rpartition("\n")
        if newline:
            with self._log_lock:
                self.log.write(complete + newline)
        self._partial.text = rest
        return len(text)

    def flush(self) -> None:
        if in_function():
            rest = getattr(self._partial, "text", "")
            if rest:
                self._partial.text = ""
                with self._log_lock:
                    self.log.write(rest)
        with contextlib.suppress(ValueError):  # a console closed under us (interpreter exit)
            self.console.flush()
        with self._log_lock:
            self.log.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.console.isatty()

    def fileno(self) -> int:
        return self.console.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.console, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.console, "errors", None)


class FunctionLog:
    """Routes function output to ``path`` (appended, line-buffered) for the stack's life."""

    def __init__(self, path: Path, *, capture_descriptors: bool = False) -> None:
        self.path = path
        self.capture_descriptors = capture_descriptors
        self.stdout: FunctionOutputRouter | None = None
        self.stderr: FunctionOutputRouter | None = None
        self._replaced: dict[int, str] = {}  # id of a replaced stream -> "stdout" | "stderr"
        self._exit: contextlib.ExitStack | None = None
        self._lock = threading.Lock()

    def open(self, exit_stack: contextlib.ExitStack) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        log = exit_stack.enter_context(self.path.open("a", encoding="utf-8", buffering=1))
        console_out, console_err = sys.stdout, sys.stderr
        self._replaced = {
            id(stream): name
            for stream, name in (
                (sys.__stdout__, "stdout"),
                (sys.__stderr__, "stderr"),
                (console_out, "stdout"),
                (console_err, "stderr"),
            )
            if stream is not None
        }
        if self.capture_descriptors:
            console_out, console_err = self._capture_descriptors(exit_stack, log)
        log_lock = self._log_lock = threading.Lock()
        self._log = log
        self.stdout = FunctionOutputRouter(console_out, log, log_lock)
        self.stderr = FunctionOutputRouter(console_err, log, log_lock)
        exit_stack.enter_context(mock.patch.object(sys, "stdout", self.stdout))
        exit_stack.enter_context(mock.patch.object(sys, "stderr", self.stderr))
        # Handlers rebound later (route_logging) are restored before the streams are.
        self._exit = exit_stack.enter_context(contextlib.ExitStack())
        exit_stack.callback(self._close)
        self.route_logging()

    def _close(self) -> None:
        with self._lock:
            self._exit = None

    def _capture_descriptors(
        self, exit_stack: contextlib.ExitStack, log: IO[str]
    ) -> tuple[IO[str], IO[str]]:
        """Point fds 1 and 2 at the log; return console streams on copies of the originals."""
        consoles = []
        for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
            stream.flush()
            saved = os.dup(fd)
            console = open(  # noqa: SIM115 - closed by the exit stack
                saved,
                "w",
                encoding=getattr(stream, "encoding", None) or "utf-8",
                errors=getattr(stream, "errors", None) or "strict",
                buffering=1,
            )
            exit_stack.callback(console.close)
            exit_stack.callback(os.dup2, saved, fd)
            exit_stack.callback(console.flush)
            consoles.append(console)
        log.flush()
        for fd in (1, 2):
            os.dup2(log.fileno(), fd)
        return consoles[0], consoles[1]

    @contextlib.contextmanager
    def over_current_streams(self) -> Iterator[None]:
        """Inside the block, route what functions print away from the standard streams in
        force now, whoever replaced the routers since (pytest's capture of one test): a
        function finishing in the background (the notifier after a job ended) would
        otherwise print into that test's captured output."""
        if self._exit is None:
            yield
            return
        out = FunctionOutputRouter(sys.stdout, self._log, self._log_lock)
        err = FunctionOutputRouter(sys.stderr, self._log, self._log_lock)
        with mock.patch.object(sys, "stdout", out), mock.patch.object(sys, "stderr", err):
            yield

    def route_logging(self) -> None:
        """Point at the routers every logging handler that writes to a standard stream,
        and every Powertools Logger's handler (bound to whatever ``sys.stdout`` was when
        its module was first imported, possibly by another test or tool)."""
        with self._lock:
            if self._exit is None or self.stdout is None or self.stderr is None:
                return
            for handler, powertools in _stream_handlers():
                stream = handler.__dict__.get("stream")
                if stream is None or stream in (self.stdout, self.stderr):
                    continue
                name = self._replaced.get(id(stream), "stdout" if powertools else None)
                if name is None:
                    continue
                router = self.stderr if name == "stderr" else self.stdout
                self._exit.enter_context(mock.patch.object(handler, "stream", router))


def _stream_handlers() -> list[tuple[logging.StreamHandler[IO[str]], bool]]:
    """(handler, whether it is a Powertools Logger's) for every stream handler."""
    loggers = [logging.getLogger()] + [
        logger
        for logger in list(logging.Logger.manager.loggerDict.values())
        if isinstance(logger, logging.Logger)
    ]
    return [
        (handler, getattr(logger, LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER, None) is handler)
        for logger in loggers
        for handler in list(logger.handlers)
        if isinstance(handler, logging.StreamHandler)
        and not isinstance(handler, logging.FileHandler)
    ]
