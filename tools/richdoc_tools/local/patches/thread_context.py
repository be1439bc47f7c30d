"""Threads act for the thread that started them (``callers``).

A handler's work can move to other threads: s3transfer's pool for downloads and uploads,
a ``ThreadPoolExecutor``, a plain ``Thread``. On AWS they run in the same sandbox with the
same credentials. ``Thread.start`` records the starting thread's caller on the new thread,
and ``ThreadPoolExecutor.submit`` runs each task as its submitter (a pool's threads
outlive the task that started them).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests import callers

START = "threading.Thread.start"
SUBMIT = "concurrent.futures.thread.ThreadPoolExecutor.submit"
PATCHED = (START, SUBMIT)


def inheriting(start: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    @functools.wraps(start)
    def start_inheriting(thread: threading.Thread) -> None:
        caller = callers.current()
        if caller is not callers.OPERATOR and not hasattr(thread, callers.INHERITED):
            setattr(thread, callers.INHERITED, caller)
        start(thread)

    return start_inheriting


def as_submitter(submit: Callable[..., Future[Any]]) -> Callable[..., Future[Any]]:
    @functools.wraps(submit)
    def submit_as_submitter(
        pool: ThreadPoolExecutor, fn: Callable[..., object], /, *args: object, **kwargs: object
    ) -> Future[Any]:
        caller = callers.current()
        if caller is callers.OPERATOR:
            return submit(pool, fn, *args, **kwargs)

        def run_as_submitter(*a: object, **k: object) -> object:
            with callers.acting_as(caller):
                return fn(*a, **k)

        return submit(pool, run_as_submitter, *args, **kwargs)

    return submit_as_submitter


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, START, inheriting(original(START)))
    replace(exit_stack, SUBMIT, as_submitter(original(SUBMIT)))
