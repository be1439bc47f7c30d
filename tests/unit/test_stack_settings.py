"""An embedded stack's settings: built once, by the command line or a test, never changed
after."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from richdoc_tools.local.faults.injected import FaultSettings
from richdoc_tools.local.settings import DEFAULT_STACK_NAME, StackSettings


def test_settings_cannot_be_changed_once_built() -> None:
    settings = StackSettings(parameters={"MaxRunningJobs": "2"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.strict = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.parameters["MaxRunningJobs"] = "3"  # type: ignore[index]
    with pytest.raises(TypeError):
        settings.timeout_override_s["ParseFunction"] = 1.0  # type: ignore[index]


def test_settings_keep_what_they_were_built_with_when_the_caller_s_dict_changes() -> None:
    parameters = {"MaxRunningJobs": "2"}
    timeouts = {"ParseFunction": 900.0}
    settings = StackSettings(parameters=parameters, timeout_override_s=timeouts)
    parameters["MaxRunningJobs"] = "3"
    timeouts.clear()
    assert dict(settings.parameters) == {"MaxRunningJobs": "2"}
    assert dict(settings.timeout_override_s) == {"ParseFunction": 900.0}


def test_a_changed_copy_leaves_the_original_as_it_was() -> None:
    base = StackSettings(retry_delay_scale=0.0, schedules=False)
    lenient = dataclasses.replace(base, strict=False, parameters={"OcrMode": "off"})
    assert (base.strict, dict(base.parameters)) == (True, {})
    assert (lenient.strict, lenient.schedules, dict(lenient.parameters)) == (
        False,
        False,
        {"OcrMode": "off"},
    )


def test_the_command_line_builds_its_stack_s_settings_from_its_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from richdoc_tools.cli.local import STACK_PARAMETERS_FROM_ENV, WEBHOOK_CA_FILE, stack_settings

    for variable in [*STACK_PARAMETERS_FROM_ENV, WEBHOOK_CA_FILE]:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("RICHDOC_OCR_MODE", "off")
    faults = FaultSettings(rate=0.05, seed=7)
    logged = stack_settings(
        lenient=True,
        faults=faults,
        parameter_overrides=["MaxRunningJobs=3"],
        log_path=tmp_path / "functions.log",
    )
    assert logged.stack_name == DEFAULT_STACK_NAME
    assert dict(logged.parameters) == {"OcrMode": "off", "MaxRunningJobs": "3"}
    assert (logged.strict, logged.injected_faults) == (False, faults)
    # Function output goes to the log whole; without one, to the terminal untouched.
    assert (logged.log_path, logged.capture_process_output) == (tmp_path / "functions.log", True)
    served = stack_settings(
        lenient=False,
        faults=None,
        parameter_overrides=(),
        log_path=None,
        stack_name="other",
        server_port=0,
        lifecycle_day_s=60.0,
    )
    assert (served.stack_name, served.server_port, served.lifecycle_day_s) == ("other", 0, 60.0)
    assert (served.strict, served.capture_process_output, served.webhook_ca_file) == (
        True,
        False,
        None,
    )
