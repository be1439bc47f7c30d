"""``richdoc deploy check``: what would make ``sam build && sam deploy`` of template.yaml
fail on this account, said in plain words, with the parameter values or the quota
increase that fix it.

What it reads: the region; Docker (``sam build`` builds the parse tiers' container image
with it); the template's parameters (defaults, then samconfig.toml's
``parameter_overrides``, then the deployed stack's values, then ``--parameter-overrides``,
as ``sam deploy`` applies them); and Lambda's account settings (GetAccountSettings: the
concurrency quota and what is left unreserved). No API shows the function memory quota
(new accounts may be held at 3,008 MB until AWS raises it), so that check says how to find
it unless ``--memory-quota-mb`` states it.

Besides what would fail, findings warn of what deploys but runs badly: admission's
capacity (``MaxRunningJobs``, derived as the template derives it) against what the
functions can run at once (``peak_demand``: every slot busy, each with one invocation of
a step, beside the starter's batches, the dispatcher, the notifier and the records
function's backstops), so admitted work is never throttled; the same capacity against
what admission's slot ledger, one DynamoDB item, holds and takes (``_ledger``); and an
empty ``AlarmEmail``, which leaves the alarms unheard.

``assess`` is pure: the readings in, the findings out.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from richdoc_tools.local.cloudformation.parameters import ParameterError, check_values

if TYPE_CHECKING:
    import boto3

    from richdoc.admission.slots import Ledger
    from richdoc_tools.local.cloudformation.template import Template

# Lambda always keeps this many concurrent executions unreserved: reservations that would
# leave fewer fail (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
UNRESERVED_MINIMUM = 100
# What a new account's functions may be given at most, until AWS raises it.
NEW_ACCOUNT_MEMORY_MB = 3008
# Service Quotas' code of Lambda's "Concurrent executions".
CONCURRENCY_QUOTA_CODE = "L-B99A9384"


class Status(StrEnum):
    OK = "ok"
    FAIL = "fail"  # the deploy would fail (or cannot run)
    CHECK = "check"  # cannot be told from here: the finding says how to find out
    WARN = "warn"  # it deploys, but runs worse than it should: the finding says what to set


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    says: str
    fix: str | None = None


@dataclass(frozen=True)
class Sizing:
    """What the template's functions ask for with a set of parameter values."""

    memory_mb: dict[str, int]  # function logical id -> MemorySize
    reserved: dict[str, int]  # function logical id -> ReservedConcurrentExecutions
    # Every parameter's value: the given ones, the template's defaults for the rest.
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def total_reserved(self) -> int:
        return sum(self.reserved.values())

    def number(self, parameter: str) -> int:
        return int(float(self.parameters[parameter]))


@dataclass(frozen=True)
class Readings:
    """What the command found out about the account and the machine."""

    region: str | None
    docker: str | None  # why Docker cannot build, None when it can
    concurrency_limit: int | None  # AccountLimit.ConcurrentExecutions
    unreserved: int | None  # AccountLimit.UnreservedConcurrentExecutions
    settings_error: str | None = None  # why the account settings could not be read
    memory_quota_mb: int | None = None  # as the user stated it
    # The stack's own reservations now, when it is deployed: an update frees them.
    reserved_by_stack: int = 0
    parameters: dict[str, str] = field(default_factory=dict)


# Parameter values the template refuses (unknown name, out of range, not allowed).
BadParameters = ParameterError


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """``Key=Value`` items (sam's ``--parameter-overrides`` shorthand; quotes dropped)."""
    values: dict[str, str] = {}
    for pair in pairs:
        for item in pair.split():
            name, sep, value = item.partition("=")
            if not sep or not name:
                raise BadParameters(f"not Key=Value: {item!r}")
            values[name] = value.strip("\"'")
    return values


def samconfig(path: Path) -> tuple[dict[str, str], str | None]:
    """samconfig.toml's deploy ``parameter_overrides`` and region (default environment)."""
    if not path.is_file():
        return {}, None
    config = tomllib.loads(path.read_text())
    default = config.get("default", {})
    deploy = {**default.get("global", {}).get("parameters", {})}
    deploy.update(default.get("deploy", {}).get("parameters", {}))
    overrides = deploy.get("parameter_overrides", "")
    items = overrides if isinstance(overrides, list) else [overrides]
    region = deploy.get("region")
    return parse_overrides([str(i) for i in items]), str(region) if region else None


def check_parameters(template: Template, values: Mapping[str, str]) -> None:
    """Refuse what CloudFormation would refuse before creating anything."""
    check_values(template.cfn.get("Parameters", {}), values)


def sizing(template: Template, parameters: Mapping[str, str]) -> Sizing:
    """Each function's memory and reserved concurrency with these parameter values (the
    template's defaults for the rest), as CloudFormation resolves them."""
    from richdoc_tools.local.cloudformation.intrinsics import parameters_resolver

    resolver = parameters_resolver(template, parameters)
    memory: dict[str, int] = {}
    reserved: dict[str, int] = {}
    for logical_id, resource in template.resources.items():
        if resource.get("Type") != "AWS::Lambda::Function":
            continue
        props = resource.get("Properties", {})
        asked = resolver.resolve(
            {k: props[k] for k in ("MemorySize", "ReservedConcurrentExecutions") if k in props}
        )
        memory[logical_id] = int(asked.get("MemorySize", 128))
        if "ReservedConcurrentExecutions" in asked:
            reserved[logical_id] = int(asked["ReservedConcurrentExecutions"])
    specs: dict[str, Any] = template.cfn.get("Parameters", {})
    effective = {name: str(spec.get("Default", "")) for name, spec in specs.items()}
    effective.update(parameters)
    return Sizing(memory, reserved, effective)


def docker_problem() -> str | None:
    """Why Docker cannot build the parse image here; None when its engine answers."""
    docker = shutil.which("docker")
    if docker is None:
        return "docker is not installed (not on PATH)"
    try:
        subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            check=True,
            capture_output=True,
            timeout=20,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
        return "docker is installed but its engine does not answer (is it running?)"
    return None


def read_account(session: boto3.Session, endpoint_url: str | None) -> dict[str, Any]:
    """GetAccountSettings' AccountLimit, or ``{"error": why}``."""
    try:
        client = session.client("lambda", endpoint_url=endpoint_url)
        limit = client.get_account_settings()["AccountLimit"]
    except (ClientError, BotoCoreError) as exc:
        return {"error": str(exc)}
    return {
        "concurrency_limit": limit.get("ConcurrentExecutions"),
        "unreserved": limit.get("UnreservedConcurrentExecutions"),
    }


def _largest(sizing: Sizing) -> tuple[str, int]:
    name = max(sizing.memory_mb, key=lambda n: (sizing.memory_mb[n], n))
    return name, sizing.memory_mb[name]


def assess(readings: Readings, sizing: Sizing) -> list[Finding]:
    """What would fail, in plain words, and what fixes it."""
    return [
        _region(readings),
        _docker(readings),
        _concurrency(readings, sizing),
        _capacity(readings, sizing),
        _ledger(sizing),
        _memory(readings, sizing),
        _alarm_email(sizing),
    ]


def _region(readings: Readings) -> Finding:
    if readings.region is None:
        return Finding(
            "region",
            Status.FAIL,
            "no AWS region is set: sam deploy would not know where to deploy",
            "pass --region, set AWS_REGION, or give the profile a region",
        )
    return Finding("region", Status.OK, f"deploying to {readings.region}")


def _docker(readings: Readings) -> Finding:
    if readings.docker is not None:
        return Finding(
            "docker",
            Status.FAIL,
            f"sam build builds the parse tiers' container image with Docker: {readings.docker}",
            "install and start Docker (or build on a machine that has it)",
        )
    return Finding("docker", Status.OK, "Docker answers: sam build can build the parse image")


def _concurrency(readings: Readings, sizing: Sizing) -> Finding:
    wanted = sizing.total_reserved
    if readings.unreserved is None or readings.concurrency_limit is None:
        return Finding(
            "concurrency",
            Status.CHECK,
            f"the functions reserve {wanted} concurrent executions; the account's settings "
            f"could not be read ({readings.settings_error or 'no answer'})",
            "allow lambda:GetAccountSettings, or run: aws lambda get-account-settings",
        )
    limit = readings.concurrency_limit
    # What this stack may reserve: what is unreserved now (plus its own reservations, which
    # an update replaces), less the 100 Lambda keeps unreserved.
    room = readings.unreserved + readings.reserved_by_stack - UNRESERVED_MINIMUM
    if wanted == 0:
        return Finding(
            "concurrency",
            Status.OK,
            f"no function reserves concurrency: they share the account's {limit} concurrent "
            "executions (with a small quota, throttled steps are retried: they wait, not fail)",
        )
    if wanted <= room:
        return Finding(
            "concurrency",
            Status.OK,
            f"the functions reserve {wanted} of the {limit} concurrent executions the "
            f"account has; {max(room, 0)} can be reserved",
        )
    needed = limit + wanted - room
    return Finding(
        "concurrency",
        Status.FAIL,
        f"the functions reserve {wanted} concurrent executions, but the account has "
        f"{limit} and Lambda keeps {UNRESERVED_MINIMUM} unreserved, so at most "
        f"{max(room, 0)} can be reserved: the deploy would fail and roll back",
        "deploy with --parameter-overrides AccountProfile=small (no function reserves "
        "any; nothing caps a runaway tier), or set the *ReservedConcurrency parameters "
        f"to 0 or lower, or ask for a quota increase of Lambda 'Concurrent executions' "
        f"({CONCURRENCY_QUOTA_CODE}) to {needed} or more in Service Quotas",
    )


# Every function a run invokes, one step at a time: each slot admission gives out holds at
# most one invocation of one of them (a sharded run holds one slot per shard it parses).
RUN_STEPS = (
    "PlanFunction",
    "ParseTier1Function",
    "ParseTier2Function",
    "ParseTier3Function",
    "MergeFunction",
    "ProjectFunction",
    "DetectFunction",
    "RecordsFunction",
)
CAPACITY, STARTER = "MaxRunningJobs", "StarterMaximumConcurrency"
# Beside the runs: the dispatcher and the notifier (one stream batch each at a time); the
# records function's backstops (the reconciler, the sweep) use its reservation, if any.
STREAM_READERS = 2
BACKSTOPS = 2
# The starter's event source needs at least this many (ScalingConfig.MaximumConcurrency).
STARTER_MINIMUM = 2
# What MaxRunningJobs 0 derives (the template's RICHDOC_MAX_RUNNING_JOBS): tier 1's
# reservation, or these without one.
SMALL_ACCOUNT_CAPACITY = 4
UNRESERVED_CAPACITY = 10


def capacity(sizing: Sizing) -> int:
    """Admission's capacity with these parameters, as the template derives it."""

    def number(parameter: str) -> int:
        return int(float(sizing.parameters.get(parameter) or 0))

    given = number(CAPACITY)
    if given:
        return given
    if sizing.parameters.get("AccountProfile") == "small":
        return SMALL_ACCOUNT_CAPACITY
    return number("ParseTier1ReservedConcurrency") or UNRESERVED_CAPACITY


def peak_demand(sizing: Sizing) -> dict[str, int]:
    """Concurrent executions each function may hold with every slot busy: a run's steps
    up to the capacity each (its reservation caps what it gets), the starter's batches,
    the stream readers, the records function's backstops beside its runs' calls."""
    slots = capacity(sizing)
    demand = dict.fromkeys(RUN_STEPS, slots)
    demand["RecordsFunction"] += BACKSTOPS
    demand["StarterFunction"] = sizing.number(STARTER)
    demand["DispatcherFunction"] = demand["NotifierFunction"] = 1
    return demand


def _capacity(readings: Readings, sizing: Sizing) -> Finding:
    """Can every admitted step run without a throttle?"""
    slots, starter = capacity(sizing), sizing.number(STARTER)
    demand = peak_demand(sizing)
    short = {
        f: sizing.reserved[f]
        for f in RUN_STEPS
        if f in sizing.reserved and sizing.reserved[f] < demand[f]
    }
    if short:
        worst = min(short, key=lambda f: (short[f] - (demand[f] - slots), f))
        fits = short[worst] - (demand[worst] - slots)
        named = ", ".join(f"{f} reserves {n}" for f, n in sorted(short.items()))
        return Finding(
            "capacity",
            Status.WARN,
            f"{CAPACITY}={slots} documents run at once, each step of each holding one "
            f"invocation, but {named}: admitted steps would be throttled (retried for about "
            "13 minutes, then dead-lettered as transient)",
            f"set {CAPACITY} to {max(fits, 1)} or less, or raise those reservations to "
            f"{slots} (the records function {slots + BACKSTOPS}: its backstops run beside)",
        )
    # What the functions without a reservation can hold at once in the shared pool.
    shared = {f: n for f, n in demand.items() if f not in sizing.reserved}
    needed = sum(n for f, n in shared.items() if f not in RUN_STEPS) + max(
        (n for f, n in shared.items() if f in RUN_STEPS), default=0
    )
    what = (
        f"{CAPACITY}={slots} documents at once, with the starter's {STARTER}={starter} "
        "batches, the dispatcher, the notifier and the records function's backstops, need "
        f"{needed} concurrent executions of the functions that reserve none"
    )
    if readings.unreserved is None:
        return Finding(
            "capacity",
            Status.CHECK,
            what + "; the account's settings could not be read",
            "run: aws lambda get-account-settings",
        )
    # What the functions without a reservation share once this stack's reservations are
    # taken (an update gives back what the stack reserves now).
    pool = readings.unreserved + readings.reserved_by_stack - sizing.total_reserved
    what += f", of the {max(pool, 0)} they share"
    if needed <= pool:
        return Finding("capacity", Status.OK, what)
    runs_shared = any(f in shared for f in RUN_STEPS)
    fixed = needed - starter - (slots if runs_shared else 0)
    room = pool - fixed - STARTER_MINIMUM
    increase = (
        f"a quota increase of Lambda 'Concurrent executions' ({CONCURRENCY_QUOTA_CODE}) to "
        f"{(readings.concurrency_limit or 0) + needed - pool} or more"
    )
    if runs_shared and room >= 1:
        fix = (
            f"set {CAPACITY}={min(room, slots)} and {STARTER}={STARTER_MINIMUM} (with the "
            f"other functions' {fixed} they fit the {pool}), or ask for {increase}"
        )
    elif not runs_shared and pool - fixed >= STARTER_MINIMUM:
        fix = f"set {STARTER}={min(pool - fixed, starter)}, or ask for {increase}"
    else:
        fix = f"ask for {increase}: no setting fits this account"
    return Finding(
        "capacity",
        Status.WARN,
        what + ": with every slot busy the functions (and every other function in the "
        "account) would throttle, and throttled steps wait up to a quarter of an hour "
        "before they fail",
        fix,
    )


# The slot ledger is one item, rewritten whole by every admission and release (a slot
# handed over: one transaction), at two write units a kilobyte (a transaction's); DynamoDB
# gives one item at most 1,000 write units a second (a partition's). Born-digital
# documents run for a few seconds, each slot turning over that often.
PARTITION_WRITE_UNITS = 1000
SHORT_RUN_S = 4.0
# A tenant's name as most deployments have them (the ledger's entries grow with it).
TYPICAL_TENANT = "t" * 16


def _full_ledger(slots: int) -> Ledger:
    from richdoc.admission.slots import Holder, Ledger

    holder = Holder(run=1, slots=1, tenant=TYPICAL_TENANT, admitted_at="0" * 32)
    return Ledger(running=slots, holders={f"{n:032x}": holder for n in range(slots)})


def ledger_write_units(slots: int) -> float:
    """Write units a second the slot ledger takes with ``slots`` documents of
    ``SHORT_RUN_S`` each in flight."""
    from richdoc.admission.slots import ledger_bytes

    units = 2 * -(-ledger_bytes(_full_ledger(slots)) // 1024)
    return slots / SHORT_RUN_S * units


def ledger_slots() -> int:
    """The most slots whose short documents' turnover one item can take."""
    slots = 1
    while ledger_write_units(slots + 1) <= PARTITION_WRITE_UNITS:
        slots += 1
    return slots


def _ledger(sizing: Sizing) -> Finding:
    """Does the slot ledger hold and take this capacity?"""
    from richdoc.admission.settings import MAX_CAPACITY

    slots = capacity(sizing)
    if slots > MAX_CAPACITY:
        return Finding(
            "ledger",
            Status.FAIL,
            f"{CAPACITY}={slots} slots: admission's slot ledger, one DynamoDB item with an "
            "entry per document in flight, could pass DynamoDB's 400 KB item limit (at "
            f"most {MAX_CAPACITY} slots, whatever the tenants' names): the dispatcher "
            "refuses to run",
            f"set {CAPACITY} to {MAX_CAPACITY} or less",
        )
    useful = ledger_slots()
    units = ledger_write_units(slots)
    if slots > useful:
        return Finding(
            "ledger",
            Status.WARN,
            f"{CAPACITY}={slots} slots: documents of about {SHORT_RUN_S:g} s turn every slot "
            f"over that often, and each turnover rewrites admission's slot ledger (one "
            f"item): {units:,.0f} write units a second, past the "
            f"{PARTITION_WRITE_UNITS:,} one DynamoDB item takes; admissions are throttled "
            f"and retried, so slots past {useful} add no throughput for short documents "
            "(documents of a minute or more are not held back)",
            f"set {CAPACITY} to {useful} or less, unless the documents run a minute or more",
        )
    return Finding(
        "ledger",
        Status.OK,
        f"{CAPACITY}={slots} slots: admission's slot ledger takes {units:,.0f} of the "
        f"{PARTITION_WRITE_UNITS:,} write units a second one DynamoDB item takes, with "
        f"documents of {SHORT_RUN_S:g} s",
    )


def _alarm_email(sizing: Sizing) -> Finding:
    address = sizing.parameters.get("AlarmEmail", "")
    if address:
        return Finding("alarms", Status.OK, f"the alarms notify {address} (confirm SNS's mail)")
    return Finding(
        "alarms",
        Status.WARN,
        "AlarmEmail is empty: the alarms (internal failures, starter errors, throttles, "
        "dead letters waiting, stuck jobs, failed reconciles) notify a topic nobody is "
        "subscribed to",
        "deploy with --parameter-overrides AlarmEmail=you@example.com (and confirm the mail "
        "SNS sends), or subscribe to the AlarmTopicArn output yourself",
    )


def _memory(readings: Readings, sizing: Sizing) -> Finding:
    name, largest = _largest(sizing)
    if largest <= NEW_ACCOUNT_MEMORY_MB:
        return Finding(
            "memory",
            Status.OK,
            f"no function asks for more than {largest} MB, which every account allows",
        )
    fix = (
        "deploy with --parameter-overrides AccountProfile=small (every parse tier gets "
        f"{NEW_ACCOUNT_MEMORY_MB} MB and shards 25 pages at most: a document that needs "
        "more memory fails as resource_limit), or open an AWS Support case to raise the "
        "function memory limit"
    )
    quota = readings.memory_quota_mb
    if quota is None:
        return Finding(
            "memory",
            Status.CHECK,
            f"{name} asks for {largest} MB; new accounts may be held at "
            f"{NEW_ACCOUNT_MEMORY_MB} MB, and no API shows this limit. To find out, set a "
            f"test function's memory above {NEW_ACCOUNT_MEMORY_MB} MB (console or aws "
            "lambda update-function-configuration --memory-size 10240); 'Member must have "
            f"value less than or equal to {NEW_ACCOUNT_MEMORY_MB}' means the limit holds. "
            "Then run this check again with --memory-quota-mb",
            "if the limit holds: " + fix,
        )
    over = sorted(n for n, mb in sizing.memory_mb.items() if mb > quota)
    if not over:
        return Finding(
            "memory", Status.OK, f"the largest function ({largest} MB) fits the {quota} MB limit"
        )
    return Finding(
        "memory",
        Status.FAIL,
        f"{', '.join(over)} ask for more than the account's {quota} MB (largest: {name}, "
        f"{largest} MB): the deploy would fail and roll back",
        fix,
    )


def report(readings: Readings, sizing: Sizing, findings: list[Finding]) -> dict[str, object]:
    """The check as the ``--json`` output prints it."""
    return {
        "region": readings.region,
        "parameters": readings.parameters,
        "account": {
            "concurrency_limit": readings.concurrency_limit,
            "unreserved": readings.unreserved,
            "memory_quota_mb": readings.memory_quota_mb,
        },
        "template": {
            "reserved_concurrency": sizing.total_reserved,
            "largest_memory_mb": _largest(sizing)[1],
        },
        "findings": [asdict(f) for f in findings],
        "deployable": all(f.status is not Status.FAIL for f in findings),
    }
