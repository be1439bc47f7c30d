"""Gates: a step of the embedded stack that stops until the test lets it through, so a
race (a cancel against a finishing run, a second redrive against the first) is driven in
an order the test chooses, never by timing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

# Long enough for any machine; a gate a test forgot to open fails the test, not the suite.
HOLD_S = 120.0


class Gate:
    """Calls that pass ``wrap``'s wrapper stop at the gate until ``open``; ``reached``
    waits until one has arrived."""

    def __init__(self) -> None:
        self._arrived = threading.Event()
        self._open = threading.Event()
        self.arrivals = 0

    def wait_here(self) -> None:
        self.arrivals += 1
        self._arrived.set()
        if not self._open.wait(HOLD_S):
            raise TimeoutError("the test never opened the gate")

    def reached(self, timeout_s: float = HOLD_S) -> bool:
        return self._arrived.wait(timeout_s)

    def open(self) -> None:
        self._open.set()

    def before(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, called once the gate is open."""

        def gated(*args: Any, **kwargs: Any) -> Any:
            self.wait_here()
            return function(*args, **kwargs)

        return gated

    def after(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, whose caller gets its result (or error) once the gate is open."""

        def gated(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            finally:
                self.wait_here()

        return gated
