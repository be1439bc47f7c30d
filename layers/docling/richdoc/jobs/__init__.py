"""Job and attempt records in one DynamoDB table.

A job is one source object version; its id is derived from bucket, key and version id
(or ETag when the bucket is unversioned), so duplicate notifications land on the same job.
Each run of a job is one state machine execution named ``<job id>-r<run>``; a redrive of a
dead-lettered job starts the next run. Every status write is conditional on the run, so
a stale run can never overwrite a newer run's status.

Items (``pk`` = ``JOB#<job id>``, ``keys``):

* ``sk = "JOB"``: the job (``model.Job``): status, run, stage, source, options, the number
  of page-range shards its parse runs as, failure, outputs, counts, the original ingest
  message and, once dead-lettered, the dead-letter message's id; the latest run that
  ended and how (kept while a later run waits, runs or fails, as are the outputs and
  counts of its latest success); and the attempt counters. Only job items carry
  ``job_status``, so the ``by-status`` index is sparse.
* ``sk = "ATTEMPT#r<run>#<seq>"``: one per Lambda attempt (``model.Attempt``): stage,
  tier, the shard's pages, outcome, whether the artifact cache answered, timings.

A failed run is recorded in two steps: FAILED (the failure is known, the job is visible
and not terminal), then DEAD_LETTERED once its dead-letter message is on the queue, so no
job is terminal without the message an operator redrives. An operator's cancel makes a
QUEUED or RUNNING run CANCELLED (terminal) in one conditional write; the run's own later
writes are then refused (``JobCancelled``). The job's ``phase`` (``phase``) says how far
its run has come.

``store.JobStore`` reads and writes them: job transitions in ``store``, attempts through
its ``attempts`` (``attempts.AttemptRecords``: the same table, clock and retention), the
requests' expressions and the run fence in ``table``, listings page by page in
``listing``, the phase vocabulary and the progress it shows in ``phase``.

``model`` holds the job and attempt records as typed models, in their two forms (the
DynamoDB item and the JSON the command line prints); ``references`` finds which live jobs
use the parse artifacts of one document's bytes.
"""

from richdoc.jobs.keys import (
    STATUS_INDEX,
    attempt_key,
    attempts_prefix,
    digest_key,
    execution_arn,
    execution_name,
    job_id_for,
    job_key,
    partition_key,
)
from richdoc.jobs.listing import JobFilter, JobPage, Position
from richdoc.jobs.model import (
    CANCELLED_OUTCOME,
    ENDED_STATUSES,
    FAILED_STATUSES,
    OK_OUTCOME,
    OPEN_STATUSES,
    REDRIVABLE_STATUSES,
    RUNNING_OUTCOME,
    Attempt,
    AttemptStage,
    CancelRecord,
    DeadLetterMark,
    DeadLetterSender,
    DeletedBy,
    DeletionMark,
    Job,
    JobStatus,
    RedriveRequest,
    RunEnd,
    timestamp,
)
from richdoc.jobs.phase import JobPhase, Progress
from richdoc.jobs.store import JOB_RETENTION_ENV, JOBS_TABLE_ENV, JobStore
from richdoc.jobs.table import JobCancelled, StaleRun

__all__ = [
    "CANCELLED_OUTCOME",
    "ENDED_STATUSES",
    "FAILED_STATUSES",
    "JOBS_TABLE_ENV",
    "JOB_RETENTION_ENV",
    "OK_OUTCOME",
    "OPEN_STATUSES",
    "REDRIVABLE_STATUSES",
    "RUNNING_OUTCOME",
    "STATUS_INDEX",
    "Attempt",
    "AttemptStage",
    "CancelRecord",
    "DeadLetterMark",
    "DeadLetterSender",
    "DeletedBy",
    "DeletionMark",
    "Job",
    "JobCancelled",
    "JobFilter",
    "JobPage",
    "JobPhase",
    "JobStatus",
    "JobStore",
    "Position",
    "Progress",
    "RedriveRequest",
    "RunEnd",
    "StaleRun",
    "attempt_key",
    "attempts_prefix",
    "digest_key",
    "execution_arn",
    "execution_name",
    "job_id_for",
    "job_key",
    "partition_key",
    "timestamp",
]
