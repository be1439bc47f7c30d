"""Canary: moto's DescribeConnection answers with the connection's secrets in its response
body (boto3's output shape hides them; any other client sees them). patches.connection_
secrets answers as EventBridge does, without them."""

from __future__ import annotations

import contextlib
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.models import DEFAULT_ACCOUNT_ID
from richdoc_tools.local.patches import connection_secrets

REGION = "us-east-1"
AUTH: dict[str, Any] = {
    "API_KEY": {"ApiKeyAuthParameters": {"ApiKeyName": "x-key", "ApiKeyValue": "SECRET"}},
    "BASIC": {"BasicAuthParameters": {"Username": "ada", "Password": "SECRET"}},
}
ANSWERED = {
    "API_KEY": {"ApiKeyAuthParameters": {"ApiKeyName": "x-key"}},
    "BASIC": {"BasicAuthParameters": {"Username": "ada"}},
}


def test_connection_secrets_patch_point_describes_what_it_was_given() -> None:
    from moto.events.models import Connection

    assert connection_secrets.TARGET == "moto.events.models.Connection.describe"
    assert callable(Connection.describe)


def _answered(patched: bool, kind: str) -> Any:
    """The AuthParameters of moto's DescribeConnection answer, as its body carries them."""
    from moto.events.models import events_backends

    with mock_aws(), contextlib.ExitStack() as exit_stack:
        if patched:
            connection_secrets.install(exit_stack)
        events = boto3.client("events", region_name=REGION)
        events.create_connection(
            Name="c",
            AuthorizationType=kind,  # type: ignore[arg-type]
            AuthParameters=AUTH[kind],
        )
        answered = events_backends[DEFAULT_ACCOUNT_ID][REGION].describe_connection("c")
        secret_arn = events.describe_connection(Name="c")["SecretArn"]
        secret = boto3.client("secretsmanager", region_name=REGION).get_secret_value(
            SecretId=secret_arn
        )
        assert "SECRET" in secret["SecretString"]  # EventBridge's own secret keeps it
        return answered["AuthParameters"]


@pytest.mark.parametrize("kind", sorted(AUTH))
def test_without_the_patch_the_secret_is_answered(kind: str) -> None:
    assert _answered(patched=False, kind=kind) == AUTH[kind]


@pytest.mark.parametrize("kind", sorted(AUTH))
def test_with_the_patch_only_the_key_name_or_user_name_is_answered(kind: str) -> None:
    assert _answered(patched=True, kind=kind) == ANSWERED[kind]
