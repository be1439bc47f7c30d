"""The embedded stack borrows the process and gives it back: the caller's AWS settings are
put aside while it runs (a shell's AWS_ENDPOINT_URL or AWS_PROFILE never reaches the
emulation) and everything it patched is restored when it stops.

Each test starts its own stack; none uses the shared module stack (moto mocks nest)."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
import pytest
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import WITHIN_A_SECOND
from richdoc_tools.local.patch_targets import original
from richdoc_tools.local.settings import StackSettings
from richdoc_tools.local.stack import REPLACED, WRAPPED, EmbeddedStack, PortInUse

pytestmark = [pytest.mark.e2e]


def _process_state() -> dict[str, Any]:
    """What a stack may change, by identity where identity matters."""
    from moto.core.config import default_user_config

    state: dict[str, Any] = {target: id(original(target)) for target in REPLACED}
    state.update(
        environ=dict(os.environ),
        stdout=id(sys.stdout),
        stderr=id(sys.stderr),
        default_session=id(boto3.DEFAULT_SESSION),
        moto_config=repr(default_user_config),
        levels={
            name: logging.getLogger(name).level
            for name in ("moto.stepfunctions.parser", "werkzeug")
        },
        warning_filters=len(__import__("warnings").filters),
    )
    return state


@pytest.fixture
def callers_aws_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A shell set up for some other AWS endpoint and profile (nothing listens on port 9)."""
    _process_state()  # imports the patched modules (moto makes a boto3 session on import)
    config = tmp_path / "aws-config"
    config.write_text("[default]\nendpoint_url = http://127.0.0.1:9\nregion = eu-west-3\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_PROFILE", "someone-elses-profile")


@pytest.mark.usefixtures("callers_aws_settings")
def test_a_stack_ignores_the_callers_aws_settings_and_restores_everything(tmp_path: Path) -> None:
    before = _process_state()
    # Given an index lag, a stack installs every change it has (fidelity.CONFIGURED too).
    with EmbeddedStack(
        StackSettings(log_path=tmp_path / "functions.log", index_lag=WITHIN_A_SECOND)
    ) as stack:
        assert "AWS_PROFILE" not in os.environ and "AWS_ENDPOINT_URL" not in os.environ
        assert os.environ["AWS_CONFIG_FILE"] == os.devnull
        # Deployed and usable although the caller's settings point elsewhere.
        tables = stack.client("dynamodb").list_tables()["TableNames"]
        assert stack.outputs["JobsTableName"] in tables
        during = _process_state()
        assert all(during[target] != before[target] for target in REPLACED)
        assert {target: _wrappers(target) for target in WRAPPED} == WRAPPED
    assert _process_state() == before
    assert os.environ["AWS_PROFILE"] == "someone-elses-profile"


def _wrappers(target: str) -> tuple[str, ...]:
    """The modules of ``richdoc_tools.local`` whose functions wrap ``target`` now, innermost
    first (each wrapper names what it wraps, ``__wrapped__``; its module is the one whose
    globals it has, ``functools.wraps`` having given it the wrapped one's name)."""
    found = []
    function = original(target)
    while function is not None:
        module = getattr(function, "__globals__", {}).get("__name__", "")
        if module.startswith("richdoc_tools.local."):
            found.append(module.removeprefix("richdoc_tools.local."))
        function = getattr(function, "__wrapped__", None)
    return tuple(reversed(found))


def test_every_method_several_wrap_is_written_down_with_their_order() -> None:
    replaced_by = Counter(REPLACED)
    assert {target for target, times in replaced_by.items() if times > 1} == set(WRAPPED)
    assert all(len(WRAPPED[target]) == replaced_by[target] for target in WRAPPED)


def test_a_served_stack_on_port_0_listens_on_a_free_port_and_restores_everything(
    tmp_path: Path,
) -> None:
    before = _process_state()
    with EmbeddedStack(StackSettings(server_port=0, log_path=tmp_path / "functions.log")) as stack:
        assert stack.server_port
        with socket.create_connection(("127.0.0.1", stack.server_port), timeout=10):
            pass
        assert os.environ["AWS_ENDPOINT_URL"] == stack.endpoint_url
    assert _process_state() == before


def test_a_port_in_use_fails_at_once_and_restores_everything() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        before = _process_state()
        with pytest.raises(PortInUse, match=f"127.0.0.1:{port}"):
            EmbeddedStack(StackSettings(server_port=port)).start()
        assert _process_state() == before
