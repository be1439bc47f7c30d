"""moto_fixes.speed.task_clients: one boto3 client per region and service serves every
Lambda task of moto's interpreter, which would make a new one per task. That is right
while moto makes every such client alike, whatever the state's credentials."""

from __future__ import annotations

import contextlib
from typing import Any

from richdoc_tools.local.moto_fixes.speed import task_clients
from richdoc_tools.local.patch_targets import original


def _signing(client: Any) -> tuple[str, str | None]:
    credentials = client._request_signer._credentials
    return credentials.access_key, client.meta.region_name


def test_moto_makes_every_task_client_alike_whatever_the_state_s_credentials() -> None:
    client_for = original(task_clients.TARGET)
    assumed = {"RoleArn": "arn:aws:iam::123456789012:role/other"}
    plain = client_for(region="eu-west-1", service="lambda", state_credentials=None)
    other = client_for(region="eu-west-1", service="lambda", state_credentials=assumed)
    assert _signing(plain) == _signing(other)


def test_with_the_patch_one_client_serves_a_region_and_service() -> None:
    with contextlib.ExitStack() as exit_stack:
        task_clients.install(exit_stack)
        client_for = original(task_clients.TARGET)
        first = client_for(region="eu-west-1", service="lambda", state_credentials=None)
        assert client_for(region="eu-west-1", service="lambda", state_credentials=None) is first
        assert client_for(region="us-east-1", service="lambda", state_credentials=None) is not first
