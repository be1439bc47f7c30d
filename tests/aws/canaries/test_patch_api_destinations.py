"""Canary: moto sends an API destination target, when told to, a bare request from the
thread that called PutEvents (patches.api_destinations hands every matched event to the
embedded stack's webhook delivery instead, and turns moto's request off)."""

from __future__ import annotations

import contextlib
import inspect
import json
from typing import Any

import boto3
from moto import mock_aws
from richdoc_tools.local.patches import api_destinations, events_delivery

REGION = "us-east-1"


def test_api_destinations_patch_point_sends_moto_s_own_bare_request() -> None:
    from moto import settings
    from moto.events import models

    assert api_destinations.TARGET == "moto.events.models.Rule.send_to_targets"
    source = inspect.getsource(models.Rule.send_to_targets)
    assert 'arn.resource_type == "api-destination"' in source
    assert "settings.events_invoke_http()" in source
    assert "requests.request(" in source and "data=" not in source  # no body sent
    assert settings.events_invoke_http() is False


def _handed_over(patched: bool) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    handed: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    with mock_aws(), contextlib.ExitStack() as exit_stack:
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


def test_without_the_patch_nothing_reaches_the_delivery() -> None:
    assert _handed_over(patched=False) == []


def test_with_the_patch_each_matched_event_is_handed_over_whole() -> None:
    [(_, target, event)] = _handed_over(patched=True)
    assert target["Id"] == "w" and target["RoleArn"] == "arn:role"
    assert event["source"] == "richdoc" and event["detail"] == {"key": "<region>.pdf"}
    assert set(event) == set(events_delivery.EVENT_MEMBERS)
