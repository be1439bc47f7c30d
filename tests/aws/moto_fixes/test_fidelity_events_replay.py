"""moto_fixes.fidelity.events_replay: StartReplay replays the archived events of its time
range to the rules it names, each with ``replay-name``, as EventBridge does. Stock moto
replays every event the archive ever took to every rule of the bus."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import boto3
import pytest
from richdoc_tools.local.moto_fixes.fidelity import events_replay

from tests.support.moto_fixes import moto_differs
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
    """A bus with an archive and two rules; an event of two days ago and one of an hour
    ago, delivered live and archived."""
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


def _replayed_last_two_hours_to_mine(world: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    _replay(world, "mine-last-2h", FilterArns=[world["mine"][2]])
    mine = [(e["detail"], e.get("replay-name")) for e in drained(*world["mine"][:2])]
    return mine, drained(*world["theirs"][:2])


@moto_differs("replays every archived event to every rule, whatever the range and FilterArns")
def test_stock_moto_replays_the_time_range_to_the_named_rules(archived: dict[str, Any]) -> None:
    mine, theirs = _replayed_last_two_hours_to_mine(archived)
    assert mine == [({"n": 1}, "mine-last-2h")]
    assert theirs == []


def test_with_the_fix_a_replay_sends_its_time_range_to_the_rules_it_names(
    archived: dict[str, Any],
) -> None:
    with contextlib.ExitStack() as exit_stack:
        events_replay.install(exit_stack)
        mine, theirs = _replayed_last_two_hours_to_mine(archived)
        assert mine == [({"n": 1}, "mine-last-2h")]
        assert theirs == []
        _replay(archived, "everyone-last-2h")  # no FilterArns: every rule of the bus
        assert [e["detail"] for e in drained(*archived["theirs"][:2])] == [{"n": 1}]
        replay = boto3.client("events").describe_replay(ReplayName="everyone-last-2h")
        assert replay["State"] == "COMPLETED"
