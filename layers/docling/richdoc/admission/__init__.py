"""Admission control: uploads wait in a durable backlog until the deployment has room.

A job is QUEUED in its tenant's backlog when its upload (or a redrive, or a reprocess)
arrives, and stays there, costing only its record's storage, until a dispatcher admits it
into a free slot; only then does its execution start, and its run becomes RUNNING at the
definition's first state. Never more than ``MaxRunningJobs`` slots are held at once (a
sharded document holds one more for each shard it parses side by side), never more than
``MaxRunningJobsPerTenant`` by one tenant; tenants are served in turn (the least recently
served first) and each tenant's jobs in the order they were uploaded.

* ``tenants``: whom an upload runs for;
* ``settings``: the capacity and each tenant's share;
* ``backlog``: the waiting jobs (a sparse index of the jobs table) and the tenants that
  have some;
* ``slots``: the slot ledger: slots taken and given back, exactly once, in transactions;
* ``dispatcher``: what the jobs table's stream and a schedule wake: releases, admissions,
  executions started;
* ``reconcile``: the sweep's audit of the ledger against the jobs and their executions.

docs/architecture.md, "Bounded concurrency", says why the backlog lives in the jobs table
rather than in executions waiting on task tokens or on a second queue.
"""
