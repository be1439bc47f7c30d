"""What moto's ASL interpreter (moto 5.2.5) does with Map states, with Lambda tasks that
the embedded stack's Lambda runtime dispatches to in-process handlers.

The page-range fan-out (docs/shards.md) rests on these facts: an inline Map runs every
item with its selected payload, keeps the results in item order, honours MaxConcurrency,
runs Retry and Catch inside the iterator, and hands a failed iteration's error name to
the Map's Catch. A distributed Map also runs, but moto swallows its children's failures
(AWS fails the Map with States.ExceedToleratedFailureThreshold) and its ResultWriter
writes no results, so the local stack cannot stand in for it: the fan-out is an inline
Map on AWS and locally. If a moto upgrade changes any of this, these tests say so.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from richdoc_tools.local.cloudformation.template import HandlerSource
from richdoc_tools.local.patches import lambda_invoke, retry_sleep
from richdoc_tools.local.runtime.lambdas import LambdaRuntime

REGION, ACCOUNT = "us-east-1", "123456789012"
TIERS = {"canary-parse-tier1": 3008, "canary-parse-tier2": 6144}
ITEMS = [{"start": start, "end": start + 9} for start in range(1, 61, 10)]


def _arn(function: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function}"


@dataclass
class Stepfunctions:
    sfn: Any
    handlers: ModuleType  # the handler module as the runtime loaded it

    def run(self, definition: dict[str, Any], state_input: dict[str, Any]) -> tuple[dict, list]:
        name = f"canary-{time.monotonic_ns()}"
        machine = self.sfn.create_state_machine(
            name=name,
            definition=json.dumps(definition),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/canary",
        )["stateMachineArn"]
        execution = self.sfn.start_execution(
            stateMachineArn=machine, name=name, input=json.dumps(state_input)
        )["executionArn"]
        deadline = time.monotonic() + 60
        while (described := self.sfn.describe_execution(executionArn=execution))[
            "status"
        ] == "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.02)
        events = self.sfn.get_execution_history(executionArn=execution, maxResults=1000)["events"]
        return described, events


@pytest.fixture
def stepfunctions(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stepfunctions]:
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)
    logging.getLogger("moto.stepfunctions.parser").setLevel(logging.CRITICAL)
    with (
        contextlib.ExitStack() as patches,
        mock_aws(config={"stepfunctions": {"execute_state_machine": True}}),
    ):
        # Retry intervals really sleep in moto; the embedded stack scales them the same way.
        retry_sleep.install(patches, scale=0.0)
        role = boto3.client("iam").create_role(RoleName="canary", AssumeRolePolicyDocument="{}")
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            zipped.writestr("app.py", "def handler(event, context): pass")
        for function, memory in TIERS.items():
            boto3.client("lambda").create_function(
                FunctionName=function,
                Runtime="python3.12",
                Role=role["Role"]["Arn"],
                Handler="app.handler",
                Code={"ZipFile": archive.getvalue()},
                MemorySize=memory,
            )
        support = Path(__file__).resolve().parents[1] / "support"
        source = HandlerSource("Shard", support, "map_canary_handlers.parse_shard")
        runtime = LambdaRuntime({"Shard": source}, functions=dict.fromkeys(TIERS, "Shard"))
        lambda_invoke.install(patches, runtime)
        handlers = sys.modules[runtime.handler("Shard").__module__]
        handlers.SCRIPT.clear()
        handlers.CALLS.clear()
        handlers.GATE.reset()
        yield Stepfunctions(boto3.client("stepfunctions"), handlers)


def _parse_task(function: str, **extra: Any) -> dict[str, Any]:
    return {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": _arn(function), "Payload.$": "$"},
        "ResultSelector": {"docling_key.$": "$.Payload.docling_key"},
        **extra,
    }


def _shard_iterator() -> dict[str, Any]:
    """One shard: tier 1, transient errors retried, a resource limit escalated to tier 2."""
    return {
        "StartAt": "ParseShardTier1",
        "States": {
            "ParseShardTier1": _parse_task(
                "canary-parse-tier1",
                Retry=[{"ErrorEquals": ["Transient"], "IntervalSeconds": 1, "MaxAttempts": 3}],
                Catch=[
                    {"ErrorEquals": ["ResourceLimit"], "ResultPath": "$.error", "Next": "Escalate"}
                ],
                End=True,
            ),
            "Escalate": {
                "Type": "Pass",
                "Parameters": {"start.$": "$.start", "end.$": "$.end", "sha256.$": "$.sha256"},
                "Next": "ParseShardTier2",
            },
            "ParseShardTier2": _parse_task("canary-parse-tier2", End=True),
        },
    }


def _map_definition(processor: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "StartAt": "ParseShards",
        "States": {
            "ParseShards": {
                "Type": "Map",
                "ItemsPath": "$.shards",
                "ItemSelector": {
                    "start.$": "$$.Map.Item.Value.start",
                    "end.$": "$$.Map.Item.Value.end",
                    "sha256.$": "$.sha256",
                },
                "ItemProcessor": processor,
                "MaxConcurrency": 2,
                "ResultPath": "$.parsed",
                "Catch": [
                    {"ErrorEquals": ["States.ALL"], "ResultPath": "$.failure", "Next": "Failed"}
                ],
                "Next": "Merged",
                **fields,
            },
            "Merged": {"Type": "Succeed"},
            "Failed": {"Type": "Pass", "End": True},
        },
    }


def _inline() -> dict[str, Any]:
    return _map_definition({"ProcessorConfig": {"Mode": "INLINE"}, **_shard_iterator()})


def _distributed(**fields: Any) -> dict[str, Any]:
    processor = {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}}
    return _map_definition({**processor, **_shard_iterator()}, **fields)


INPUT = {"sha256": "ab12", "shards": ITEMS}


def _keys(output: dict[str, Any]) -> list[str | None]:
    return [result and result["docling_key"] for result in output["parsed"]]


EXPECTED_KEYS = [f"docling/ab12/c/pages-{i['start']}-{i['end']}.json" for i in ITEMS]


# Inline Map -------------------------------------------------------------------------------


def test_an_inline_map_runs_every_item_and_keeps_the_results_in_item_order(stepfunctions):
    described, events = stepfunctions.run(_inline(), INPUT)
    assert described["status"] == "SUCCEEDED"
    output = json.loads(described["output"])
    assert _keys(output) == EXPECTED_KEYS
    # The ItemSelector builds each item's payload from the item and the state input.
    calls = sorted(stepfunctions.handlers.CALLS, key=lambda call: call["start"])
    assert [(c["start"], c["end"], c["sha256"], c["memory_mb"]) for c in calls] == [
        (i["start"], i["end"], "ab12", 3008) for i in ITEMS
    ]
    # The ResultSelector keeps only what it names: the state stays small.
    assert set(output["parsed"][0]) == {"docling_key"}
    # Every iteration adds its events to the execution's own history: 7 for one task.
    per_type = Counter(event["type"] for event in events)
    assert per_type["MapIterationStarted"] == per_type["MapIterationSucceeded"] == len(ITEMS)
    assert per_type["TaskScheduled"] == per_type["TaskSucceeded"] == len(ITEMS)
    fixed = ["ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapStateSucceeded"]
    fixed += ["MapStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"]
    assert len(events) == 7 * len(ITEMS) + len(fixed)
    assert {event["type"] for event in events} - set(fixed) == {
        "MapIterationStarted",
        "TaskStateEntered",
        "TaskScheduled",
        "TaskStarted",
        "TaskSucceeded",
        "TaskStateExited",
        "MapIterationSucceeded",
    }


def test_an_inline_map_runs_at_most_max_concurrency_iterations_at_once(stepfunctions):
    # Each call waits until two run at once (or all have started): a Map that ran them one
    # by one would never get there, one that ran more would show it.
    stepfunctions.handlers.GATE.reset(width=2, total=len(ITEMS))
    described, _ = stepfunctions.run(_inline(), INPUT)
    assert described["status"] == "SUCCEEDED"
    assert stepfunctions.handlers.GATE.most == 2


def test_max_concurrency_path_reads_the_limit_from_the_state(stepfunctions):
    """The pipeline's Map state takes its limit from the plan (MaxConcurrencyPath), since
    a DefinitionSubstitutions value cannot be an integer literal; its ItemSelector reads
    the context object ($$.Execution.Name) besides the item."""
    definition = _inline()
    shards = definition["States"]["ParseShards"]
    del shards["MaxConcurrency"]
    shards["MaxConcurrencyPath"] = "$.concurrency"
    shards["ItemSelector"]["execution.$"] = "$$.Execution.Name"
    stepfunctions.handlers.GATE.reset(width=2, total=len(ITEMS))
    described, _ = stepfunctions.run(definition, {**INPUT, "concurrency": 2})
    assert described["status"] == "SUCCEEDED"
    assert stepfunctions.handlers.GATE.most == 2
    assert {call["execution"] for call in stepfunctions.handlers.CALLS} == {described["name"]}


def test_retry_and_catch_inside_the_iterator_escalate_only_the_failing_item(stepfunctions):
    stepfunctions.handlers.SCRIPT.update(
        {(21, 3008): ["ResourceLimit"], (41, 3008): ["Transient", "Transient"]}
    )
    described, events = stepfunctions.run(_inline(), INPUT)
    assert described["status"] == "SUCCEEDED"
    assert _keys(json.loads(described["output"])) == EXPECTED_KEYS
    tiers = Counter((c["start"], c["memory_mb"]) for c in stepfunctions.handlers.CALLS)
    assert tiers == Counter(
        {(1, 3008): 1, (11, 3008): 1, (21, 3008): 1, (21, 6144): 1, (31, 3008): 1}
        | {(41, 3008): 3, (51, 3008): 1}
    )
    assert Counter(event["type"] for event in events)["TaskFailed"] == 3


def test_a_failed_iteration_hands_its_error_name_to_the_maps_catch(stepfunctions):
    stepfunctions.handlers.SCRIPT[(21, 3008)] = ["CorruptInput"]
    described, events = stepfunctions.run(_inline(), INPUT)
    assert described["status"] == "SUCCEEDED"  # caught: the Catch's Pass state ended it
    failure = json.loads(described["output"])["failure"]
    assert failure["Error"] == "CorruptInput"
    assert json.loads(failure["Cause"])["errorMessage"] == "CorruptInput for pages 21-30"
    types = [event["type"] for event in events]
    assert "MapStateFailed" in types
    # The scripted shard is the one CorruptInput; other iterations still in flight when the
    # Map stops may be reported failed (with the emulator's own error) or aborted too,
    # depending on timing, so only the scripted failure is pinned.
    failed_tasks = [e["taskFailedEventDetails"] for e in events if e["type"] == "TaskFailed"]
    corrupt = [d for d in failed_tasks if d.get("error") == "CorruptInput"]
    assert [json.loads(d["cause"])["errorMessage"] for d in corrupt] == [
        "CorruptInput for pages 21-30"
    ]
    failed = [
        e["mapIterationFailedEventDetails"]["index"]
        for e in events
        if e["type"] == "MapIterationFailed"
    ]
    assert 2 in failed  # the iteration of pages 21-30


# Distributed Map -------------------------------------------------------------------------


def test_a_distributed_map_runs_children_outside_the_parent_history(stepfunctions):
    described, events = stepfunctions.run(_distributed(), INPUT)
    assert described["status"] == "SUCCEEDED"
    assert _keys(json.loads(described["output"])) == EXPECTED_KEYS
    assert [event["type"] for event in events] == [
        "ExecutionStarted",
        "MapStateEntered",
        "MapStateStarted",
        "MapRunStarted",
        "MapRunSucceeded",
        "MapStateSucceeded",
        "MapStateExited",
        "SucceedStateEntered",
        "SucceedStateExited",
        "ExecutionSucceeded",
    ]


def test_moto_swallows_a_failed_child_of_a_distributed_map(stepfunctions):
    """On AWS a failed child beyond ToleratedFailurePercentage (0 here) fails the Map with
    States.ExceedToleratedFailureThreshold; moto records the failure and succeeds with a
    null result. The local stack could not show a shard failure this way."""
    stepfunctions.handlers.SCRIPT[(21, 3008)] = ["CorruptInput"]
    described, _ = stepfunctions.run(_distributed(ToleratedFailurePercentage=0.0), INPUT)
    assert described["status"] == "SUCCEEDED"
    output = json.loads(described["output"])
    assert "failure" not in output
    assert _keys(output)[2] is None and _keys(output)[3] == EXPECTED_KEYS[3]


def test_moto_accepts_a_tolerated_failure_percentage_only_as_a_decimal_literal(stepfunctions):
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError, match="ToleratedFailurePercentage"):
        stepfunctions.run(_distributed(ToleratedFailurePercentage=0), INPUT)


def test_an_item_reader_reads_an_s3_json_array_and_a_result_writer_writes_no_results(
    stepfunctions,
):
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="canary-artifacts")
    s3.put_object(Bucket="canary-artifacts", Key="plan.json", Body=json.dumps(ITEMS))
    definition = _distributed(
        ItemReader={
            "Resource": "arn:aws:states:::s3:getObject",
            "ReaderConfig": {"InputType": "JSON"},
            "Parameters": {"Bucket": "canary-artifacts", "Key": "plan.json"},
        },
        ResultWriter={
            "Resource": "arn:aws:states:::s3:putObject",
            "Parameters": {"Bucket": "canary-artifacts", "Prefix": "results"},
        },
    )
    described, _ = stepfunctions.run(definition, {"sha256": "ab12"})
    assert described["status"] == "SUCCEEDED"
    calls = sorted((c["start"], c["end"]) for c in stepfunctions.handlers.CALLS)
    assert calls == [(i["start"], i["end"]) for i in ITEMS]
    written = json.loads(described["output"])["parsed"]["ResultWriterDetails"]
    manifest = json.loads(
        s3.get_object(Bucket=written["Bucket"], Key=written["Key"])["Body"].read()
    )
    assert manifest["ResultFiles"] == {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    listed = s3.list_objects_v2(Bucket="canary-artifacts", Prefix="results")["Contents"]
    assert [item["Key"] for item in listed] == [written["Key"]]


def test_an_iteration_can_record_its_failure_and_reraise_it_with_the_same_name(stepfunctions):
    """A shard's catch-all can first record the failure (which shard, which attempt the
    platform killed), then fail the iteration with the caught error's own name (a Fail
    state's ErrorPath/CausePath): the Map's Catch routes it by kind as before."""
    recorded = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {
            "FunctionName": _arn("canary-parse-tier2"),
            "Payload": {"start": 0, "end": 0, "sha256": "record"},
        },
        "ResultPath": None,
        "Next": "ShardFailed",
    }
    iterator = {
        "ProcessorConfig": {"Mode": "INLINE"},
        "StartAt": "ParseShard",
        "States": {
            "ParseShard": _parse_task(
                "canary-parse-tier1",
                Catch=[{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Record"}],
                End=True,
            ),
            "Record": recorded,
            "ShardFailed": {
                "Type": "Fail",
                "ErrorPath": "$.error.Error",
                "CausePath": "$.error.Cause",
            },
        },
    }
    stepfunctions.handlers.SCRIPT[(21, 3008)] = ["CorruptInput"]
    described, _ = stepfunctions.run(_map_definition(iterator), INPUT)
    failure = json.loads(described["output"])["failure"]
    assert failure["Error"] == "CorruptInput"
    assert json.loads(failure["Cause"])["errorType"] == "CorruptInput"
    assert {c["sha256"] for c in stepfunctions.handlers.CALLS if c["memory_mb"] == 6144} == {
        "record"
    }
