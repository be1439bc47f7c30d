"""How an embedded stack is started: ``StackSettings``, built once by its user (``richdoc
run``, ``richdoc local serve``, ``richdoc console``, a test, a bench) and never changed
after. What changes while the stack runs lives on the stack: the port it bound (0 picks
one), the checkout and parameters an update deployed, a test's scripted failures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from richdoc_tools.local.faults.injected import FaultSettings
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import IndexLag

DEFAULT_STACK_NAME = "richdoc"


@dataclass(frozen=True, kw_only=True)
class StackSettings:
    """``root``: the checkout whose template and handlers are deployed (this one by
    default); ``parameters``: the template's parameter values (its defaults for the rest);
    ``retry_delay_scale``: the state machine's and the SDK's retry waits, scaled;
    ``retry_visibility_s``: how long a message the SQS event source let go of stays
    invisible; ``timeout_override_s``: function logical id -> its timeout here, instead of
    the template's; ``log_path``: function output goes there (``runtime.output``);
    ``capture_process_output``: descriptor-level output too (for a command line, never
    under pytest's own capture); ``server_port``: serve on 127.0.0.1 (0 picks a free
    port); ``schedules``: scheduled rules fire and lifecycle rules apply on their own
    schedule (False: only when a test asks, at the time it chooses); ``strict``: enforce
    what AWS does (False: moto's leniency, for debugging); ``injected_faults``: fail at a
    rate (``faults.injected``); ``lifecycle_day_s``: how long a day lasts on the stack's
    clock (``runtime.clock``: S3 lifecycle days, stream record ages); ``webhook_ca_file``:
    an authority the webhook delivery trusts beside the system's (a local receiver's
    certificate: ``runtime.webhooks``); ``index_lag``: how long a write takes to show in a
    global secondary index (strict stacks only)."""

    root: Path | None = None
    stack_name: str = DEFAULT_STACK_NAME
    parameters: Mapping[str, str] = field(default_factory=dict)
    retry_delay_scale: float = 0.01
    retry_visibility_s: int = 1
    timeout_override_s: Mapping[str, float] = field(default_factory=dict)
    log_path: Path | None = None
    capture_process_output: bool = False
    server_port: int | None = None
    schedules: bool = True
    strict: bool = True
    injected_faults: FaultSettings | None = None
    lifecycle_day_s: float | None = None
    webhook_ca_file: Path | None = None
    index_lag: IndexLag | None = None

    def __post_init__(self) -> None:
        # Frozen through and through: a caller's dict changed later changes nothing here.
        object.__setattr__(self, "parameters", MappingProxyType(dict(self.parameters)))
        timeouts = MappingProxyType(dict(self.timeout_override_s))
        object.__setattr__(self, "timeout_override_s", timeouts)
