"""DescribeConnection answers without the connection's secrets, as EventBridge does.

What moto does: its DescribeConnection answers a connection's ``AuthParameters`` as they
were given, the API key's value, the password or the OAuth client secret included
(boto3's output shape hides them; any other client, or a tool that prints the response,
sees them).

What AWS does: EventBridge keeps those secrets in the connection's Secrets Manager
secret and answers only the key's header name, the user name or the client id
(DescribeConnection's ``AuthParameters``: ``ConnectionApiKeyAuthResponseParameters``,
``ConnectionBasicAuthResponseParameters``, ``ConnectionOAuthClientResponseParameters``;
https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_DescribeConnection.html).

The fix answers each kind of authorization with the members AWS answers, nothing else.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moto.events.models import Connection

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.events.models.Connection.describe"
PATCHED = (TARGET,)

# Per kind of authorization: the members AWS answers with (every other one is secret).
ANSWERED = {
    "ApiKeyAuthParameters": {"ApiKeyName"},
    "BasicAuthParameters": {"Username"},
    "OAuthParameters": {"ClientParameters", "AuthorizationEndpoint", "HttpMethod"},
}
ANSWERED_CLIENT = {"ClientID"}


def without_secrets(
    describe: Callable[[Connection], dict[str, Any]],
) -> Callable[[Connection], dict[str, Any]]:
    @functools.wraps(describe)
    def describe_connection(self: Connection) -> dict[str, Any]:
        described = copy.deepcopy(describe(self))
        parameters = described.get("AuthParameters", {})
        for kind, members in list(parameters.items()):
            if kind not in ANSWERED or not isinstance(members, dict):
                continue
            kept = {k: v for k, v in members.items() if k in ANSWERED[kind]}
            client = kept.get("ClientParameters")
            if isinstance(client, dict):
                kept["ClientParameters"] = {k: v for k, v in client.items() if k in ANSWERED_CLIENT}
            parameters[kind] = kept
        return described

    return describe_connection


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, without_secrets(original(TARGET)))
