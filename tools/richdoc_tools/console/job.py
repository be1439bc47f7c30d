"""One job, as the Step Functions console shows an execution, and more.

The state machine is drawn from the definition the run's execution ran (``diagram``),
each state coloured by the execution's history (``execution``), each state's input and
output a click away; below it a timeline with one row per attempt (tier, memory,
duration, outcome, kind, reason), the shards with their own status, and the artifacts
and the source to download. ``?run=N`` shows an earlier run's execution.

Cancel and Redrive call what ``richdoc jobs cancel`` and ``richdoc jobs redrive`` call
(``cancel.cancel_jobs``, ``redrive.redrive_ids``) and show what became of the job; each
button is offered only when its command would act (its reason says why not).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import PurePosixPath
from typing import Any

from botocore.exceptions import ClientError
from flask import Blueprint, abort, request, url_for
from pydantic import BaseModel, ConfigDict, Field, model_serializer
from werkzeug.wrappers import Response

from richdoc.contracts import OUTPUT_FOLDERS
from richdoc.jobs import OK_OUTCOME, RUNNING_OUTCOME, Attempt, Job, JobStatus, execution_name
from richdoc.taxonomy import kind_of_error_name
from richdoc_client.tables import table_csv_name
from richdoc_tools.console.diagram import Diagram, draw
from richdoc_tools.console.execution import StateRun, state_runs
from richdoc_tools.console.forms import form_reason, job_or_abort
from richdoc_tools.console.security import attachment
from richdoc_tools.console.settings import settings
from richdoc_tools.console.summaries import JobSummary
from richdoc_tools.console.twins import page, respond
from richdoc_tools.ops import executions, objects
from richdoc_tools.ops.cancel import cancel_jobs, finished_detail
from richdoc_tools.ops.redrive import not_redrivable, redrive_ids
from richdoc_tools.ops.shards import ShardParse, shard_parses
from richdoc_tools.ops.statemachine import Machine

blueprint = Blueprint("job", __name__)
# A download's media type by its file's suffix (JSON otherwise).
MEDIA_TYPES = {".jsonl": "application/x-ndjson", ".md": "text/markdown", ".csv": "text/csv"}


class AttemptRow(BaseModel):
    """An attempt on the timeline: as ``richdoc jobs show --json`` prints it, and the
    failure kind of its outcome's error name (``kind``)."""

    model_config = ConfigDict(frozen=True)

    attempt: Attempt
    kind: str | None

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptRow:
        failed = attempt.outcome not in (OK_OUTCOME, RUNNING_OUTCOME)
        return cls(
            attempt=attempt, kind=str(kind_of_error_name(attempt.outcome)) if failed else None
        )

    @model_serializer
    def _public(self) -> dict[str, object]:
        return {**self.attempt.to_dict(), "kind": self.kind}


class ShardRow(BaseModel):
    """A page-range shard of a run's parse, as its attempts tell it (``ShardParse``), and
    its ``status``: done, running, or failed (its last attempt's error)."""

    model_config = ConfigDict(frozen=True)

    shard: ShardParse
    status: str

    @classmethod
    def of(cls, shard: ShardParse) -> ShardRow:
        return cls(shard=shard, status=_shard_status(shard.outcome))

    @model_serializer
    def _public(self) -> dict[str, object]:
        return {
            **dataclasses.asdict(self.shard),
            "pages": str(self.shard.pages),
            "status": self.status,
        }


class Download(BaseModel):
    name: str
    url: str


class JobAction(BaseModel):
    name: str
    label: str
    url: str
    available: bool
    why: str | None  # why it is not available


class ActionResult(BaseModel):
    """What a Cancel or Redrive did: the command's outcome and its words."""

    action: str  # cancel, redrive
    outcome: str  # CancelOutcome or RedriveOutcome
    detail: str


class ExecutionView(BaseModel):
    arn: str
    run: int
    status: str | None  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED; None: not started
    started_at: str | None
    stopped_at: str | None


class JobView(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    job: JobSummary  # the job's record as `richdoc jobs show --json` prints it, and more
    execution: ExecutionView | None
    runs: list[int]
    states: dict[str, StateRun]
    transitions_taken: list[tuple[str, str]]
    attempts: list[AttemptRow]
    shards: list[ShardRow]
    downloads: list[Download]
    document_url: str | None
    actions: list[JobAction]
    result: ActionResult | None = None  # after a Cancel or a Redrive
    twin: str  # where the page's script reads the job's updates
    diagram: Diagram = Field(exclude=True)  # drawn by the page, not sent to scripts


@page(blueprint, "/jobs/<job_id>", "job.html")
def job_page(job_id: str) -> JobView:
    return _view(job_or_abort(job_id))


def _view(job: Job) -> JobView:
    operator = settings().operator
    attempts = operator.jobs.attempts.of_job(job.job_id)
    run = _run(job)
    execution = None
    definition: dict[str, object] | None = None
    events = []
    if job.execution_arn:
        arn = _execution_arn(job.execution_arn, job.job_id, run)
        try:
            described = executions.describe(operator, arn)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ExecutionDoesNotExist":
                raise
            execution = ExecutionView(
                arn=arn, run=run, status=None, started_at=None, stopped_at=None
            )
        else:
            execution = ExecutionView(
                arn=arn,
                run=run,
                status=described["status"],
                started_at=described["startDate"].isoformat(),
                stopped_at=s.isoformat() if (s := described.get("stopDate")) else None,
            )
            events = executions.history(operator, arn)
            definition = executions.definition(operator, arn)
    text = json.dumps(definition if definition is not None else executions.definition(operator))
    machine, diagram = _drawn(text)
    runs = state_runs(machine, events)
    return JobView(
        job=JobSummary.of(job),
        execution=execution,
        runs=list(range(1, job.run + 1)),
        states=runs.states,
        transitions_taken=sorted(runs.taken),
        attempts=[AttemptRow.of(a) for a in attempts],
        shards=[ShardRow.of(s) for s in shard_parses(attempts)],
        downloads=_downloads(job),
        document_url=(
            url_for("document.document_page", job_id=job.job_id) if job.outputs else None
        ),
        actions=_actions(job),
        twin=_twin(job, run),
        diagram=diagram,
    )


@blueprint.get("/jobs/<job_id>/artifacts/<name>")
def artifact(job_id: str, name: str) -> Response:
    """docling.json, projection.json, detection.json, chunks.jsonl or document.md of the
    job's run: a download."""
    job = job_or_abort(job_id)
    keys = job.outputs.files() if job.outputs else {}
    if name not in keys:
        abort(404, f"the job has no {name}")
    data = objects.artifact(settings().operator, keys[name])
    mimetype = MEDIA_TYPES.get(PurePosixPath(name).suffix, "application/json")
    return attachment(data, f"{job.job_id[:12]}-{name}", mimetype)


@blueprint.get("/jobs/<job_id>/tables/<name>")
def table(job_id: str, name: str) -> Response:
    """One table CSV of the job's run (``table-<node id>.csv``): a download."""
    job = job_or_abort(job_id)
    data = objects.table(settings().operator, job, name)
    if data is None:
        abort(404, f"the job has no {name}")
    return attachment(data, f"{job.job_id[:12]}-{name}", MEDIA_TYPES[".csv"])


@blueprint.get("/jobs/<job_id>/source")
def source(job_id: str) -> Response:
    """The uploaded file, only ever as a download: it may be HTML (an accepted input)."""
    job = job_or_abort(job_id)
    data = objects.source(settings().operator, job.source)
    return attachment(data, PurePosixPath(job.source.key).name, "application/octet-stream")


@blueprint.post("/jobs/<job_id>/cancel")
def cancel(job_id: str) -> Response:
    """``richdoc jobs cancel JOB_ID --reason ...``: the record first, then the execution."""
    job = job_or_abort(job_id)
    [done] = cancel_jobs(settings().operator, [job.job_id], reason=form_reason() or None)
    return _answer(
        job.job_id, ActionResult(action="cancel", outcome=done.outcome, detail=done.detail)
    )


@blueprint.post("/jobs/<job_id>/redrive")
def redrive(job_id: str) -> Response:
    """``richdoc jobs redrive JOB_ID``: the job's next run, from its stored message."""
    job = job_or_abort(job_id)
    [done] = redrive_ids(settings().operator, [job.job_id]).results
    return _answer(
        job.job_id, ActionResult(action="redrive", outcome=done.outcome, detail=done.detail)
    )


def _twin(job: Job, run: int) -> str:
    """The page's JSON twin (a POST's answer is at the action's address, not the page's)."""
    earlier: dict[str, Any] = {"run": run} if run != job.run else {}
    return url_for("job.job_page", job_id=job.job_id, as_json=True, **earlier)


def _answer(job_id: str, result: ActionResult) -> Response:
    """The job as the action left it, with what the action did."""
    view = _view(job_or_abort(job_id))
    view.result = result
    return respond(view, "job.html")


def _actions(job: Job) -> list[JobAction]:
    """Cancel while the run is open; Redrive when ``richdoc jobs redrive`` would send."""
    if job.status in (JobStatus.QUEUED, JobStatus.RUNNING):
        cancel_why = None
    elif job.status is JobStatus.CANCELLED:
        cancel_why = "the job is cancelled already"
    else:
        cancel_why = finished_detail(job)
    refusal = not_redrivable(job)
    return [
        JobAction(
            name=name,
            label=label,
            url=url_for(f"job.{name}", job_id=job.job_id),
            available=why is None,
            why=why,
        )
        for name, label, why in (
            ("cancel", "Cancel", cancel_why),
            ("redrive", "Redrive", refusal[1] if refusal else None),
        )
    ]


def _run(job: Job) -> int:
    raw = request.args.get("run", "")
    if not raw:
        return job.run
    if not raw.isdigit() or not 1 <= int(raw) <= job.run:
        abort(400, f"the job has runs 1 to {job.run}, not {raw!r}")
    return int(raw)


def _execution_arn(current_arn: str, job_id: str, run: int) -> str:
    """The execution of ``run``: executions are named ``<job id>-r<run>``."""
    return current_arn.rsplit(":", 1)[0] + ":" + execution_name(job_id, run)


@functools.lru_cache(maxsize=8)
def _drawn(definition: str) -> tuple[Machine, Diagram]:
    machine = Machine.from_definition(json.loads(definition))
    return machine, draw(machine)


def _shard_status(outcome: str) -> str:
    if outcome == OK_OUTCOME:
        return "done"
    return "running" if outcome == RUNNING_OUTCOME else "failed"


def _downloads(job: Job) -> list[Download]:
    files = [
        Download(name="source", url=url_for("job.source", job_id=job.job_id)),
    ]
    if job.outputs is not None:
        files += [
            Download(name=name, url=url_for("job.artifact", job_id=job.job_id, name=name))
            for name in job.outputs.files()
        ]
        names = [table_csv_name(t.node) for t in objects.tables(settings().operator, job)]
        files += [
            Download(
                name=f"{OUTPUT_FOLDERS['tables_prefix']}/{name}",
                url=url_for("job.table", job_id=job.job_id, name=name),
            )
            for name in names
        ]
    return files
