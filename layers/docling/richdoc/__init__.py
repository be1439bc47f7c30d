"""richdoc: deterministic graph projection and temporal-ambiguity detection for documents
parsed by docling, orchestrated by AWS Step Functions.

The Lambda code, one module or package per concept; the handlers
(``functions/*/app.py``) are thin adapters over it.

* ``contracts``: the typed contract of every state, what each Lambda receives and returns.
* ``stage``: what every step handler shares: the contract, Powertools, the attempt record.
* ``taxonomy``: the typed failure taxonomy shared by every step, the state machine and the
  CLI.
* ``ingest``: an ingest-queue message -> a job waiting in the backlog (the starter).
* ``admission``: uploads wait in a durable backlog until the deployment has room.
* ``jobs``: job and attempt records in one DynamoDB table.
* ``records``: the records function: the job transitions the state machine asks for, and
  the backstops.
* ``formats``: what an input file is, and whether it is safe to hand to docling.
* ``worker``: the isolated worker, a single-threaded zygote that forks a child per task.
* ``parse``: the parse step, split by where each part runs (plan, parse, merge).
* ``graph``: the data model of ``projection.json``.
* ``projection``: a DoclingDocument -> the richdoc graph.
* ``markdown``: the run's document as Markdown (``document.md``), by docling-core.
* ``project_step``: the Project state: a run's DoclingDocument -> its outputs beside it.
* ``detection``: temporal-ambiguity detection over a projection.
* ``temporal``: absolute date recognition and calendar helpers.
* ``notifier``: a job's terminal change -> its outputs kept with the document, the
  manifest refreshed, one completion event.
* ``completion``: which job record changes are completions, and the event each publishes.
* ``document_results``: each successful run's outputs, kept with its document.
* ``manifests``: each document's manifest, the one place naming its current results.
* ``metadata``: which of a source object's user metadata and tags travel with its results.
* ``deletion``: deleting a job and everything derived only from its source object.
* ``deadletter``: what a failed run leaves on the DLQ, and how operators redrive it.
* ``artifacts``: where artifacts live in S3, and the S3 I/O every step shares.
* ``awserrors``: one classification of AWS SDK failures: what is worth retrying.
* ``awstext``: user text in AWS string fields: the characters and sizes each accepts.
* ``wiring``: the AWS clients and the stores over them, made in one place.
* ``metrics``: the metrics richdoc reports (namespace ``richdoc``, Powertools EMF).
* ``tracing``: the handlers' X-Ray tracer (Powertools).
* ``logcontext``: per-invocation log keys, kept to the invocation.
"""

__version__ = "0.4.0"
