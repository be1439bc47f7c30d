"""Canary: every event a rule matches is handed, for each of its API destination targets,
to the embedded stack's webhook delivery, and moto's own bare request (which it sends
when told to, from the thread that called PutEvents) is off (patches.api_destinations)."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any
from unittest import mock

import boto3
from moto import mock_aws
from richdoc_tools.local.moto_fixes.fidelity import events_delivery
from richdoc_tools.local.patches import api_destinations

REGION = "us-east-1"


def _handed_over(
    patched: bool, sent: list[Any] | None = None
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """What reached the delivery; ``sent`` collects the requests moto sent itself, told to
    by ``MOTO_EVENTS_INVOKE_HTTP``."""
    handed: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    requests: list[Any] = [] if sent is None else sent
    with (
        mock_aws(),
        contextlib.ExitStack() as exit_stack,
        mock.patch.dict(os.environ, {"MOTO_EVENTS_INVOKE_HTTP": "true"}),
        mock.patch("moto.events.models.requests.request", lambda *a, **k: requests.append(a)),
    ):
        events_delivery.install(exit_stack)
        if patched:
            api_destinations.install(exit_stack, lambda *args: handed.append(args))
        events = boto3.client("events", region_name=REGION)
        connection = events.create_connection(
            Name="c",
            AuthorizationType="API_KEY",
            AuthParameters={"ApiKeyAuthParameters": {"ApiKeyName": "k", "ApiKeyValue": "v"}},
        )
        destination = events.create_api_destination(
            Name="d",
            ConnectionArn=connection["ConnectionArn"],
            InvocationEndpoint="https://example.invalid/hook",
            HttpMethod="POST",
        )
        rule = events.put_rule(Name="r", EventPattern='{"source": ["richdoc"]}')
        target = {"Id": "w", "Arn": destination["ApiDestinationArn"], "RoleArn": "arn:role"}
        events.put_targets(Rule="r", Targets=[target])  # type: ignore[list-item]
        detail = {"key": "<region>.pdf"}
        for source in ("richdoc", "other"):
            events.put_events(
                Entries=[
                    {"Source": source, "DetailType": "Job Finished", "Detail": json.dumps(detail)}
                ]
            )
        assert all(arn == rule["RuleArn"] for arn, _, _ in handed)
    return handed


def test_without_the_patch_nothing_reaches_the_delivery_and_moto_sends_a_request() -> None:
    sent: list[Any] = []
    assert _handed_over(patched=False, sent=sent) == []
    assert len(sent) == 1


def test_with_the_patch_each_matched_event_is_handed_over_whole() -> None:
    sent: list[Any] = []
    [(_, target, event)] = _handed_over(patched=True, sent=sent)
    assert sent == []  # moto's own request is off
    assert target["Id"] == "w" and target["RoleArn"] == "arn:role"
    assert event["source"] == "richdoc" and event["detail"] == {"key": "<region>.pdf"}
    assert set(event) == set(events_delivery.EVENT_MEMBERS)
