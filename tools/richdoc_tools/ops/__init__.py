"""The operator's services over a stack, deployed or embedded: one module per thing an
operator does (find, show and delete jobs, cancel, redrive, watch, the failure groups,
the tier ladder, the dead-letter queue, executions, completion events), each a function
of one ``operator.Operator``: the stack's resources and clients, nothing else.

The command line (``richdoc jobs``, ``richdoc dlq``) and the console call the same
functions; nothing here imports either of them, or the embedded stack, and the modules
import each other in no circle, not even for type checking
(``tests/unit/test_package_boundaries.py`` holds that).

The modules: ``operator`` (the stack's resources and clients), ``jobs`` (found by id or
prefix, shown, deleted), ``job_document`` (a job's public JSON), ``objects`` (the
artifacts and the source object a job names), ``shards`` (a parse's page-range shards
and their attempts), ``uploads`` (a file dropped into the ingest bucket), ``watch``
(one job until its run ends), ``cancel``, ``redrive`` and ``reprocess`` (runs stopped,
started again, run again), ``failures`` (failed jobs grouped by what went wrong),
``backlog`` and ``drain`` (the waiting jobs, and how fast they drain), ``tiers`` (the
parse tier ladder), ``dead_letter_queue`` (read, redrive, discard), ``executions`` (a
run's execution as Step Functions tells it), ``statemachine`` (the definition as a
graph), ``history`` (the most events one execution can write) and ``events`` (completion
events read back and published again).
"""
