"""The embedded stack's delivery threads: what each event loop shares."""

from __future__ import annotations

import threading


class EventLoop(threading.Thread):
    """A delivery thread: ``tick`` until stopped, waiting ``interval_s`` after an idle one."""

    def __init__(self, name: str, interval_s: float) -> None:
        super().__init__(name=name, daemon=True)
        self.interval_s = interval_s
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []

    def stop(self) -> None:
        self.stopping.set()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                busy = self.tick()
            except Exception as exc:  # keep delivering; surface the error to the stack
                self.errors.append(exc)
                busy = False
            if not busy:
                self.wait(self.interval_s)

    def wait(self, timeout_s: float) -> None:
        """Until the next tick is worth making (or ``timeout_s``, or a stop)."""
        self.stopping.wait(timeout_s)

    def tick(self) -> bool:
        """Deliver what there is; whether there was anything."""
        raise NotImplementedError
