"""The failure signature (richdoc_tools.ops.failures): the reason's stable part, as properties
over generated reasons (the same failure with other ids, numbers, paths, keys and quoted
strings gets the same signature; another kind or error never does), and the grouping."""

from __future__ import annotations

import string
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from richdoc_tools.ops.failures import (
    FailureSignature,
    fleet_failures,
    group_failures,
    matches_signature,
    normalise,
    signature_of,
)

from richdoc.contracts import SourceObject
from richdoc.jobs import Job, JobStatus
from richdoc.taxonomy import Failure, FailureKind

# What differs from one job to the next, by the kind of thing it is.
# A digest or id has letters and digits (one of digits alone reads as a number).
_hex = st.text("0123456789abcdef", min_size=8, max_size=64).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
)
_numbers = st.integers(min_value=0, max_value=10**12).map(str) | st.floats(
    min_value=0, max_value=1e6, allow_nan=False
).map(lambda f: f"{f:.2f}")
_segment = st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=12)
_paths = st.lists(_segment, min_size=1, max_size=4).map(lambda parts: "/tmp/" + "/".join(parts))
_keys = st.lists(_segment, min_size=1, max_size=3).map(
    lambda parts: "s3://ingest/" + "/".join(parts) + ".pdf"
)
_quoted = st.text(min_size=0, max_size=20).filter(lambda s: "'" not in s).map(lambda s: f"'{s}'")
_uuids = st.uuids().map(str)
VARIABLE = {"hex": _hex, "n": _numbers, "path": _paths, "key": _keys, "str": _quoted, "id": _uuids}

# Reasons as templates with slots for variable parts (the stable words around them).
TEMPLATES = [
    "the conversion exceeded mem_ceiling_mb={n} (peak RSS {n} MB) and was killed",
    "job {hex}: run {n} is not current",
    "reading {key}: NoSuchKey",
    "file {str} is encrypted",
    "{path}: no space left on the local disk",
    "execution {id} FAILED after {n} s",
    "PDF has {n} pages, more than MaxPages={n}",
]
_words = st.text(string.ascii_letters + " :;,()=", min_size=0, max_size=40)


@st.composite
def reasons(draw: st.DrawFn, template: str | None = None) -> tuple[str, str]:
    """(template, a reason made from it with drawn variable parts)."""
    chosen = template if template is not None else draw(st.sampled_from(TEMPLATES))
    parts = chosen.split("{")
    made = parts[0]
    for part in parts[1:]:
        slot, _, rest = part.partition("}")
        made += draw(VARIABLE[slot]) + rest
    return chosen, made


@given(st.text(max_size=200))
def test_normalising_twice_changes_nothing(reason: str) -> None:
    assert normalise(normalise(reason)) == normalise(reason)


@given(st.sampled_from(TEMPLATES).flatmap(lambda t: st.tuples(reasons(t), reasons(t))))
def test_the_same_failure_with_other_ids_numbers_and_paths_normalises_alike(
    pair: tuple[tuple[str, str], tuple[str, str]],
) -> None:
    (_, first), (_, second) = pair
    assert normalise(first) == normalise(second)


@given(reasons())
def test_no_variable_part_survives(made: tuple[str, str]) -> None:
    _, reason = made
    template = normalise(reason)
    assert not any(c.isdigit() for c in template), template
    assert "/" not in template and "'" not in template


def _job(kind: FailureKind, reason: str, error: str | None, feature: str | None = None) -> Job:
    return Job(
        job_id="0" * 32,
        status=JobStatus.DEAD_LETTERED,
        run=1,
        source=SourceObject(bucket="b", key="k"),
        failure=Failure(kind=kind, reason=reason, feature=feature, error=error),
    )


_kinds = st.sampled_from(list(FailureKind))
_errors = st.none() | st.text(string.ascii_letters + ".", min_size=1, max_size=30)


@given(_kinds, _kinds, _errors, _errors, reasons())
def test_different_kinds_or_errors_never_share_a_signature(
    kind_a: FailureKind,
    kind_b: FailureKind,
    error_a: str | None,
    error_b: str | None,
    made: tuple[str, str],
) -> None:
    _, reason = made
    a = signature_of(_job(kind_a, reason, error_a))
    b = signature_of(_job(kind_b, reason, error_b))
    assert (a.id == b.id) == ((kind_a, error_a) == (kind_b, error_b))


@given(reasons(), reasons())
def test_a_signature_is_stable_and_short(first: tuple[str, str], second: tuple[str, str]) -> None:
    (template_a, reason_a), (template_b, reason_b) = first, second
    a = signature_of(_job(FailureKind.INTERNAL, reason_a, "KeyError"))
    b = signature_of(_job(FailureKind.INTERNAL, reason_b, "KeyError"))
    assert len(a.id) == 12 and all(c in "0123456789abcdef" for c in a.id)
    if template_a == template_b:
        assert a.id == b.id


def test_the_template_says_what_was_taken_out() -> None:
    assert normalise(
        "the conversion exceeded mem_ceiling_mb=2476 (peak RSS 2501 MB) and was killed"
    ) == ("the conversion exceeded mem_ceiling_mb=<n> (peak RSS <n> MB) and was killed")
    assert normalise("file 'q3 report.docx' is encrypted") == "file <str> is encrypted"
    assert normalise("job 4f3a9c0e1b2d4e5f6a7b8c9d0e1f2a3b: gone") == "job <hex>: gone"
    assert normalise("reading s3://ingest/a/b.pdf failed") == "reading <url> failed"
    assert normalise("/tmp/x/document.pdf: no space") == "<path> no space"
    assert normalise("docling.json is not JSON") == "<name> is not JSON"


def test_failed_jobs_group_by_signature_with_counts_and_times() -> None:
    def failed(job_id: str, reason: str, at: str, status: JobStatus) -> Job:
        job = _job(FailureKind.RESOURCE_LIMIT, reason, "ResourceLimit")
        return job.model_copy(update={"job_id": job_id, "status": status, "updated_at": at})

    jobs = [
        failed(
            "a" * 32, "exceeded mem_ceiling_mb=2476 (peak 2600)", "2026-01-02", JobStatus.FAILED
        ),
        failed(
            "b" * 32,
            "exceeded mem_ceiling_mb=5000 (peak 5100)",
            "2026-01-01",
            JobStatus.DEAD_LETTERED,
        ),
        failed("c" * 32, "exceeded timeout_s=600", "2026-01-03", JobStatus.DEAD_LETTERED),
        failed("d" * 32, "whatever", "2026-01-04", JobStatus.SUCCEEDED),  # not a failure
    ]
    memory, timeout = group_failures(jobs)
    assert (memory.count, memory.template) == (2, "exceeded mem_ceiling_mb=<n> (peak <n>)")
    assert memory.statuses == {"FAILED": 1, "DEAD_LETTERED": 1}
    assert (memory.first_seen, memory.last_seen) == ("2026-01-01", "2026-01-02")
    assert memory.examples == ["a" * 32, "b" * 32]  # most recent first
    assert (timeout.count, timeout.examples) == (1, ["c" * 32])
    assert matches_signature(jobs[1], memory.signature[:6])
    assert not matches_signature(jobs[2], memory.signature)
    assert (
        FailureSignature(
            kind=memory.kind, feature=None, error="ResourceLimit", template=memory.template
        ).id
        == memory.signature
    )


def test_the_fleet_failures_read_both_failed_statuses_or_the_one_asked_for() -> None:
    def failed(job_id: str, status: JobStatus) -> Job:
        job = _job(FailureKind.TRANSIENT, "throttled", "Throttling")
        return job.model_copy(update={"job_id": job_id, "status": status})

    stored = {
        JobStatus.FAILED: [failed("a" * 32, JobStatus.FAILED)],
        JobStatus.DEAD_LETTERED: [failed("b" * 32, JobStatus.DEAD_LETTERED)],
    }
    asked: list[tuple[JobStatus, datetime | None]] = []

    def list_jobs(status: JobStatus, since: datetime | None = None) -> list[Job]:
        asked.append((status, since))
        return stored[status]

    operator: Any = SimpleNamespace(jobs=SimpleNamespace(list_jobs=list_jobs))
    [both] = fleet_failures(operator)
    assert (both.count, both.statuses) == (2, {"FAILED": 1, "DEAD_LETTERED": 1})
    since = datetime(2026, 1, 1)
    [one] = fleet_failures(operator, status=JobStatus.FAILED, since=since)
    assert (one.count, asked[-1]) == (1, (JobStatus.FAILED, since))
    with pytest.raises(ValueError, match="DEAD_LETTERED or FAILED"):
        fleet_failures(operator, status=JobStatus.CANCELLED)
