"""moto_fixes.fidelity.connection_secrets: DescribeConnection answers without the
connection's secrets, as EventBridge does. Stock moto answers them in its response body
(boto3's output shape hides them; any other client sees them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from richdoc_tools.local.moto_fixes.fidelity import connection_secrets

from tests.support.moto_fixes import moto_differs

AUTH: dict[str, Any] = {
    "API_KEY": {"ApiKeyAuthParameters": {"ApiKeyName": "x-key", "ApiKeyValue": "SECRET"}},
    "BASIC": {"BasicAuthParameters": {"Username": "ada", "Password": "SECRET"}},
}


@pytest.fixture
def events(aws: None) -> Iterator[Any]:
    yield boto3.client("events", region_name="us-east-1")


def _described_body(events: Any, kind: str) -> bytes:
    """DescribeConnection's response body as sent, for a connection of ``kind``."""
    bodies: list[bytes] = []
    events.meta.events.register(
        "after-call.events.DescribeConnection",
        lambda http_response, **_: bodies.append(http_response.content),
    )
    events.create_connection(
        Name=f"c-{kind}",
        AuthorizationType=kind,
        AuthParameters=AUTH[kind],
    )
    events.describe_connection(Name=f"c-{kind}")
    return bodies[-1]


@moto_differs("answers DescribeConnection with the API key's value or the password")
@pytest.mark.parametrize("kind", sorted(AUTH))
def test_stock_moto_describes_a_connection_without_its_secret(events: Any, kind: str) -> None:
    assert b"SECRET" not in _described_body(events, kind)


@pytest.mark.parametrize("kind", sorted(AUTH))
def test_with_the_fix_only_the_key_name_or_user_name_is_answered(events: Any, kind: str) -> None:
    with contextlib.ExitStack() as exit_stack:
        connection_secrets.install(exit_stack)
        body = _described_body(events, kind)
        described = events.describe_connection(Name=f"c-{kind}")
        secret = boto3.client("secretsmanager", region_name="us-east-1").get_secret_value(
            SecretId=described["SecretArn"]
        )
    assert b"SECRET" not in body
    assert b"x-key" in body if kind == "API_KEY" else b"ada" in body
    assert "SECRET" in secret["SecretString"]  # EventBridge's own secret keeps it
