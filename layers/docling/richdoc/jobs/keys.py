"""Names in the jobs table: job ids, execution names, and the keys of job and attempt items.

Every item of a job shares its partition, ``pk = JOB#<job id>``; the job itself is
``sk = JOB`` and each attempt ``sk = ATTEMPT#r<run>#<seq>`` (zero-padded, so a run's
attempts sort in the order they were opened). The jobs using one document's bytes are
listed apart, ``pk = DOC#<sha256>``, ``sk = REFS``. Admission keeps the deployment's slot
ledger at ``pk = ADMISSION``, ``sk = SLOTS``, and per tenant: the lane items of its two
backlogs at ``pk = TENANT#<tenant>``, ``sk = TENANT`` (its uploads) and ``sk =
TENANT#reprocess`` (its reprocessed runs), and its slots held at ``sk = SLOTS``
(``richdoc.admission``); the sweep's cursor at ``pk = SWEEP``, ``sk = CURSOR``. These
functions are the only spelling of those keys.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum

from richdoc.contracts import PageSpan

JOB_SK = "JOB"
_PARTITION_PREFIX = "JOB#"
_ATTEMPT_PREFIX = "ATTEMPT#"
# The sparse index of job items by status (``job_status``) and ``updated_at``.
STATUS_INDEX = "by-status"
_DIGEST_PREFIX = "DOC#"
_REFERENCES_SK = "REFS"
# The backlog index: the sparse index of the jobs waiting for a slot (a job item carries
# ``backlog_key``, ``<queued at>#<job id>``, only while it waits, under its ``tenant``).
# Its deployed name says "queue" for the QUEUED status.
BACKLOG_INDEX = "by-queue"
# The lane index: the sparse index of the lane items in the lane (``lane``: backlogs that
# may have jobs waiting), least recently served (``last_served``) first.
LANE_INDEX = "tenants-by-service"
_TENANT_PREFIX = "TENANT#"
_TENANT_SK = "TENANT"
_SHARE_SK = "SLOTS"
# A reprocessed run's place in its tenant's reprocess backlog sorts after every upload
# time (an ISO time begins with a digit): one prefix of the sort key tells the two
# backlogs apart.
REPROCESS_PREFIX = "reprocess#"


class BacklogKind(StrEnum):
    """Which of its tenant's two backlogs a waiting run is in: a tenant's uploads (and their
    redrives) and its reprocessed runs wait apart, each backlog taking its own turns."""

    UPLOADS = "uploads"
    REPROCESS = "reprocess"


# The primary key of an item (``pk``, ``sk``).
ItemKey = dict[str, str]


def job_id_for(bucket: str, key: str, version: str) -> str:
    """Deterministic job id: the same object version always maps to the same job."""
    digest = hashlib.sha256(f"{bucket}\x00{key}\x00{version}".encode()).hexdigest()
    return digest[:32]


def execution_name(job_id: str, run: int) -> str:
    return f"{job_id}-r{run}"


def execution_arn(state_machine_arn: str, job_id: str, run: int) -> str:
    """The ARN the execution of a run has (or will have) on that state machine: Step
    Functions names a Standard execution ``arn:<partition>:states:<region>:<account>:
    execution:<machine>:<execution name>``."""
    head, kind, machine = state_machine_arn.rsplit(":", 2)
    if kind != "stateMachine":
        raise ValueError(f"not a state machine's ARN: {state_machine_arn!r}")
    return f"{head}:execution:{machine}:{execution_name(job_id, run)}"


def partition_key(job_id: str) -> str:
    """The partition of a job and all its attempts."""
    return f"{_PARTITION_PREFIX}{job_id}"


def job_id_of(partition: str) -> str:
    """The job whose partition (``partition_key``) this is."""
    if not partition.startswith(_PARTITION_PREFIX):
        raise ValueError(f"not a job's partition: {partition!r}")
    return partition[len(_PARTITION_PREFIX) :]


def job_key(job_id: str) -> ItemKey:
    return {"pk": partition_key(job_id), "sk": JOB_SK}


def attempts_prefix(run: int | None = None) -> str:
    """The sort-key prefix of a run's attempts (of every run's, when ``run`` is None)."""
    return _ATTEMPT_PREFIX if run is None else f"{_ATTEMPT_PREFIX}r{run:03d}#"


def attempt_key(job_id: str, run: int, seq: int) -> ItemKey:
    return {"pk": partition_key(job_id), "sk": f"{attempts_prefix(run)}{seq:04d}"}


def is_attempt_key(sort_key: str) -> bool:
    return sort_key.startswith(_ATTEMPT_PREFIX)


def attempt_series(run: int, stage: str, pages: PageSpan | None) -> str:
    """What attempts are numbered within: a stage of a run, and the shard (``pages``) in
    it; the job item counts each series' attempts under this name (a slot is admission's
    word alone)."""
    return f"r{run}#{stage}#{pages}" if pages else f"r{run}#{stage}"


def digest_key(sha256: str) -> ItemKey:
    """The item that says which jobs use the artifacts of one document's bytes
    (``docling/<sha256>/...``): its own partition, never a job's."""
    return {"pk": f"{_DIGEST_PREFIX}{sha256}", "sk": _REFERENCES_SK}


def ledger_key() -> ItemKey:
    """The deployment's slot ledger: how many slots are held, and by which jobs."""
    return {"pk": "ADMISSION", "sk": "SLOTS"}


def lane_key(tenant: str, backlog: BacklogKind = BacklogKind.UPLOADS) -> ItemKey:
    """The lane item of one of a tenant's backlogs: whether the backlog is in the lane (it
    may have waiting jobs), when it was last served (single writes only: the starter marks
    it while uploads arrive)."""
    sk = _TENANT_SK if backlog is BacklogKind.UPLOADS else f"{_TENANT_SK}#{backlog}"
    return {"pk": f"{_TENANT_PREFIX}{tenant}", "sk": sk}


def share_key(tenant: str) -> ItemKey:
    """A tenant's share: the slots its jobs hold (written in the ledger's transactions)."""
    return {"pk": f"{_TENANT_PREFIX}{tenant}", "sk": _SHARE_SK}


def backlog_key(queued_at: str, job_id: str, backlog: BacklogKind = BacklogKind.UPLOADS) -> str:
    """A waiting job's place in one of its tenant's backlogs: upload (or redrive) time,
    then its id; a reprocessed run's after the prefix of its backlog."""
    place = f"{queued_at}#{job_id}"
    return place if backlog is BacklogKind.UPLOADS else f"{REPROCESS_PREFIX}{place}"


def backlog_of(key: str) -> BacklogKind:
    """The backlog a ``backlog_key`` places its job in."""
    return BacklogKind.REPROCESS if key.startswith(REPROCESS_PREFIX) else BacklogKind.UPLOADS


def queued_at_of(key: str) -> str:
    """When the job a ``backlog_key`` places was queued."""
    return key.removeprefix(REPROCESS_PREFIX).rsplit("#", 1)[0]


def sweep_cursor_key() -> ItemKey:
    """Where the sweep left its walk over the open jobs (it resumes there)."""
    return {"pk": "SWEEP", "sk": "CURSOR"}
