"""Detection throughput against the cost of finding the dates at all.

Generates deterministic documents (default 10 MB of UTF-8 canonical text each) over many
blocks, in two scenarios:

* ``prose``: contract-like prose with dates in every recognised form, invalid and numeric
  dates, role keywords and relative effectiveness phrases;
* ``dense``: a date in about every third sentence and no relative effectiveness phrase
  anywhere (only "next"/"following" used otherwise), so no scan can stop early.

and times both of the following, alternating, over several runs, in wall-clock and process
CPU time (CPU is the one to trust on a shared machine, where neighbours inflate wall
time); the reported ratio is the median of the per-run ratios:

* baseline: one ``re.finditer`` pass of ``richdoc.temporal.DATE_PATTERN`` over the whole
  canonical text;
* detection: ``richdoc.detection.detect(projection, clarify=True)`` end to end, under the
  default rule set (contracts-v2), and under spec-v1 for comparison.

The budget (docs/detection.md) is contracts-v2's detection within 3x of the baseline, on
CPU time. ``python -m bench`` runs this as item 2; alone it prints one JSON
report and exits 1 when any scenario misses the budget.

    python -m bench.detection_bench [--mb 10] [--runs 5] [--quick]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/detection_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import ItemResult, Mode, Table, Target, interleaved, median_s, ratio
from richdoc.detection import Detection, detect
from richdoc.detection.ruleset import DetectionRules
from richdoc.graph import Node, Projection, Span, SpanKind
from richdoc.temporal import DATE_PATTERN
from richdoc_client.projection import (
    DocumentNode,
    DocumentProps,
    ProjectionSource,
    ProjectionStats,
)

BUDGET = 3.0
SEPARATOR = "\n\n"

SUBJECTS = [
    "The Supplier",
    "The Customer",
    "Each party",
    "The Licensee",
    "Müller GmbH",
    "The landlord",
    "The service provider",
]
VERBS = [
    "shall deliver",
    "must notify",
    "will invoice",
    "may terminate",
    "agrees to maintain",
    "is responsible for",
    "shall not assign",
]
OBJECTS = [
    "the goods listed in Schedule 2",
    "all reasonable costs of the audit",
    "the premises in good repair",
    "its obligations under this clause",
    "the licensed software — including updates",
    "written notice of any change of control",
    "the agreed service levels",
]
TAILS = [
    "within thirty days of receipt.",
    "without undue delay.",
    "at its own expense.",
    "in accordance with the price schedule.",
    "unless otherwise agreed in writing.",
    "as set out in the annex (référence A-12).",
]
ROLE_LEADS = [
    "This agreement is effective",
    "The amendment takes effect on",
    "Signed by both parties on",
    "Executed as of",
    "Dated",
    "Countersigned by the guarantor on",
    "Valid from",
    "With effect from",
    "The lease, commencing",
    "The signature date is",
]
RELATIVE = [
    "The new tariff is effective from the next quarter.",
    "Rent increases take effect at the start of the following month.",
    "The discount begins the next year.",
    "Reporting duties apply starting the following quarter.",
]
MONTHS = ["January", "Feb", "March", "Apr", "May", "June", "Jul", "August", "Sep", "October"]


def _date_text(rng: random.Random) -> str:
    year, month, day = rng.randint(2019, 2026), rng.randint(1, 12), rng.randint(1, 31)
    name = MONTHS[(month - 1) % len(MONTHS)]
    forms = [
        f"{year}-{month:02d}-{day:02d}",  # sometimes 31 April: found by the regex, invalid
        f"{day} {name} {year}",
        f"{name} {day}th, {year}",
        f"{day}/{month}/{year}",  # numeric: never a date
    ]
    return rng.choice(forms)


def _prose_sentence(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return f"{rng.choice(ROLE_LEADS)} {_date_text(rng)}."
    if roll < 0.10:
        return rng.choice(RELATIVE)
    if roll < 0.16:
        return f"Invoices issued before {_date_text(rng)} remain payable."
    return _plain_sentence(rng)


def _dense_sentence(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return f"{rng.choice(ROLE_LEADS)} {_date_text(rng)}."
    if roll < 0.35:
        return f"Invoices issued before {_date_text(rng)} remain payable."
    if roll < 0.45:
        return "The following items are next in line for review."
    return _plain_sentence(rng)


def _plain_sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}"


SCENARIOS: dict[str, Callable[[random.Random], str]] = {
    "prose": _prose_sentence,
    "dense": _dense_sentence,
}


def build_projection(scenario: str, target_bytes: int, seed: int) -> Projection:
    """Blocks of one to six sentences until the canonical text reaches ``target_bytes``."""
    sentence = SCENARIOS[scenario]
    rng = random.Random(seed)
    blocks: list[str] = []
    spans: list[Span] = []
    offset = 0
    while offset < target_bytes:
        block = " ".join(sentence(rng) for _ in range(rng.randint(1, 6)))
        size = len(block.encode("utf-8"))
        spans.append(
            Span(node=len(blocks) + 1, start=offset, end=offset + size, kind=SpanKind.PARAGRAPH)
        )
        blocks.append(block)
        offset += size + len(SEPARATOR)
    # Detection reads only the spans' slices: the blocks need no nodes of their own.
    nodes: list[Node] = [DocumentNode(id=0, props=DocumentProps(name="bench.docx"))]
    text = SEPARATOR.join(blocks)
    return Projection(
        source=ProjectionSource(name="bench.docx"),
        canonical_text=text,
        nodes=nodes,
        edges=[],
        spans=spans,
        stats=ProjectionStats.of_graph(nodes, [], spans, text),
    )


def measure(scenario: str, target_bytes: int, seed: int, runs: int) -> dict[str, Any]:
    projection = build_projection(scenario, target_bytes, seed)
    text = projection.canonical_text

    def baseline() -> int:
        return sum(1 for _ in DATE_PATTERN.finditer(text))

    def detection() -> Detection:
        return detect(projection, clarify=True)

    def spec_v1() -> Detection:
        return detect(projection, clarify=True, rules=DetectionRules.SPEC_V1)

    result = detection()  # warm-up, and the result to report
    spec_v1()
    # Baseline and detection alternate; each run's ratio is taken within the pair.
    samples = interleaved({"baseline": baseline, "detection": detection, "spec-v1": spec_v1}, runs)
    return {
        "text_bytes": len(text.encode("utf-8")),
        "blocks": len(projection.spans),
        "date_pattern_matches": baseline(),
        "baseline_finditer_s": median_s(samples["baseline"]),
        "detection_s": median_s(samples["detection"]),
        "ratio": ratio(samples["detection"], samples["baseline"]),
        "spec_v1_s": median_s(samples["spec-v1"]),
        "spec_v1_ratio": ratio(samples["spec-v1"], samples["baseline"]),
        "detection": {
            "rules": result.rules,
            "kinds": [a.kind.value for a in result.ambiguities],
            "stats": result.stats.model_dump(),
        },
    }


def run(mode: Mode, megabytes: float | None = None, runs: int | None = None) -> ItemResult:
    size = megabytes or (10.0 if mode is Mode.FULL else 0.5)
    rounds = runs or (5 if mode is Mode.FULL else 3)
    result = ItemResult("detection", "2. Detection against one re.finditer pass")
    scenarios = {name: measure(name, int(size * 1_000_000), SEED, rounds) for name in SCENARIOS}
    result.measurements = {"megabytes": size, "runs": rounds, "scenarios": scenarios}
    for name, m in scenarios.items():
        result.targets.append(
            Target(
                f"detect_vs_finditer[{name}]",
                f"contracts-v2 detect(clarify=True) / one DATE_PATTERN.finditer pass, "
                f"{size:g} MB {name}",
                m["ratio"]["cpu"],
                BUDGET,
                "x",
                "CPU time, median of the per-round ratios (all in this process)",
            )
        )
    result.tables.append(
        Table(
            "Medians per round (seconds)",
            [
                "scenario",
                "blocks",
                "date matches",
                "finditer CPU s",
                "detect CPU s",
                "ratio CPU",
                "ratio wall",
                "spec-v1 ratio CPU",
            ],
            [
                [
                    name,
                    m["blocks"],
                    m["date_pattern_matches"],
                    m["baseline_finditer_s"]["cpu"],
                    m["detection_s"]["cpu"],
                    m["ratio"]["cpu"],
                    m["ratio"]["wall"],
                    m["spec_v1_ratio"]["cpu"],
                ]
                for name, m in scenarios.items()
            ],
        )
    )
    return result


SEED = 61


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=None, help="canonical text size in MB")
    parser.add_argument("--runs", type=int, default=None, help="timed runs per measurement")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    return run(Mode.QUICK if args.quick else Mode.FULL, args.mb, args.runs).print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
