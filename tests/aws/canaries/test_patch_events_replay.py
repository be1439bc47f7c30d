"""Canary: moto's StartReplay replays every event the archive ever took to every rule of
the bus, whatever the request's time range and Destination.FilterArns; the patch
(patches.events_replay) replays the range to the named rules only, each event with
replay-name, as EventBridge does."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import boto3
import pytest
from richdoc_tools.local.patches import events_replay

from tests.support.queues import drained

BUS = "bus"
NOW = datetime.now(UTC)


def _queue_rule(name: str) -> tuple[Any, str, str]:
    sqs, events = boto3.client("sqs"), boto3.client("events")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule = events.put_rule(Name=name, EventBusName=BUS, EventPattern='{"source": ["richdoc"]}')
    events.put_targets(Rule=name, EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])
    return sqs, url, rule["RuleArn"]


@pytest.fixture
def archived(aws: None) -> dict[str, Any]:
    events = boto3.client("events")
    bus = events.create_event_bus(Name=BUS)["EventBusArn"]
    archive = events.create_archive(ArchiveName="all", EventSourceArn=bus)["ArchiveArn"]
    mine, theirs = _queue_rule("mine"), _queue_rule("theirs")
    for n, when in enumerate((NOW - timedelta(days=2), NOW - timedelta(hours=1))):
        events.put_events(
            Entries=[
                {
                    "Source": "richdoc",
                    "DetailType": "Job Finished",
                    "Detail": json.dumps({"n": n}),
                    "EventBusName": BUS,
                    "Time": when,
                }
            ]
        )
    for sqs, url, _ in (mine, theirs):
        assert len(drained(sqs, url)) == 2  # delivered live
    return {"bus": bus, "archive": archive, "mine": mine, "theirs": theirs}


def _replay(world: dict[str, Any], name: str, **destination: Any) -> None:
    boto3.client("events").start_replay(
        ReplayName=name,
        EventSourceArn=world["archive"],
        EventStartTime=NOW - timedelta(hours=2),
        EventEndTime=NOW,
        Destination=cast(Any, {"Arn": world["bus"], **destination}),
    )


def test_moto_alone_replays_everything_to_every_rule(archived: dict[str, Any]) -> None:
    _replay(archived, "everything", FilterArns=[archived["mine"][2]])
    for sqs, url, _ in (archived["mine"], archived["theirs"]):
        assert len(drained(sqs, url)) == 2  # the day-old event too, and to "theirs"


def test_a_replay_sends_its_time_range_to_the_rules_it_names(archived: dict[str, Any]) -> None:
    with contextlib.ExitStack() as exit_stack:
        events_replay.install(exit_stack)
        _replay(archived, "mine-last-2h", FilterArns=[archived["mine"][2]])
        [replayed] = drained(*archived["mine"][:2])
        assert (replayed["detail"], replayed["replay-name"]) == ({"n": 1}, "mine-last-2h")
        assert drained(*archived["theirs"][:2]) == []
        _replay(archived, "everyone-last-2h")  # no FilterArns: every rule of the bus
        assert [e["detail"] for e in drained(*archived["theirs"][:2])] == [{"n": 1}]
        replay = boto3.client("events").describe_replay(ReplayName="everyone-last-2h")
        assert replay["State"] == "COMPLETED"
