"""Contract quality: the detector on real contracts with lawyers' labels, per rule set.

Item ``contracts`` (``run``): the 128 contracts of ``bench/data/contracts-dev`` (CUAD v1,
CC BY 4.0; its README), each TXT parsed as Markdown (the ``md`` format reads ``.txt``),
projected and detected with clarify under ``spec-v1`` and ``contracts-v2``, in-process as
the handlers run them. What a contract reviewer expects (the data's README) is scored:

* conflicting_dates: expected on a ``diff`` contract whose labelled dates are written in
  its text, on no other contract; precision and recall;
* relative_date: expected on a ``rel`` contract (effectiveness that hangs on an event),
  on no other; precision and recall;
* false undated: the share of contracts whose labelled date is written in the text that
  are reported undated;
* both dates in evidence: the share of expected conflicts whose emitted candidates hold
  both labelled dates;

over the development part, the held-out part (the data's README: every third contract of
each stratum by the SHA-256 of its name, never looked at while writing the rules) and
both. Every miss is listed with its failure class (what was emitted instead, or the
stratum a false alarm fell on).

Item ``contracts_pdf`` (``run_pdf_parity``): the 25 contracts that are there as PDF too go
through ``richdoc run`` (the embedded stack, the deployed rule set) as PDF and as TXT, and
the ambiguity of each PDF is compared with its TXT's (kind and candidate labels).

    python -m bench.contracts_bench [--quick] [--pdf]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: python bench/contracts_bench.py
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "layers" / "docling")]

from bench.common import ROOT, ItemResult, Mode, Table, Target

DATA = ROOT / "bench" / "data" / "contracts-dev"
RULE_SETS = ("spec-v1", "contracts-v2")
PARTS = ("development", "held-out", "all")
# The targets for contracts-v2, on all of contracts-dev.
TARGETS = {
    "conflicts_precision": 0.9,
    "conflicts_recall": 0.9,
    "relative_recall": 0.8,
    "relative_precision": 0.9,
    "both_dates_in_evidence": 0.8,
}
FALSE_UNDATED_TARGET = 0.01
# A note of the data that says a labelled date is nowhere in the TXT.
NOT_WRITTEN = "not written in the TXT"


@dataclass(frozen=True)
class Contract:
    file: str
    pdf: str | None
    stratum: str
    agreement_date: date | None
    effective_date: date | None
    notes: str
    held_out: bool

    @property
    def dates_written(self) -> bool:
        return NOT_WRITTEN not in self.notes

    @property
    def conflict_expected(self) -> bool:
        return self.stratum == "diff" and self.dates_written

    @property
    def relative_expected(self) -> bool:
        return self.stratum == "rel"

    @property
    def dated(self) -> bool:
        """Its labelled date is written in its text: never undated."""
        return (self.agreement_date or self.effective_date) is not None and self.dates_written


def _date(value: str) -> date | None:
    return date.fromisoformat(value) if value else None


def contracts(data: Path = DATA) -> list[Contract]:
    """The manifest's contracts, each in the development or the held-out part."""
    csv.field_size_limit(1 << 26)
    with (data / "MANIFEST.tsv").open(encoding="utf-8", newline="") as manifest:
        rows = list(csv.DictReader(manifest, delimiter="\t"))
    held: set[str] = set()
    for stratum in sorted({row["stratum"] for row in rows}):
        names = sorted(
            (row["file"] for row in rows if row["stratum"] == stratum),
            key=lambda name: hashlib.sha256(name.encode()).hexdigest(),
        )
        held.update(name for index, name in enumerate(names) if index % 3 == 2)
    return [
        Contract(
            file=row["file"],
            pdf=row["pdf"] if row["pdf"] != "-" else None,
            stratum=row["stratum"],
            agreement_date=_date(row["agreement_date"]),
            effective_date=_date(row["effective_date"]),
            notes=row["notes"],
            held_out=row["file"] in held,
        )
        for row in rows
    ]


@dataclass
class Outcome:
    """What detection emitted for one contract, and (contracts-v2) the document's own
    dates it read: those that say when the agreement was made, and its effective dates."""

    contract: Contract
    kind: str | None
    candidate_dates: set[date] = field(default_factory=set)
    labels: list[str] = field(default_factory=list)
    made: set[date] | None = None
    effective: set[date] | None = None


def _emitted(contract: Contract, detection: Any) -> Outcome:
    from richdoc.temporal import MICROS_PER_DAY

    if not detection.ambiguities:
        return Outcome(contract, None)
    ambiguity = detection.ambiguities[0]
    epoch = date(1970, 1, 1).toordinal()
    dates = {
        date.fromordinal(epoch + c.validFrom // MICROS_PER_DAY)
        for c in ambiguity.candidates
        if c.validFrom is not None
    }
    return Outcome(contract, ambiguity.kind.value, dates, [c.label for c in ambiguity.candidates])


def detect_all(selected: list[Contract], data: Path = DATA) -> dict[str, list[Outcome]]:
    """Each contract parsed, projected and detected under every rule set."""
    from richdoc.detection import detect
    from richdoc.detection.contracts import gather
    from richdoc.detection.own import agreement_side, own_dates
    from richdoc.detection.ruleset import DetectionRules
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file, shared_worker
    from richdoc.projection import load_docling, project
    from richdoc_client.projection import ProjectionSource

    worker, limits = shared_worker(), ParseLimits.resolve()
    outcomes: dict[str, list[Outcome]] = {rules: [] for rules in RULE_SETS}
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-contracts-") as tmp:
        docling = Path(tmp) / "docling.json"
        for contract in selected:
            parse_file(data / "txt" / contract.file, docling, limits, worker=worker)
            projection = project(
                load_docling(docling.read_bytes()), ProjectionSource(name=contract.file)
            )
            for rules in RULE_SETS:
                found = detect(projection, clarify=True, rules=DetectionRules(rules))
                outcomes[rules].append(_emitted(contract, found))
            own = own_dates(gather(projection))
            outcome = outcomes["contracts-v2"][-1]
            outcome.made = {d.mention.value for d in agreement_side(own)}
            outcome.effective = {d.mention.value for d in own.effective}
    return outcomes


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 3) if denominator else None


def score(outcomes: list[Outcome]) -> dict[str, Any]:
    """The reviewer's figures over some outcomes, and every miss with its class."""
    conflict: Counter[str] = Counter()
    relative: Counter[str] = Counter()
    undated = dated = both = expected_conflicts = 0
    roles: Counter[str] = Counter()
    misses: list[dict[str, str]] = []

    def miss(outcome: Outcome, what: str, failure: str) -> None:
        misses.append({"file": outcome.contract.file, "miss": what, "class": failure})

    for outcome in outcomes:
        c, kind = outcome.contract, outcome.kind
        emitted = kind or "nothing"
        if c.conflict_expected:
            expected_conflicts += 1
            if kind == "conflicting_dates":
                conflict["tp"] += 1
                wanted = {d for d in (c.agreement_date, c.effective_date) if d is not None}
                if wanted <= outcome.candidate_dates:
                    both += 1
                else:
                    lost = sorted(d.isoformat() for d in wanted - outcome.candidate_dates)
                    miss(outcome, "labelled date not in evidence", "missing " + ", ".join(lost))
            else:
                conflict["fn"] += 1
                miss(outcome, "conflict missed", f"{emitted} emitted")
        elif kind == "conflicting_dates":
            conflict["fp"] += 1
            miss(outcome, "false conflict", f"on a {c.stratum} contract")
        if c.relative_expected:
            if kind == "relative_date":
                relative["tp"] += 1
            else:
                relative["fn"] += 1
                miss(outcome, "relative date missed", f"{emitted} emitted")
        elif kind == "relative_date":
            relative["fp"] += 1
            miss(outcome, "false relative date", f"on a {c.stratum} contract")
        _roles_read(outcome, roles)
        if c.dated:
            dated += 1
            if kind == "undated":
                undated += 1
                miss(outcome, "false undated", "its labelled date not read")
    return {
        "contracts": len(outcomes),
        "conflicts_precision": _ratio(conflict["tp"], conflict["tp"] + conflict["fp"]),
        "conflicts_recall": _ratio(conflict["tp"], conflict["tp"] + conflict["fn"]),
        "conflicts": dict(conflict),
        "relative_precision": _ratio(relative["tp"], relative["tp"] + relative["fp"]),
        "relative_recall": _ratio(relative["tp"], relative["tp"] + relative["fn"]),
        "relative": dict(relative),
        "false_undated": _ratio(undated, dated),
        "dated_contracts": dated,
        "both_dates_in_evidence": _ratio(both, expected_conflicts),
        "expected_conflicts": expected_conflicts,
        # contracts-v2's roles against the labels: the labelled agreement date among the
        # dates that say when the agreement was made, the labelled effective date among
        # its effective dates (or, when it writes none, among the former).
        "agreement_date_read": _ratio(roles["agreement_ok"], roles["agreement"]),
        "effective_date_read": _ratio(roles["effective_ok"], roles["effective"]),
        "misses": misses,
    }


def _roles_read(outcome: Outcome, roles: Counter[str]) -> None:
    c = outcome.contract
    if outcome.made is None or outcome.effective is None or not c.dates_written:
        return
    if c.agreement_date is not None:
        roles["agreement"] += 1
        roles["agreement_ok"] += c.agreement_date in outcome.made
    if c.effective_date is not None and not c.relative_expected:
        roles["effective"] += 1
        written = outcome.effective or outcome.made
        roles["effective_ok"] += c.effective_date in written


def _part(outcomes: list[Outcome], part: str) -> list[Outcome]:
    if part == "all":
        return outcomes
    return [o for o in outcomes if o.contract.held_out == (part == "held-out")]


def run(mode: Mode) -> ItemResult:
    result = ItemResult(
        "contracts", "Contract quality: detection on real contracts (contracts-dev)"
    )
    every = contracts()
    selected = every if mode is Mode.FULL else every[::8]
    outcomes = detect_all(selected)
    scores = {
        rules: {part: score(_part(outcomes[rules], part)) for part in PARTS} for rules in RULE_SETS
    }
    result.measurements = {"contracts": len(selected), "scores": scores}
    best = scores["contracts-v2"]["all"]
    for name, limit in TARGETS.items():
        result.targets.append(
            Target(
                f"contracts_v2_{name}",
                f"contracts-v2 {name.replace('_', ' ')}, all of contracts-dev",
                best[name] if best[name] is not None else 0.0,
                limit,
                "ratio",
                "see docs/detection.md, contracts-v2: measured",
                at_least=True,
            )
        )
    result.targets.append(
        Target(
            "contracts_v2_false_undated",
            "contracts-v2 share of dated contracts reported undated",
            best["false_undated"] or 0.0,
            FALSE_UNDATED_TARGET,
            "ratio",
            "contracts whose labelled date is written in the text",
        )
    )
    columns = [
        "rule set",
        "part",
        "contracts",
        "conflicts P",
        "conflicts R",
        "relative P",
        "relative R",
        "false undated",
        "both dates in evidence",
        "agreement date read",
        "effective date read",
    ]
    result.tables.append(
        Table(
            "Per rule set and part",
            columns,
            [
                [
                    rules,
                    part,
                    s["contracts"],
                    s["conflicts_precision"],
                    s["conflicts_recall"],
                    s["relative_precision"],
                    s["relative_recall"],
                    s["false_undated"],
                    s["both_dates_in_evidence"],
                    s["agreement_date_read"],
                    s["effective_date_read"],
                ]
                for rules in RULE_SETS
                for part in PARTS
                for s in (scores[rules][part],)
            ],
        )
    )
    classes = Counter(
        (rules, m["miss"], m["class"])
        for rules in RULE_SETS
        for m in scores[rules]["all"]["misses"]
    )
    result.tables.append(
        Table(
            "Misses by failure class (all contracts)",
            ["rule set", "miss", "class", "contracts"],
            [[r, miss, failure, n] for (r, miss, failure), n in sorted(classes.items())],
        )
    )
    if mode is Mode.QUICK:
        result.notes.append(f"quick: {len(selected)} of {len(every)} contracts (every eighth)")
    return result


def run_pdf_parity(mode: Mode) -> ItemResult:
    """The contracts there as PDF too, through ``richdoc run`` as PDF and as TXT."""
    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import run_files

    result = ItemResult(
        "contracts_pdf", "Contract quality: PDF and TXT of one contract through richdoc run"
    )
    pairs = [c for c in contracts() if c.pdf is not None]
    if mode is Mode.QUICK:
        pairs = pairs[:3]
    with tempfile.TemporaryDirectory(prefix="richdoc-bench-contracts-pdf-") as tmp:
        stack = EmbeddedStack(log_path=Path(tmp) / "functions.log")
        stack.start()
        try:
            files = [DATA / "pdf" / str(c.pdf) for c in pairs] + [
                DATA / "txt" / c.file for c in pairs
            ]
            results = run_files(stack, files, clarify=True, timeout_s=3600)
            detections = [_detection_of(stack, r) for r in results]
        finally:
            stack.stop()
    rows, same = [], 0
    for index, contract in enumerate(pairs):
        pdf, txt = detections[index], detections[len(pairs) + index]
        agree = pdf == txt
        same += agree
        rows.append(
            [contract.file, contract.stratum, _shown(pdf), _shown(txt), "yes" if agree else "no"]
        )
    result.measurements = {"pairs": len(pairs), "same": same}
    result.targets.append(
        Target(
            "contracts_pdf_same_as_txt",
            "share of contracts whose PDF gives the ambiguity its TXT gives",
            round(same / len(pairs), 3) if pairs else 0.0,
            1.0,
            "ratio",
            "kind and candidate labels of the emitted ambiguity, clarify on",
            at_least=True,
        )
    )
    result.tables.append(
        Table("PDF against TXT", ["contract", "stratum", "PDF", "TXT", "same"], rows)
    )
    return result


def _detection_of(stack: Any, run_result: Any) -> tuple[str, tuple[str, ...]] | None:
    import json

    key = run_result.outputs.get("detection_key")
    if key is None:
        return ("failed: " + str(run_result.status), ())
    detection = json.loads(stack.artifact(key))
    if not detection["ambiguities"]:
        return None
    ambiguity = detection["ambiguities"][0]
    return ambiguity["kind"], tuple(c["label"] for c in ambiguity["candidates"])


def _shown(found: tuple[str, tuple[str, ...]] | None) -> str:
    if found is None:
        return "-"
    kind, labels = found
    return kind + (": " + "; ".join(labels) if labels else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pdf", action="store_true", help="the PDF-against-TXT item instead")
    args = parser.parse_args(argv)
    mode = Mode.QUICK if args.quick else Mode.FULL
    item = run_pdf_parity(mode) if args.pdf else run(mode)
    return item.print_and_exit_code()


if __name__ == "__main__":
    sys.exit(main())
