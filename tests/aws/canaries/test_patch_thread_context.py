"""Canary: threads a handler starts act for it: a plain thread, a pool's task, a task of a
pool an operator started (patches.thread_context)."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from richdoc_tools.local.patches import thread_context
from richdoc_tools.local.requests import callers

INVOCATION = callers.Invocation(id="i", stage="ParseTier1Function", key="k", pages="", attempt=1)
CALLER = callers.Caller(None, INVOCATION)


def test_started_threads_and_pool_tasks_act_for_their_starter() -> None:
    seen: dict[str, callers.Caller] = {}
    pool = ThreadPoolExecutor(max_workers=1)  # started by an operator, reused below
    pool.submit(lambda: None).result()
    with contextlib.ExitStack() as exit_stack:
        thread_context.install(exit_stack)
        with callers.acting_as(CALLER):
            thread = threading.Thread(target=lambda: seen.update(thread=callers.current()))
            thread.start()
            thread.join()
            seen["reused pool"] = pool.submit(callers.current).result()
            with ThreadPoolExecutor(max_workers=2) as fresh:
                seen["new pool"] = fresh.submit(callers.current).result()
        seen["operator's task"] = pool.submit(callers.current).result()
    pool.shutdown()
    assert seen == {
        "thread": CALLER,
        "reused pool": CALLER,
        "new pool": CALLER,
        "operator's task": callers.OPERATOR,
    }
