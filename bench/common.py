"""What every benchmark item shares: timing, interleaved rounds, targets and results.

Timings are taken in wall-clock and process CPU time. This machine is shared: other
processes inflate wall time, but barely move the CPU time a measurement consumes, so the
verdicts use CPU time wherever the work stays in this process (and say so). Competing
measurements run interleaved, round by round, and a ratio is the median of the per-round
ratios: load from neighbours then shifts both sides of a ratio instead of one of them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "layers" / "docling"
TOOLS = ROOT / "tools"


class Mode(StrEnum):
    """``full`` is the committed configuration; ``quick`` a smoke run of every code path."""

    FULL = "full"
    QUICK = "quick"


# ---- timing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One timed run: wall-clock and this process's CPU time (user + system), seconds."""

    wall: float
    cpu: float


def timed(action: Callable[[], object], *, collect: bool = False) -> Sample:
    """Time ``action``; ``collect`` first runs a full garbage collection so that every
    sample starts from a collected heap (otherwise a collection triggered by earlier
    garbage lands on whichever measurement happens to allocate next)."""
    if collect:
        gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return Sample(time.perf_counter() - wall, time.process_time() - cpu)


def interleaved(
    actions: Mapping[str, Callable[[], object]], rounds: int, *, collect: bool = False
) -> dict[str, list[Sample]]:
    """Run every action once per round, alternating the order between rounds (so that
    no action always runs right after the same neighbour)."""
    samples: dict[str, list[Sample]] = {name: [] for name in actions}
    names = list(actions)
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            samples[name].append(timed(actions[name], collect=collect))
    return samples


def median_s(samples: Sequence[Sample]) -> dict[str, float]:
    return {
        "wall": round(statistics.median(s.wall for s in samples), 4),
        "cpu": round(statistics.median(s.cpu for s in samples), 4),
    }


def ratio(numerator: Sequence[Sample], denominator: Sequence[Sample]) -> dict[str, float]:
    """Median of the per-round ratios, in wall and CPU time."""
    pairs = list(zip(numerator, denominator, strict=True))
    return {
        "wall": round(statistics.median(n.wall / d.wall for n, d in pairs), 3),
        "cpu": round(statistics.median(n.cpu / d.cpu for n, d in pairs), 3),
    }


def peak_rss_mb() -> float:
    """This process's peak resident set size, in MB.

    Read from ``VmHWM`` (the high-water mark of this address space), not from
    ``ru_maxrss``: Linux carries ``ru_maxrss`` across fork and exec, so a fresh
    interpreter started by a large parent would report the parent's size.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> bool:
    """Reset the high-water mark to the current resident set (Linux 4.0+), so that the
    next ``peak_rss_mb`` covers only what runs in between. False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def growth_exponent(small: float, large: float, factor: float) -> float:
    """``b`` in ``t ~ n**b`` between two sizes ``factor`` apart (1.0 = linear)."""
    return round(_log(large / small) / _log(factor), 3)


def _log(x: float) -> float:
    import math

    return math.log(x)


# ---- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One target of the suite: a measured value against its limit."""

    id: str
    description: str
    measured: float
    limit: float
    unit: str  # "x" (ratio), "s", "count", "exponent"
    basis: str  # what exactly was measured, in words
    at_least: bool = False  # True when the measured value must reach the limit

    @property
    def met(self) -> bool:
        return self.measured >= self.limit if self.at_least else self.measured <= self.limit

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "met": self.met}


@dataclass(frozen=True)
class Table:
    """A table for the markdown report."""

    title: str
    headers: list[str]
    rows: list[list[Any]]


@dataclass
class ItemResult:
    name: str
    title: str
    targets: list[Target] = field(default_factory=list)
    measurements: dict[str, Any] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "targets": [t.to_dict() for t in self.targets],
            "measurements": self.measurements,
            "tables": [asdict(t) for t in self.tables],
            "notes": list(self.notes),
        }

    def print_and_exit_code(self) -> int:
        """An item run as a script: its result as JSON on stdout; 1 if a target was missed."""
        print(json.dumps(self.to_dict(), indent=1, default=str))
        return 0 if all(t.met for t in self.targets) else 1


def item_main(
    doc: str | None,
    run: Callable[..., ItemResult],
    *,
    repeat: str | None = None,
) -> int:
    """An item run as a script (``python -m bench.<item>_bench [--quick]``): ``run`` in
    the mode asked for; where ``repeat`` says what a round is, ``--repeat N`` rounds."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    if repeat is not None:
        parser.add_argument("--repeat", type=int, default=None, help=repeat)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    mode = Mode.QUICK if args.quick else Mode.FULL
    result: ItemResult = run(mode) if repeat is None else run(mode, args.repeat)
    return result.print_and_exit_code()


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table cell: few significant digits, no float noise."""
    if isinstance(value, bool) or value is None:
        return "-" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def mb(n_bytes: int) -> float:
    return round(n_bytes / 1_000_000, 2)
