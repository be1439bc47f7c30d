"""Canary: moto's Lambda tasks make their client with fixed arguments, so one client per
region and service can serve them all (moto_fixes.speed.task_clients)."""

from __future__ import annotations

import importlib
import inspect

from richdoc_tools.local.moto_fixes.speed import task_clients


def test_lambda_task_client_patch_point_ignores_the_state_credentials() -> None:
    module_name, _, attribute = task_clients.TARGET.rpartition(".")
    module = importlib.import_module(module_name)
    assert attribute == "boto_client_for"
    assert "boto_client_for(" in inspect.getsource(module)
    from moto.stepfunctions.parser.asl.utils import boto_client

    # One client per region and service is only right while moto ignores the credentials.
    body = inspect.getsource(boto_client.boto_client_for).split(") -> BaseClient:", 1)[1]
    assert "state_credentials" not in body
    assert 'aws_access_key_id="ak"' in body
