"""What an invocation meets: the one place the Lambda runtime asks about failures.

Before a handler runs, a test's scripted failure for it comes first
(``scripted.FailureScript``), then its injected fault (``injected.FaultInjector``):
refused or dropped (the handler never runs: a ``PlatformError``), or a sandbox crash while
it runs (a ``Crash``, which happens at the invocation's k-th AWS call or as it returns).
Every invocation is numbered among the attempts of the same work when it begins and
forgotten when it ends, which is what the injected faults' draws and the transaction
holds decide on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from richdoc_tools.local.faults.injected import FaultInjector, integration_of
from richdoc_tools.local.faults.scripted import FailureScript, PlatformError
from richdoc_tools.local.requests.callers import Invocation


@dataclass(frozen=True)
class Crash:
    """A sandbox crash planned for a running invocation: ``happened`` is set when it
    happens; its caller then gets ``error``."""

    happened: threading.Event
    error: PlatformError


class InvocationFailures:
    """Both kinds of failure a stack makes on purpose, as its invocations meet them: a
    test's scripted failures (``script``) and the faults injected at a rate
    (``injector``)."""

    def __init__(
        self, script: FailureScript | None = None, injector: FaultInjector | None = None
    ) -> None:
        self.script = script or FailureScript()
        self.injector = injector or FaultInjector()

    def begin(self, logical_id: str, event: Any) -> Invocation:
        """A new invocation of the function ``logical_id`` with ``event``."""
        return self.injector.begin(*self.injector.work_of(logical_id, event))

    def end(self, invocation: Invocation) -> None:
        self.injector.end(invocation)

    def before_run(
        self, invocation: Invocation, logical_id: str, event: Any, wake: threading.Event
    ) -> PlatformError | Crash | None:
        """The failure this invocation meets: refused before it runs, a crash while it
        runs (``wake`` is set with ``Crash.happened``), or none."""
        scripted = self.script.take(logical_id, event)
        if scripted is not None:
            return scripted
        injected = self.injector.invocation_fault(invocation, logical_id, integration_of(event))
        if injected is None:
            return None
        error = PlatformError(injected.error_type, injected.message)
        if not injected.crash_at:
            return error  # refused, or lost: the handler never runs
        happened = self.injector.crashed(invocation, wake=wake)
        # The invocation is running, so the injector holds its planned crash.
        return Crash(happened, error) if happened is not None else None
