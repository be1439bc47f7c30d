"""``richdoc deploy check`` against the embedded stack (deployed as ``richdoc`` with the
template's defaults). moto has no Lambda GetAccountSettings: the tests answer it as AWS
does for the account they describe. Docker is the machine's: the tests say whether it
answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient
from richdoc_tools import preflight
from richdoc_tools.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("stack")]

Account = Callable[[int, int], None]


@pytest.fixture
def account(stack: Any, monkeypatch: pytest.MonkeyPatch) -> Account:
    """Sets what GetAccountSettings answers: the concurrency quota and what is left
    unreserved (the embedded stack's own reservations already taken out, as on AWS)."""
    original = BaseClient._make_api_call  # type: ignore[attr-defined]  # not in botocore's stubs
    limits: dict[str, int] = {}

    def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if operation == "GetAccountSettings":
            return {
                "AccountLimit": {
                    "ConcurrentExecutions": limits["total"],
                    "UnreservedConcurrentExecutions": limits["unreserved"],
                },
                "AccountUsage": {"FunctionCount": 9},
            }
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", call)
    monkeypatch.setattr(preflight, "docker_problem", lambda: None)

    def set_limits(total: int, unreserved: int) -> None:
        limits.update(total=total, unreserved=unreserved)

    return set_limits


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["deploy", "check", "--config-file", "none.toml", "--json", *args])
    # The shared stack's functions may still be running jobs earlier tests left, and a
    # metric they flush (one EMF line) can land in the captured output: not the report's.
    printed = capsys.readouterr().out.splitlines(keepends=True)
    return code, json.loads("".join(line for line in printed if not line.startswith('{"_aws"')))


def _finding(report: dict[str, Any], check: str) -> dict[str, Any]:
    [found] = [f for f in report["findings"] if f["check"] == check]
    return found


def _reserved_by_defaults(stack: Any) -> int:
    from richdoc_tools.local.cloudformation.template import load_template

    return preflight.sizing(load_template(), {}).total_reserved


def test_a_new_account_is_told_to_deploy_the_small_profile(
    stack: Any, account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    # A new account: 10 concurrent executions, nothing reserved. The stack is taken as
    # not deployed there (another name), so its reservations free nothing.
    account(10, 10)
    code, report = _check(capsys, "--stack", "elsewhere")
    assert code == 1 and report["deployable"] is False
    concurrency = _finding(report, "concurrency")
    assert concurrency["status"] == "fail"
    assert "at most 0 can be reserved" in concurrency["says"]
    assert "AccountProfile=small" in concurrency["fix"]
    assert preflight.CONCURRENCY_QUOTA_CODE in concurrency["fix"]
    # No API shows the memory limit: the check says how to find it out.
    memory = _finding(report, "memory")
    assert memory["status"] == "check" and "--memory-quota-mb" in memory["says"]
    assert report["template"]["reserved_concurrency"] == _reserved_by_defaults(stack) > 0

    code, report = _check(
        capsys,
        "--stack",
        "elsewhere",
        "--parameter-overrides",
        "AccountProfile=small",
        "--memory-quota-mb",
        "3008",
    )
    assert code == 0 and report["deployable"] is True, report
    assert {f["check"]: f["status"] for f in report["findings"]} == {
        "region": "ok",
        "docker": "ok",
        "concurrency": "ok",
        # Deployable, but with every slot busy the 10 executions would not do: what to set.
        "capacity": "warn",
        "ledger": "ok",
        "memory": "ok",
        "alarms": "warn",
    }
    assert "StarterMaximumConcurrency=2" in _finding(report, "capacity")["fix"]
    assert report["template"] == {"reserved_concurrency": 0, "largest_memory_mb": 3008}


def test_the_memory_limit_names_the_functions_above_it(
    stack: Any, account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    account(1000, 1000 - _reserved_by_defaults(stack))
    code, report = _check(capsys, "--memory-quota-mb", "3008")
    assert code == 1
    memory = _finding(report, "memory")
    assert memory["status"] == "fail"
    assert "ParseTier2Function, ParseTier3Function" in memory["says"]
    assert "resource_limit" in memory["fix"] and "AccountProfile=small" in memory["fix"]
    # The deployed stack's own reservations are replaced by an update: they count as room.
    assert _finding(report, "concurrency")["status"] == "ok"
    assert main(["deploy", "check", "--memory-quota-mb", "10240"]) == 0
    printed = capsys.readouterr().out
    assert "ok    memory:" in printed and "nothing found that would make the deploy fail" in printed


def test_reserved_concurrency_off_fits_a_small_quota(
    stack: Any, account: Account, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    account(150, 150)
    overrides = [
        f"{name}=0"
        for name in (
            "ParseTier1ReservedConcurrency",
            "ParseTier2ReservedConcurrency",
            "ParseTier3ReservedConcurrency",
            "PlanReservedConcurrency",
            "StepReservedConcurrency",
        )
    ]
    # samconfig.toml's overrides count, as sam deploy applies them.
    config = tmp_path / "samconfig.toml"
    config.write_text(
        '[default.deploy.parameters]\nparameter_overrides = "' + " ".join(overrides) + '"\n'
    )
    capsys.readouterr()
    assert main(["deploy", "check", "--stack", "new", "--config-file", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    concurrency = _finding(report, "concurrency")
    assert concurrency["status"] == "ok"
    assert report["template"]["reserved_concurrency"] == 25  # the records function's own
    assert report["parameters"]["ParseTier1ReservedConcurrency"] == "0"


def test_parameters_the_template_refuses_are_usage_errors(
    stack: Any, account: Account, capsys: pytest.CaptureFixture[str]
) -> None:
    account(1000, 1000)
    for bad in ("NoSuchParameter=1", "AccountProfile=tiny", "ParseTier3MemoryMB=20000", "x"):
        assert main(["deploy", "check", "--parameter-overrides", bad]) == 2, bad
    assert "AccountProfile=tiny: must be one of standard, small" in capsys.readouterr().err


def test_without_docker_the_build_is_said_to_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert preflight.docker_problem() == "docker is not installed (not on PATH)"
    readings = preflight.Readings(
        region=None, docker="docker is not installed", concurrency_limit=None, unreserved=None
    )
    parameters = {"ShardMaxConcurrency": "10", "StarterMaximumConcurrency": "5"}
    sizing = preflight.Sizing(
        memory_mb={"F": 128}, reserved={}, parameters={**parameters, "AlarmEmail": "a@b.c"}
    )
    statuses = {f.check: f.status for f in preflight.assess(readings, sizing)}
    assert statuses == {
        "region": preflight.Status.FAIL,
        "docker": preflight.Status.FAIL,
        "concurrency": preflight.Status.CHECK,
        "capacity": preflight.Status.CHECK,
        "ledger": preflight.Status.OK,
        "memory": preflight.Status.OK,
        "alarms": preflight.Status.OK,
    }


def _readings(total: int, unreserved: int) -> preflight.Readings:
    return preflight.Readings(
        region="eu-west-1", docker=None, concurrency_limit=total, unreserved=unreserved
    )


def _found(readings: preflight.Readings, **parameters: str) -> dict[str, preflight.Finding]:
    from richdoc_tools.local.cloudformation.template import load_template

    sizing = preflight.sizing(load_template(), parameters)
    return {f.check: f for f in preflight.assess(readings, sizing)}


def test_a_capacity_a_small_account_cannot_run_at_once_is_warned() -> None:
    # A new account: 10 concurrent executions in all, no function reserving any. The small
    # profile's 4 slots busy (the records function's backstops beside them: 6), the
    # starter (5), the dispatcher and the notifier need 13.
    found = _found(_readings(10, 10), AccountProfile="small")["capacity"]
    assert found.status is preflight.Status.WARN
    assert "MaxRunningJobs=4 documents at once" in found.says
    assert "need 13 concurrent executions" in found.says and "of the 10 they share" in found.says
    assert found.fix is not None
    assert "MaxRunningJobs=4 and StarterMaximumConcurrency=2" in found.fix
    assert f"({preflight.CONCURRENCY_QUOTA_CODE}) to 13 or more" in found.fix
    # What it says to set fits.
    fitted = _found(_readings(10, 10), AccountProfile="small", StarterMaximumConcurrency="2")
    assert fitted["capacity"].status is preflight.Status.OK, fitted["capacity"]
    # An account too small for any setting is told the quota it needs.
    tiny = _found(_readings(6, 6), AccountProfile="small")["capacity"]
    assert tiny.fix is not None and "no setting fits" in tiny.fix and "to 13 or more" in tiny.fix
    # The standard profile's reservations hold every slot: the pool holds the rest.
    assert _found(_readings(1000, 835))["capacity"].status is preflight.Status.OK


def test_a_capacity_above_a_functions_reservation_is_warned() -> None:
    found = _found(_readings(1000, 1000), MaxRunningJobs="30")["capacity"]
    assert found.status is preflight.Status.WARN
    assert "ParseTier1Function reserves 20" in found.says and "throttled" in found.says
    assert found.fix is not None and "MaxRunningJobs to 20 or less" in found.fix
    # The derived capacity is tier 1's reservation, which every step matches.
    assert preflight.capacity(preflight.sizing(_template(), {})) == 20
    assert _found(_readings(1000, 1000))["capacity"].status is preflight.Status.OK


def test_a_capacity_the_slot_ledger_cannot_hold_or_take_is_refused_or_warned() -> None:
    from richdoc.admission.settings import MAX_CAPACITY

    useful = preflight.ledger_slots()
    assert 100 < useful < MAX_CAPACITY  # about 125 with documents of 4 s
    assert preflight.ledger_write_units(useful) <= preflight.PARTITION_WRITE_UNITS
    assert preflight.ledger_write_units(useful + 1) > preflight.PARTITION_WRITE_UNITS
    ok = _found(_readings(1000, 1000), MaxRunningJobs=str(useful))["ledger"]
    assert ok.status is preflight.Status.OK, ok
    slow = _found(_readings(1000, 1000), MaxRunningJobs=str(useful + 1))["ledger"]
    assert slow.status is preflight.Status.WARN and "write units a second" in slow.says
    assert slow.fix is not None and f"MaxRunningJobs to {useful} or less" in slow.fix
    # Derived from a tier 1 reservation the template does not bound: refused.
    big = _found(_readings(5000, 5000), ParseTier1ReservedConcurrency="400")["ledger"]
    assert big.status is preflight.Status.FAIL and "400 KB" in big.says
    assert big.fix is not None and f"MaxRunningJobs to {MAX_CAPACITY} or less" in big.fix


def _template() -> Any:
    from richdoc_tools.local.cloudformation.template import load_template

    return load_template()


def test_an_empty_alarm_email_is_warned_but_deploys() -> None:
    found = _found(_readings(1000, 1000))
    alarms = found["alarms"]
    assert alarms.status is preflight.Status.WARN and "nobody is subscribed" in alarms.says
    assert alarms.fix is not None and "AlarmEmail=" in alarms.fix
    assert all(f.status is not preflight.Status.FAIL for f in found.values())
    given = _found(_readings(1000, 1000), AlarmEmail="ops@example.com")["alarms"]
    assert given.status is preflight.Status.OK


def test_an_upgrade_from_before_admission_names_the_two_indexes_and_the_steps(
    account: Account, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Given the template the stack runs now (--previous-template), the check names the
    table update CloudFormation would refuse, and the steps that make it; given the first
    step, it finds nothing refused."""
    from tests.support.releases import BEFORE_ADMISSION, template_at

    account(1000, 1000)
    previous = tmp_path / "template.yaml"
    previous.write_text(template_at(BEFORE_ADMISSION))
    code, report = _check(capsys, "--previous-template", str(previous))
    upgrade = _finding(report, "upgrade")
    assert (code, upgrade["status"], report["deployable"]) == (1, "fail", False)
    assert "creates by-queue, tenants-by-service" in upgrade["says"]
    assert "AdmissionIndexes=by-queue Admission=paused" in upgrade["fix"]
    # The embedded stack's indexes (moto builds them at once) are every one ACTIVE.
    assert _finding(report, "indexes")["status"] == "ok"
    code, report = _check(
        capsys,
        "--previous-template",
        str(previous),
        "--parameter-overrides",
        "AdmissionIndexes=by-queue Admission=paused",
    )
    assert _finding(report, "upgrade")["status"] == "ok"
