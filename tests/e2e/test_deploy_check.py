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
    return code, json.loads(capsys.readouterr().out)


def _finding(report: dict[str, Any], check: str) -> dict[str, Any]:
    [found] = [f for f in report["findings"] if f["check"] == check]
    return found


def _reserved_by_defaults(stack: Any) -> int:
    from richdoc_tools.local.template import load_template

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
        "memory": "ok",
    }
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
    assert report["template"]["reserved_concurrency"] == 20  # the records function's own
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
    sizing = preflight.Sizing(memory_mb={"F": 128}, reserved={})
    statuses = {f.check: f.status for f in preflight.assess(readings, sizing)}
    assert statuses == {
        "region": preflight.Status.FAIL,
        "docker": preflight.Status.FAIL,
        "concurrency": preflight.Status.CHECK,
        "memory": preflight.Status.OK,
    }
