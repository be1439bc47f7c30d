"""The operators' job lifecycle end to end, through the real state machine on the embedded
stack and the command line: cancelling a running job, a sharded parse and a job whose
execution has not started; a cancel racing a finishing run, in both orders; redriving a
cancelled job and redriving by filter (the count first, idempotent); failures grouped by
signature; the tier ladder with each parse attempt's memory; watching a job's phases.

Every race is driven by a gate (tests/support/gates.py): the step stops until the test
has done its part, so no outcome depends on how fast this machine is.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.cli import main
from richdoc_tools.local.runtime.loops import wait_until
from richdoc_tools.ops.watch import watch_job
from richdoc_tools.run import run_files

from richdoc.admission.dispatcher import Dispatcher
from richdoc.admission.slots import SlotLedger
from richdoc.contracts import PageSpan, ParseInput
from richdoc.jobs import (
    CANCELLED_OUTCOME,
    Job,
    JobCancelled,
    JobPhase,
    JobStatus,
    JobStore,
    Progress,
)
from richdoc.parse.settings import SHARD_CONCURRENCY_ENV, SHARD_PAGES_ENV
from richdoc.records.actions import Actions
from richdoc.taxonomy import MemoryUse, ResourceLimit
from tests.support import parse_inputs
from tests.support.gates import Gate
from tests.support.parse_inputs import docx_bytes
from tests.support.stack_runs import (
    dead_letters_for,
    history,
    job_of,
    run_one,
    states_entered,
    upload,
    wait_for_handlers,
)

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 120


# ---- helpers ------------------------------------------------------------------------------


def describe(stack: Any, job_id: str, run: int = 1) -> dict[str, Any] | None:
    """The run's execution, or None when it has not been started."""
    sfn = stack.client("stepfunctions")
    arn = (
        stack.outputs["StateMachineArn"].replace(":stateMachine:", ":execution:")
        + f":{job_id}-r{run}"
    )
    try:
        described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
    except sfn.exceptions.ExecutionDoesNotExist:
        return None
    return described


def ended(stack: Any, job_id: str, run: int = 1) -> dict[str, Any]:
    def done() -> bool:
        described = describe(stack, job_id, run)
        return described is not None and described["status"] != "RUNNING"

    assert wait_until(done, TIMEOUT_S)
    described = describe(stack, job_id, run)
    assert described is not None
    return described


def closed_after_cancel(stack: Any, job_id: str) -> Job:
    """The cancelled job once a backstop has closed what its run left open."""

    def closed() -> bool:
        cancel = job_of(stack, job_id).cancel
        return cancel is not None and cancel.closed_at is not None

    assert wait_until(closed, TIMEOUT_S)
    return job_of(stack, job_id)


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str, code: int = 0) -> Any:
    capsys.readouterr()
    assert main([*argv, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def corrupt(name: str) -> bytes:
    return b"not a zip archive: " + name.encode()


def passing(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
    return real(event, **kw)


# ---- cancel --------------------------------------------------------------------------------


def test_a_running_job_is_cancelled_and_closed_without_a_dead_letter(
    stack: Any, patch_parse: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    gate = Gate()
    patch_parse(gate.before(passing))
    job_id = upload(stack, "lifecycle/running.docx", docx_bytes(["cancel me"]))
    assert gate.reached()
    shown = cli_json(capsys, "jobs", "show", job_id)
    assert shown["status"] == "RUNNING"
    assert shown["progress"] == {
        "phase": "parsing",
        "tier": 1,
        "shards": None,
        "shards_done": None,
        "pages_done": None,
    }

    [result] = cli_json(capsys, "jobs", "cancel", job_id[:12], "--reason", "wrong file")
    assert (result["job_id"], result["outcome"], result["status"], result["execution"]) == (
        job_id,
        "cancelled",
        "CANCELLED",
        "stopped",
    )
    job = job_of(stack, job_id)
    assert job.cancel is not None and job.progress().phase is JobPhase.CANCELLED
    assert (job.cancel.by, job.cancel.reason) == (
        "arn:aws:sts::123456789012:user/moto",
        "wrong file",
    )
    described = describe(stack, job_id)
    assert described is not None
    assert (described["status"], described["error"]) == ("ABORTED", "richdoc.Cancelled")
    assert described["cause"].endswith(": wrong file")

    # The reconciler closes the attempt the parse is still running, as on AWS.
    job = closed_after_cancel(stack, job_id)
    [attempt] = [a for a in stack.jobs.attempts.of_job(job_id) if a.stage == "parse"]
    assert (attempt.outcome, attempt.reason) == (
        CANCELLED_OUTCOME,
        f"cancelled by {job.cancel.by}: wrong file",  # type: ignore[union-attr]
    )
    gate.open()
    wait_for_handlers(stack)
    assert ended(stack, job_id)["status"] == "ABORTED"
    # The handler finished unheard: its own close of the attempt was refused.
    assert [a.outcome for a in stack.jobs.attempts.of_job(job_id)] == ["ok", CANCELLED_OUTCOME]
    job = job_of(stack, job_id)
    assert (job.status, job.failure, job.dead_letter) == (JobStatus.CANCELLED, None, None)
    assert dead_letters_for(stack, job_id) == []

    capsys.readouterr()
    assert main(["jobs", "watch", job_id]) == 4  # the job's outcome: cancelled
    assert "CANCELLED" in capsys.readouterr().out
    assert main(["jobs", "cancel", job_id]) == 0  # again: already cancelled, stopped again
    assert "already" not in capsys.readouterr().err


@pytest.mark.parametrize("stopped", [True, False], ids=["stopped", "record-only"])
def test_a_cancel_that_commits_first_refuses_the_runs_success(
    stack: Any, monkeypatch: pytest.MonkeyPatch, stopped: bool
) -> None:
    gate, refused = Gate(), []
    real = Actions.succeed

    def succeed(self: Actions, action: Any) -> Any:
        gate.wait_here()
        try:
            return real(self, action)
        except JobCancelled as exc:
            refused.append(exc)
            raise

    monkeypatch.setattr(Actions, "succeed", succeed)
    job_id = upload(stack, f"lifecycle/race-cancel-first-{stopped}.md", b"# Race\n\nFirst.\n")
    assert gate.reached()
    assert job_of(stack, job_id).progress().phase is JobPhase.RECORDING
    if stopped:
        assert main(["jobs", "cancel", job_id]) == 0
    else:
        # The cancel commits but its StopExecution never comes (the command died between
        # the two): the definition's own route must stop the run.
        stack.jobs.cancel(job_id, 1, by="ops")
    gate.open()
    assert wait_until(lambda: len(refused) == 1, TIMEOUT_S)  # RecordSuccess was refused
    described = ended(stack, job_id)
    if stopped:
        assert (described["status"], described["error"]) == ("ABORTED", "richdoc.Cancelled")
    else:
        assert (described["status"], described["error"]) == ("FAILED", "cancelled")
        assert states_entered(history(stack, described["executionArn"]))[-2:] == [
            "RecordSuccess",
            "Cancelled",
        ]
    job = closed_after_cancel(stack, job_id)  # by the reconciler, on either status event
    assert (job.status, job.outputs, job.counts) == (JobStatus.CANCELLED, None, None)
    assert {a.outcome for a in stack.jobs.attempts.of_job(job_id)} == {"ok"}  # every step had ended
    assert dead_letters_for(stack, job_id) == []


def test_a_run_that_succeeds_first_refuses_the_cancel(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = Gate()
    monkeypatch.setattr(Actions, "succeed", gate.after(Actions.succeed))
    job_id = upload(stack, "lifecycle/race-success-first.md", b"# Race\n\nSucceed first.\n")
    assert gate.reached()  # committed; the records function has not answered yet
    assert job_of(stack, job_id).status is JobStatus.SUCCEEDED
    capsys.readouterr()
    assert main(["jobs", "cancel", job_id]) == 3
    said = capsys.readouterr().out
    assert "the job had already finished: SUCCEEDED" in said
    gate.open()
    assert ended(stack, job_id)["status"] == "SUCCEEDED"
    job = job_of(stack, job_id)
    assert (job.status, job.cancel) == (JobStatus.SUCCEEDED, None)
    [result] = cli_json(capsys, "jobs", "cancel", job_id, code=3)
    assert (result["outcome"], result["status"]) == ("finished", "SUCCEEDED")


def test_a_sharded_parse_is_cancelled_between_its_shards(
    stack: Any,
    patch_parse: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(SHARD_PAGES_ENV, "4")
    monkeypatch.setenv(SHARD_CONCURRENCY_ENV, "1")  # one shard at a time, in page order
    gate = Gate()

    def second_shard_waits(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.pages is not None and str(event.pages) == "5-8":
            gate.wait_here()
        return real(event, **kw)

    patch_parse(second_shard_waits)
    body = parse_inputs.long_pdf(tmp_path / "long.pdf", pages=12, seed=41).read_bytes()
    job_id = upload(stack, "lifecycle/sharded.pdf", body)
    assert gate.reached()
    progress = job_of(stack, job_id).progress()
    assert progress == Progress(
        phase=JobPhase.PARSING_SHARDS, shards=3, shards_done=1, pages_done=4
    )
    assert progress.describe() == "parsing shards: 1 of 3 done (4 pages)"
    assert main(["jobs", "cancel", job_id]) == 0
    job = closed_after_cancel(stack, job_id)
    gate.open()
    wait_for_handlers(stack)
    assert ended(stack, job_id)["status"] == "ABORTED"
    by_shard = {
        str(a.pages): a.outcome for a in stack.jobs.attempts.of_job(job_id) if a.stage == "parse"
    }
    assert by_shard == {"1-4": "ok", "5-8": CANCELLED_OUTCOME}  # 9-12 never started
    job = job_of(stack, job_id)
    assert job.status is JobStatus.CANCELLED
    # The finished shard that came too late is refused.
    assert job.shards_done == frozenset({PageSpan.parse("1-4")})
    assert dead_letters_for(stack, job_id) == []


def test_a_job_cancelled_while_it_waits_for_a_slot_leaves_at_once_and_starts_nothing(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    admission = Gate()  # no job is admitted until the test says so
    monkeypatch.setattr(SlotLedger, "admit", admission.before(SlotLedger.admit))
    job_id = upload(stack, "lifecycle/waiting.md", b"# Waiting\n\nNever started.\n")
    assert wait_until(lambda: (job := stack.jobs.get(job_id)) is not None and job.waiting, 60)
    [result] = cli_json(capsys, "jobs", "cancel", job_id)
    assert (result["outcome"], result["execution"]) == ("cancelled", "waiting")
    job = job_of(stack, job_id)
    assert job.status is JobStatus.CANCELLED and not job.waiting
    assert job.cancel is not None and job.cancel.closed_at is not None  # nothing left open
    admission.open()
    assert wait_until(stack.notifications_delivered, TIMEOUT_S)  # the dispatcher is done too
    assert describe(stack, job_id, 1) is None  # no execution, ever
    assert job_of(stack, job_id).slots is None
    assert stack.jobs.attempts.of_job(job_id) == []
    assert dead_letters_for(stack, job_id) == []


def test_an_admitted_job_cancelled_before_its_execution_starts_stops_there_and_is_redriven(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    starting = Gate()
    monkeypatch.setattr(Dispatcher, "start", starting.before(Dispatcher.start))
    job_id = upload(stack, "lifecycle/queued.md", b"# Queued\n\nNever started.\n")
    assert starting.reached()  # admitted; its execution is not started yet
    job = job_of(stack, job_id)
    assert (job.status, job.slots, job.waiting) == (JobStatus.QUEUED, 1, False)
    [result] = cli_json(capsys, "jobs", "cancel", job_id)
    assert (result["outcome"], result["execution"]) == ("cancelled", "not_started")
    starting.open()  # the dispatcher goes on to StartExecution: RecordStart refuses the run
    described = ended(stack, job_id)
    assert (described["status"], described["error"]) == ("FAILED", "cancelled")
    assert states_entered(history(stack, described["executionArn"])) == [
        "RecordStart",
        "Cancelled",
    ]
    job = closed_after_cancel(stack, job_id)
    assert (job.status, job.started_at) == (JobStatus.CANCELLED, None)
    assert wait_until(lambda: job_of(stack, job_id).slots is None, TIMEOUT_S)  # given back
    assert stack.jobs.attempts.of_job(job_id) == []
    assert dead_letters_for(stack, job_id) == []

    # The next run, from the stored message; a second redrive while the first is on its
    # way is skipped (the starter is held until both have been asked for).
    next_run = Gate()
    monkeypatch.setattr(JobStore, "start_next_run", next_run.before(JobStore.start_next_run))
    report = cli_json(capsys, "jobs", "redrive", job_id)
    assert [(r["outcome"], r["run"]) for r in report["results"]] == [("sent", 1)]
    assert next_run.reached()
    again = cli_json(capsys, "jobs", "redrive", job_id)
    [skipped] = again["results"]
    assert skipped["outcome"] == "skipped"
    assert skipped["detail"].startswith("a redrive of run 1 was requested at ")
    next_run.open()
    assert wait_until(lambda: job_of(stack, job_id).run == 2, TIMEOUT_S)
    assert ended(stack, job_id, run=2)["status"] == "SUCCEEDED"
    job = job_of(stack, job_id)
    assert (job.status, job.run, job.cancel, job.redrive) == (JobStatus.SUCCEEDED, 2, None, None)
    assert next_run.arrivals == 1  # one message, one next run
    [refused] = cli_json(capsys, "jobs", "redrive", job_id, code=3)["results"]
    assert (refused["outcome"], refused["detail"]) == (
        "refused",
        "the job is SUCCEEDED: nothing to run again",
    )


# ---- redrive by filter, failures grouped ---------------------------------------------------


def test_failed_jobs_group_by_signature_and_redrive_by_filter_once(
    stack: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    since = datetime.now(UTC).isoformat()  # what earlier tests updated is before it
    job_ids = [upload(stack, f"lifecycle/broken-{n}.docx", corrupt(f"broken {n}")) for n in (1, 2)]
    jobs = stack.wait_for_jobs(job_ids, TIMEOUT_S)
    assert {j.status for j in jobs.values() if j} == {JobStatus.DEAD_LETTERED}
    for job_id in job_ids:
        ended(stack, job_id)

    groups = cli_json(capsys, "jobs", "failures", "--since", since)
    [group] = [g for g in groups if set(job_ids) <= set(g["examples"])]
    assert (group["count"], group["kind"], group["statuses"]) == (
        2,
        "corrupt_input",
        {"DEAD_LETTERED": 2},
    )
    assert group["first_seen"] <= group["last_seen"]
    signature = group["signature"]
    wanted = ("--status", "DEAD_LETTERED", "--signature", signature, "--since", since)

    dry = cli_json(capsys, "jobs", "redrive", *wanted, "--dry-run")
    assert (dry["matched"], dry["dry_run"]) == (2, True)
    assert {(r["job_id"], r["outcome"]) for r in dry["results"]} == {
        (job_id, "would_send") for job_id in job_ids
    }
    assert all(job_of(stack, job_id).redrive is None for job_id in job_ids)  # nothing sent

    next_run = Gate()
    monkeypatch.setattr(JobStore, "start_next_run", next_run.before(JobStore.start_next_run))
    capsys.readouterr()
    assert main(["jobs", "redrive", *wanted, "--rate", "50/s", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("2 job(s) match status DEAD_LETTERED")  # the count, first
    sent = json.loads(out)
    assert (sent["matched"], sent["rate_per_s"]) == (2, 50.0)
    assert {r["outcome"] for r in sent["results"]} == {"sent"}
    assert next_run.reached()
    second = cli_json(capsys, "jobs", "redrive", *wanted)
    assert {r["outcome"] for r in second["results"]} == {"skipped"}
    next_run.open()

    def second_runs_ended() -> bool:
        return all(job_of(stack, i).run == 2 and job_of(stack, i).status.terminal for i in job_ids)

    assert wait_until(second_runs_ended, TIMEOUT_S)
    for job_id in job_ids:
        ended(stack, job_id, run=2)
        assert describe(stack, job_id, run=3) is None  # one next run each, not two
    assert next_run.arrivals == 2


# ---- the tier ladder, watch, progress ------------------------------------------------------


def test_the_tier_ladder_shows_where_documents_finally_parsed_and_what_escalated(
    stack: Any, patch_parse: Callable[..., None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    since = datetime.now(UTC).isoformat()  # what earlier tests updated is before it

    def tier_one_too_small(event: ParseInput, real: Callable[..., Any], **kw: Any) -> Any:
        if event.tier == 1:
            killed = ResourceLimit("the conversion exceeded mem_ceiling_mb=2346")
            killed.memory = MemoryUse(ceiling_mb=2346, peak_rss_mb=2371.4)
            raise killed
        return real(event, **kw)

    patch_parse(tier_one_too_small)
    body = parse_inputs.pdf(tmp_path / "three.pdf", pages=3).read_bytes()
    job = run_one(stack, "lifecycle/tiers.pdf", body)
    assert (job.status, job.page_count) == (JobStatus.SUCCEEDED, 3)
    killed, real = [a for a in stack.jobs.attempts.of_job(job.job_id) if a.stage == "parse"]
    assert (killed.tier, killed.outcome, killed.mem_ceiling_mb, killed.peak_rss_mb) == (
        1,
        "ResourceLimit",
        2346,
        2371,
    )
    # The tier-2 parse really ran in the worker's child: its ceiling and peak are recorded.
    assert (real.tier, real.outcome) == (2, "ok")
    assert real.mem_ceiling_mb and real.peak_rss_mb and real.peak_rss_mb > 0

    report = cli_json(capsys, "jobs", "tiers", "--since", since)
    assert (report["jobs"], report["succeeded"]) == (1, 1)
    one, two = report["tiers"]
    assert (one["tier"], one["attempts"], one["resource_limits"], one["succeeded"]) == (1, 1, 1, 0)
    assert one["escalation_rate"] == 1.0 and one["mem_ceiling_mb"] == [2346]
    assert (two["tier"], two["succeeded"], two["resource_limits"]) == (2, 1, 0)
    assert two["pages"] == {"min": 3.0, "median": 3.0, "max": 3.0}
    assert two["mem_ceiling_mb"] == [real.mem_ceiling_mb]
    capsys.readouterr()
    assert main(["jobs", "tiers", "--since", since]) == 0
    assert "1 job(s) read; 1 succeeded" in capsys.readouterr().out


def test_watch_follows_the_phases_until_the_job_ends(
    stack: Any, patch_parse: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    gate = Gate()
    patch_parse(gate.before(passing))
    job_id = upload(stack, "lifecycle/watched.docx", docx_bytes(["watch me"]))
    assert gate.reached()
    seen: list[Job] = []
    watched: list[Job] = []
    watcher = threading.Thread(
        target=lambda: watched.append(watch_job(stack.jobs, job_id, on_change=seen.append))
    )
    watcher.start()
    assert wait_until(lambda: bool(seen), TIMEOUT_S)
    gate.open()
    watcher.join(TIMEOUT_S)
    [final] = watched
    assert final.status is JobStatus.SUCCEEDED
    phases = [j.progress().phase for j in seen]
    assert phases[0] is JobPhase.PARSING and phases[-1] is JobPhase.SUCCEEDED
    order = list(JobPhase)
    assert [order.index(p) for p in phases] == sorted(order.index(p) for p in phases)  # type: ignore[arg-type]
    capsys.readouterr()
    assert main(["jobs", "watch", job_id]) == 0
    assert "SUCCEEDED  run 1  succeeded" in capsys.readouterr().out
    lines = cli_json(capsys, "jobs", "watch", job_id)  # one JSON line: it has ended
    assert lines["status"] == "SUCCEEDED" and lines["progress"]["phase"] == "succeeded"


def test_richdoc_run_shows_what_the_open_jobs_are_doing(
    stack: Any, patch_parse: Callable[..., None], tmp_path: Path
) -> None:
    gate = Gate()
    patch_parse(gate.before(passing))
    note = tmp_path / "progress-note.md"
    note.write_text("# Note\n\nProgress.\n")
    polls: list[list[Progress]] = []
    results: list[Any] = []
    runner = threading.Thread(
        target=lambda: results.extend(
            run_files(stack, [note], clarify=False, timeout_s=TIMEOUT_S, on_open=polls.append)
        )
    )
    runner.start()
    assert gate.reached()
    assert wait_until(
        lambda: any(p.phase is JobPhase.PARSING for seen in polls for p in seen), TIMEOUT_S
    )
    gate.open()
    runner.join(TIMEOUT_S)
    [result] = results
    assert result.status == "SUCCEEDED"


# ---- RedriveExecution: what resuming at the failed state does to the records ---------------

SOURCE = {"bucket": "ingest", "key": "lifecycle/redriven.md", "version_id": "v1", "size": 10}
PARSED = {
    "docling_key": "docling/none.json",
    "sha256": "ab" * 32,
    "size": 10,
    "pipeline": "simple",
    "page_count": 0,
    "cached": False,
    "partial": False,
    "failed_pages": [],
    "seconds": 0.1,
}
# The state input each resumed state finds (what its first execution recorded for it).
RESUMED_INPUT: dict[str, dict[str, Any]] = {
    "RecordStart": {},
    "ParseTier1": {},
    "ParseTier2": {},
    "ParseShards": {
        "results": {
            "plan": {
                "shards": [{"start": 1, "end": 4}, {"start": 5, "end": 8}],
                "max_concurrency": 2,
            }
        }
    },
    "Project": {"results": {"parse": PARSED}},
    "RecordFailure": {
        "failed_at": {"stage": "parse", "tier": 1},
        "error": {"Error": "Sandbox.Timedout", "Cause": "Task timed out"},
    },
    "MarkDeadLettered": {"dead_letter": {"message_id": "another-message"}},
    "DeadLetterPending": {},
    "CorruptInput": {"failure": {"reason": "not a zip"}},
}


def _prepared(stack: Any, job_id: str, ended_as: str) -> Job:
    """A job whose run 1 ended as ``ended_as`` (records written as the run would)."""
    from richdoc.contracts import JobOptions, SourceObject
    from richdoc.taxonomy import Failure, FailureKind
    from tests.support.records import COUNTS, OUTPUTS

    store = stack.jobs
    assert store.create(job_id, SourceObject.model_validate(SOURCE), JobOptions(), message="{}")
    store.mark_running(job_id, 1, f"arn:execution:{job_id}-r1")
    if ended_as == "cancelled":
        store.cancel(job_id, 1, by="ops")
    elif ended_as == "succeeded":
        store.succeed(job_id, 1, outputs=OUTPUTS, counts=COUNTS, pipeline="p")
    else:  # dead-lettered (by the state machine, or a backstop after a timeout or stop)
        store.record_failure(job_id, 1, Failure(FailureKind.INTERNAL, "Execution.TIMED_OUT"))
        store.mark_dead_lettered(job_id, 1, "the-message", sent_by="reconciler")
    return job_of(stack, job_id)


def resumed_at(stack: Any, state: str, execution_input: dict[str, Any]) -> dict[str, Any]:
    """Run the deployed definition from ``state`` with that state's input: what
    RedriveExecution does to an execution that ended there (the embedded stack cannot
    redrive the execution itself). Returns the ended execution."""
    sfn = stack.client("stepfunctions")
    deployed = sfn.describe_state_machine(stateMachineArn=stack.outputs["StateMachineArn"])
    definition = json.loads(deployed["definition"])
    definition["StartAt"] = state
    name = "resume-" + hashlib.sha256(execution_input["job_id"].encode()).hexdigest()[:16]
    machine = sfn.create_state_machine(
        name=name, definition=json.dumps(definition), roleArn=deployed["roleArn"]
    )["stateMachineArn"]
    arn = sfn.start_execution(
        stateMachineArn=machine, name=name, input=json.dumps(execution_input)
    )["executionArn"]
    assert wait_until(
        lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING", TIMEOUT_S
    )
    described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
    return described


@pytest.mark.parametrize(
    ("ended_as", "state", "stops_in"),
    [
        # A cancelled run (ABORTED, or failed in Cancelled) resumed where it stopped.
        ("cancelled", "RecordStart", "cancelled"),
        ("cancelled", "ParseTier1", "cancelled"),
        ("cancelled", "ParseShards", "cancelled"),  # each shard: ShardStopped
        ("cancelled", "RecordFailure", "cancelled"),
        # A run the reconciler or the sweep dead-lettered after it timed out, was stopped
        # outside richdoc or failed in a state without a catch for that error.
        ("dead-lettered", "ParseTier2", "superseded"),
        ("dead-lettered", "ParseShards", "superseded"),
        ("dead-lettered", "Project", "superseded"),
        ("dead-lettered", "RecordFailure", "superseded"),
        ("dead-lettered", "MarkDeadLettered", "superseded"),
        # A run that ended in a Fail state fails there again.
        ("dead-lettered", "DeadLetterPending", "dead_letter_pending"),
        ("dead-lettered", "CorruptInput", "corrupt_input"),
        # A terminal status is never overwritten by the run resumed.
        ("succeeded", "RecordFailure", "superseded"),
        ("succeeded", "RecordStart", "superseded"),
    ],
)
def test_a_resumed_run_never_writes_over_its_job_nor_sends_a_second_dead_letter(
    stack: Any, ended_as: str, state: str, stops_in: str
) -> None:
    job_id = f"resumed-{ended_as}-{state}".lower()
    before = _prepared(stack, job_id, ended_as)
    execution_input = {
        "job_id": job_id,
        "run": 1,
        "source": SOURCE,
        "options": {"clarify": False},
        "message": "{}",
        **RESUMED_INPUT[state],
    }
    described = resumed_at(stack, state, execution_input)
    assert (described["status"], described["error"]) == ("FAILED", stops_in)
    wait_for_handlers(stack)
    assert job_of(stack, job_id) == before
    assert stack.jobs.attempts.of_job(job_id) == []
    assert dead_letters_for(stack, job_id) == []
