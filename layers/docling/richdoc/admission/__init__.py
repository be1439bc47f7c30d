"""Admission control: uploads wait in a durable backlog until the deployment has room.

A job is QUEUED in its tenant's backlog when its upload (or a redrive, or a reprocess)
arrives, and stays there, costing only its record's storage, until a dispatcher admits it
into a free slot; only then does its execution start, and its run becomes RUNNING at the
definition's first state. Never more than ``MaxRunningJobs`` slots are held at once (a
sharded document holds one more for each shard it parses side by side), never more than
``MaxRunningJobsPerTenant`` by one tenant; the tenants' backlogs are served in turn (the
least recently served first) and each backlog's jobs in the order they were queued.

One word for each thing (docs/architecture.md, "Bounded concurrency", has the table):

* queue: an SQS queue, nothing else; QUEUED is a run's status while it waits (or its
  execution starts), and to queue a run is to write it QUEUED in a backlog;
* backlog: jobs waiting for a slot; a tenant has two (``BacklogKind``: its uploads and
  their redrives, its reprocessed runs), and the backlog is all of them;
* lane: the backlogs that may have waiting jobs, in the order of their turns; each
  backlog has one lane item, in the lane while it carries ``lane``;
* turn: a backlog's chance to have its oldest job admitted, least recently served first;
* slot: a unit of the capacity, held by a running run (a sharded run holds more);
* admit: a waiting job takes one slot; claim: a running sharded run takes more slots for
  its shards; release: a run's slots given back; hand over: released and admitted in one
  write.

The deployed and published names keep older words: the backlog index is ``by-queue``, a
lane item says which backlog in its ``queue`` attribute, ``richdoc jobs backlog`` in its
``queue`` column and JSON member, ``richdoc jobs list`` shows a waiting job's place under
``queue``, and the dispatcher's answer lists the backlogs it put back in the lane as
``lanes``.

* ``tenants``: whom an upload runs for;
* ``settings``: the capacity and each tenant's share;
* ``backlog``: the waiting jobs (a sparse index of the jobs table), their backlogs and
  the lane;
* ``slots``: the slot ledger: slots taken and given back, exactly once, in transactions;
* ``dispatcher``: what the jobs table's stream and a schedule wake: releases, admissions,
  executions started;
* ``reconcile``: the sweep's audit of the ledger against the jobs and their executions.

docs/architecture.md, "Bounded concurrency", says why the backlog lives in the jobs table
rather than in executions waiting on task tokens or on a second queue.
"""
