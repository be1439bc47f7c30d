"""Upgrades in place, as docs/operations.md ("Upgrading a deployed stack") has them done:
an earlier release's template and code, from this repository's history, deployed into the
embedded stack with jobs in flight, then updated to this checkout as the procedure says.

* From the template before admission (its jobs table with one index): the direct update
  is refused (two indexes in one table update) and rolled back, the stack going on as it
  was; the three documented deploys then build one index each, admission paused until
  the last. A run in flight at the upgrade, held inside its old plan step, finishes on
  its old definition with the new functions; uploads made before and between the steps
  wait QUEUED and are admitted once admission runs.
* From the previous release, in one deploy: a run admitted and held, two jobs waiting
  for the one slot; after the update every one runs, one at a time.

Each ends with every job terminal and succeeded, every slot returned, nothing dead-lettered
and every upload one job. The old code runs as its release ran it: in processes of its own
(``runtime.sandboxes``), against the served emulation, with its roles' credentials.

Waits are on observable conditions: a gate the old invocation reaches, a job's record,
every slot back."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.conditions import Attr
from richdoc_tools.local.cloudformation.provisioners.dynamodb import MORE_THAN_ONE_GSI
from richdoc_tools.local.cloudformation.update import StackUpdateFailed
from richdoc_tools.local.runtime.events import wait_until

from richdoc.jobs import JobStatus
from tests.support.admission import most_at_once, slots_back
from tests.support.gates import Gate
from tests.support.releases import BEFORE_ADMISSION, PREVIOUS_RELEASE, checkout_at
from tests.support.stack_runs import job_of, upload

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("stack")]

TIMEOUT_S = 600
# The three deploys docs/operations.md names for a stack from before admission.
STEPS = (
    {"AdmissionIndexes": "by-queue", "Admission": "paused"},
    {"AdmissionIndexes": "both", "Admission": "paused"},
    {"AdmissionIndexes": "both", "Admission": "running"},
)


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each earlier release's files, as its git history holds them."""
    base = tmp_path_factory.mktemp("releases")
    return {
        revision: checkout_at(revision, base / revision)
        for revision in (BEFORE_ADMISSION, PREVIOUS_RELEASE)
    }


@contextlib.contextmanager
def deployed(root: Path, log: Path, **parameters: str) -> Iterator[Any]:
    """A stack of that release, served (its code runs in sandboxes that reach it by URL)."""
    from richdoc_tools.local.stack import EmbeddedStack

    with EmbeddedStack(
        root=root,
        parameters=parameters,
        server_port=0,
        retry_delay_scale=0.0,
        retry_visibility_s=0,
        log_path=log,
        schedules=False,
    ) as stack:
        yield stack
        assert stack.loop_errors == []


def check(stack: Any, capsys: pytest.CaptureFixture[str], *overrides: str) -> dict[str, Any]:
    """``richdoc deploy check`` against the served stack (its deployed template read with
    GetTemplate, its indexes with DescribeTable): the findings, by check."""
    from richdoc_tools.cli import main

    given = ["--parameter-overrides", " ".join(overrides)] if overrides else []
    capsys.readouterr()
    main(
        [
            "deploy",
            "check",
            "--stack",
            stack.stack_name,
            "--endpoint-url",
            stack.endpoint_url,
            "--region",
            "us-east-1",
            "--config-file",
            "none.toml",
            "--json",
            *given,
        ]
    )
    report = json.loads(capsys.readouterr().out)
    return {finding["check"]: finding for finding in report["findings"]}


def note(name: str) -> bytes:
    return f"# {name}\n\nA short note, uploaded around an upgrade.\n".encode()


def held_plan(stack: Any, key: str) -> Gate:
    """The plan step of the run of ``key`` stops at a gate once invoked: a run in flight."""
    gate = Gate()

    def hold(logical_id: str, event: Any) -> None:
        if logical_id == "PlanFunction" and key in json.dumps(event):
            gate.wait_here()

    stack.runtime.on_invoke = hold
    return gate


def waits(stack: Any, job_id: str) -> bool:
    """Until the upload is a job that waits in the backlog for a slot."""

    def waiting() -> bool:
        job = stack.jobs.get(job_id)
        return job is not None and job.waiting

    return wait_until(waiting, TIMEOUT_S)


def indexes(stack: Any) -> list[str]:
    table = stack.client("dynamodb").describe_table(TableName=stack.outputs["JobsTableName"])
    return [i["IndexName"] for i in table["Table"].get("GlobalSecondaryIndexes", [])]


def nothing_lost(stack: Any, job_ids: list[str]) -> list[Any]:
    """Every job terminal and succeeded, every slot back, no dead letter, one job each."""
    ended = stack.wait_for_jobs(job_ids, TIMEOUT_S)
    assert all(job is not None for job in ended.values()), ended
    ended_jobs = [job for job in ended.values() if job is not None]
    assert {job.job_id: job.status for job in ended_jobs} == dict.fromkeys(
        job_ids, JobStatus.SUCCEEDED
    ), [(job.job_id, job.status, job.failure) for job in ended_jobs]
    assert wait_until(lambda: slots_back(stack) and stack.notifications_delivered(), TIMEOUT_S)
    sqs = stack.client("sqs")
    waiting = sqs.get_queue_attributes(
        QueueUrl=stack.outputs["DeadLetterQueueUrl"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert set(waiting.values()) == {"0"}
    records = stack.jobs.table.scan(FilterExpression=Attr("sk").eq("JOB"), Select="COUNT")
    assert records["Count"] == len(job_ids)  # each upload one job, none twice
    return [job_of(stack, job_id) for job_id in job_ids]  # as they are with the slots back


def test_a_stack_from_before_admission_upgrades_in_three_deploys_with_runs_in_flight(
    releases: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with deployed(releases[BEFORE_ADMISSION], tmp_path / "functions.log") as stack:
        # Under the old release: one job done, one run held inside its (old) plan step.
        done = upload(stack, "upgrade/done.md", note("done"))
        assert stack.wait_for_jobs([done], TIMEOUT_S)[done].status is JobStatus.SUCCEEDED
        gate = held_plan(stack, "upgrade/in-flight.md")
        in_flight = upload(stack, "upgrade/in-flight.md", note("in flight"))
        assert gate.reached()
        assert job_of(stack, in_flight).status is JobStatus.RUNNING
        assert indexes(stack) == ["by-status"]

        # The update straight to this template is refused, and the stack goes on as it was.
        with pytest.raises(StackUpdateFailed) as refused:
            stack.update()
        assert (refused.value.logical_id, refused.value.reason) == ("JobsTable", MORE_THAN_ONE_GSI)
        assert indexes(stack) == ["by-status"]
        # What deploy check says of the deployed stack: the refusal, and the steps.
        found = check(stack, capsys)
        assert found["upgrade"]["status"] == "fail"
        assert "creates by-queue, tenants-by-service" in found["upgrade"]["says"]
        assert "AdmissionIndexes=by-queue Admission=paused" in found["upgrade"]["fix"]
        assert found["indexes"]["status"] == "ok"

        with stack.queues_paused():  # an upload waits on the ingest queue across step 1
            before = upload(stack, "upgrade/before-step-1.md", note("before step 1"))
            stack.update(parameters=STEPS[0])
        assert indexes(stack) == ["by-status", "by-queue"]
        gate.open()  # the old plan step ends; the old definition goes on with new functions
        assert stack.wait_for_jobs([in_flight], TIMEOUT_S)[in_flight].status is (
            JobStatus.SUCCEEDED
        )
        between = upload(stack, "upgrade/between-steps.md", note("between the steps"))
        for job_id in (before, between):  # admission paused: they wait
            assert waits(stack, job_id)

        # The next step, as deploy check sees it from the deployed first step: accepted.
        found = check(stack, capsys, *(f"{k}={v}" for k, v in STEPS[1].items()))
        assert found["upgrade"]["status"] == "ok", found["upgrade"]
        stack.update(parameters=STEPS[1])
        assert indexes(stack) == ["by-status", "by-queue", "tenants-by-service"]
        stack.fire_schedules()  # the dispatcher's schedule is off: still waiting
        assert job_of(stack, before).status is JobStatus.QUEUED

        stack.update(parameters=STEPS[2])
        stack.fire_schedules()  # admission runs: the dispatcher's minutely run admits them
        nothing_lost(stack, [done, in_flight, before, between])
        assert stack.runtime.sandboxes.started > 0  # the old release's code ran as its own


def test_the_previous_release_upgrades_in_one_deploy_with_jobs_waiting_and_running(
    releases: dict[str, Path], tmp_path: Path
) -> None:
    with deployed(
        releases[PREVIOUS_RELEASE], tmp_path / "functions.log", MaxRunningJobs="1"
    ) as stack:
        gate = held_plan(stack, "upgrade/admitted.md")
        admitted = upload(stack, "upgrade/admitted.md", note("admitted"))
        assert gate.reached()
        waiting = [upload(stack, f"upgrade/waiting-{n}.md", note(f"waiting {n}")) for n in (1, 2)]
        for job_id in waiting:  # the one slot is taken: they wait
            assert waits(stack, job_id)

        stack.update(parameters={"MaxRunningJobs": "1"})
        gate.open()
        jobs = nothing_lost(stack, [admitted, *waiting])
        assert most_at_once(jobs) == 1
        assert stack.runtime.sandboxes.started > 0


def test_admission_paused_keeps_uploads_waiting_until_it_runs_again(tmp_path: Path) -> None:
    """Admission=paused on a running stack (an update of this checkout's own template):
    the dispatcher's stream mapping and schedule are off, an upload waits QUEUED however
    often the schedules fire; running again admits it."""
    from richdoc_tools.local.stack import EmbeddedStack

    with EmbeddedStack(
        retry_delay_scale=0.0,
        retry_visibility_s=0,
        log_path=tmp_path / "functions.log",
        schedules=False,
    ) as stack:
        assert stack.delivery is not None
        pollers = len(stack.delivery.pollers)
        result = stack.update(parameters={"Admission": "paused"})
        assert {
            "DispatcherFunctionJobChanges",
            "DispatcherFunctionBackstop",
            "RecordsFunctionSweep",
        } <= set(result.updated)
        assert len(stack.delivery.pollers) == pollers - 1  # the dispatcher's is stopped
        paused = upload(stack, "admission/paused.md", note("paused"))
        assert waits(stack, paused)
        stack.fire_schedules()
        assert job_of(stack, paused).status is JobStatus.QUEUED
        stack.update(parameters={"Admission": "running"})
        stack.fire_schedules()
        nothing_lost(stack, [paused])
