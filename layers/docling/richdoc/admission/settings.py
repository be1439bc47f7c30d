"""How much runs at once: the deployment's capacity and each tenant's share of it.

``MaxRunningJobs`` (template parameter) is the capacity in slots: a document in flight
holds one, a sharded document one more for each shard it parses side by side. The
template derives its default (``RICHDOC_MAX_RUNNING_JOBS``) from parse tier 1's reserved
concurrency, so admitted work never meets a throttle. ``MaxRunningJobsPerTenant`` bounds
one tenant's slots (0: the whole capacity).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_RUNNING_JOBS_ENV = "RICHDOC_MAX_RUNNING_JOBS"
MAX_RUNNING_JOBS_PER_TENANT_ENV = "RICHDOC_MAX_RUNNING_JOBS_PER_TENANT"
# What a deployment without the setting runs at once (the template always sets it).
DEFAULT_CAPACITY = 20
# The most slots a deployment may have (template.yaml's MaxValue of MaxRunningJobs): the
# slot ledger is one item, which DynamoDB refuses past 400 KB, and it holds one entry per
# document in flight; at this many it fits whatever the tenants' names
# (``slots.ledger_bytes``: 394,188 bytes at the worst; 363 entries at most would fit).
MAX_CAPACITY = 350


@dataclass(frozen=True)
class AdmissionSettings:
    capacity: int = DEFAULT_CAPACITY
    per_tenant: int = DEFAULT_CAPACITY

    def __post_init__(self) -> None:
        if not 1 <= self.capacity <= MAX_CAPACITY:
            raise ValueError(f"the capacity must be 1 to {MAX_CAPACITY} slots, not {self.capacity}")
        if not 1 <= self.per_tenant <= self.capacity:
            raise ValueError(
                f"a tenant's share must be 1 to {self.capacity} slots, not {self.per_tenant}"
            )

    @classmethod
    def of(cls, capacity: int, per_tenant: int = 0) -> AdmissionSettings:
        """``per_tenant`` 0 (or above the capacity) is the whole capacity."""
        share = per_tenant if 0 < per_tenant < capacity else capacity
        return cls(capacity=capacity, per_tenant=share)

    @classmethod
    def from_env(cls) -> AdmissionSettings:
        def number(name: str, default: int) -> int:
            value = os.environ.get(name, "").strip()
            return int(value) if value else default

        return cls.of(
            number(MAX_RUNNING_JOBS_ENV, DEFAULT_CAPACITY),
            number(MAX_RUNNING_JOBS_PER_TENANT_ENV, 0),
        )
