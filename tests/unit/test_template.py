"""Static checks of template.yaml and the state machine definition (no AWS, no Docker).

The template is translated by samtranslator exactly as `sam deploy` would, then linted,
and the translated IAM policies, event wiring and Retry/Catch routes are asserted.
`sam validate --lint` and `sam build` run in `make static` (see the Makefile).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from richdoc_tools.local.template import Template, repository_root

from richdoc.parse.settings import DEFAULT_MAX_OBJECT_MB, largest_document_json_mb
from richdoc.taxonomy import ERROR_NAMES_BY_KIND, PLATFORM_RESOURCE_LIMIT_ERRORS, FailureKind
from tests.support.paths import DEFINITION_PATH

ROOT = repository_root()
PARSE_TIERS = ("ParseTier1Function", "ParseTier2Function", "ParseTier3Function")
TRANSIENT_NAMES = set(ERROR_NAMES_BY_KIND[FailureKind.TRANSIENT])
RESOURCE_LIMIT_NAMES = set(ERROR_NAMES_BY_KIND[FailureKind.RESOURCE_LIMIT])
PERMANENT_NAMES = {"CorruptInput", "UnsupportedFeature"}


def _sam(template: Template, logical_id: str) -> dict[str, Any]:
    props: dict[str, Any] = template.sam["Resources"][logical_id]["Properties"]
    return props


def _statements(template: Template, role: str) -> list[dict[str, Any]]:
    """The role's inline policies and the standalone policies attached to it."""
    props = template.resources[role]["Properties"]
    documents = [p["PolicyDocument"] for p in props.get("Policies", [])]
    documents += [
        r["Properties"]["PolicyDocument"]
        for r in template.resources.values()
        if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
    ]
    return [s for d in documents for s in d["Statement"]]


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


# ---- the translated template --------------------------------------------------------------


def test_translated_template_passes_cfn_lint(template: Template) -> None:
    from cfnlint.api import ManualArgs, lint

    # The translation inlines the definition as an Fn::Join of its lines, which cfn-lint
    # (1.58) resolves with a stack frame per line: past about 1,000 lines it would fail
    # with E1022 "maximum recursion depth exceeded" instead of linting. (Deployed, the
    # definition is an S3 object: sam package uploads DefinitionUri.)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * len(DEFINITION_PATH.read_text().splitlines())))
    try:
        matches = lint(json.dumps(template.cfn), config=ManualArgs(regions=["us-east-1"]))
    finally:
        sys.setrecursionlimit(limit)
    assert [f"{m.rule.id}: {m.message}" for m in matches] == []


def test_every_resource_type_has_a_local_provisioner(template: Template) -> None:
    from richdoc_tools.local.provisioners import PROVISIONERS

    types = {r["Type"] for r in template.resources.values()}
    assert types - set(PROVISIONERS) == set()


def test_definition_placeholders_match_definition_substitutions(template: Template) -> None:
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", DEFINITION_PATH.read_text()))
    substitutions = set(_sam(template, "PipelineStateMachine")["DefinitionSubstitutions"])
    assert placeholders == substitutions


def test_ingest_bucket_is_versioned_private_encrypted_and_notifies_the_queue(
    template: Template,
) -> None:
    bucket = template.resources["IngestBucket"]["Properties"]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    [notification] = bucket["NotificationConfiguration"]["QueueConfigurations"]
    assert notification == {
        "Event": "s3:ObjectCreated:*",
        "Queue": {"Fn::GetAtt": ["IngestQueue", "Arn"]},
    }


@pytest.mark.parametrize("bucket", ["IngestBucket", "ArtifactBucket"])
def test_buckets_refuse_plain_http(template: Template, bucket: str) -> None:
    policies = [
        r["Properties"]
        for r in template.resources.values()
        if r["Type"] == "AWS::S3::BucketPolicy" and r["Properties"]["Bucket"] == {"Ref": bucket}
    ]
    [policy] = policies
    [statement] = policy["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny"
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_ingest_queue_redrives_to_the_dead_letter_queue_and_outlasts_the_starter(
    template: Template,
) -> None:
    queue = template.resources["IngestQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["DeadLetterQueue", "Arn"]
    }
    starter_timeout = _sam(template, "StarterFunction")["Timeout"]
    assert queue["VisibilityTimeout"] >= 6 * starter_timeout


def test_starter_reports_partial_batch_failures(template: Template) -> None:
    mappings = [
        r["Properties"]
        for r in template.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    [mapping] = mappings
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["IngestQueue", "Arn"]}


def test_jobs_table_has_status_index_recovery_and_encryption(template: Template) -> None:
    table = template.resources["JobsTable"]["Properties"]
    [index] = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by-status"
    assert index["KeySchema"][0] == {"AttributeName": "job_status", "KeyType": "HASH"}
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["SSESpecification"] == {"SSEEnabled": True}


def test_parse_tiers_share_one_image_with_growing_memory(template: Template) -> None:
    sam = template.sam["Resources"]
    memories = [
        int(template.sam["Parameters"][f"ParseTier{i}MemoryMB"]["Default"]) for i in (1, 2, 3)
    ]
    assert memories == sorted(memories) and len(set(memories)) == 3
    for tier, logical_id in enumerate(PARSE_TIERS, start=1):
        assert sam[logical_id]["Properties"]["PackageType"] == "Image"
        assert sam[logical_id]["Properties"]["MemorySize"] == {"Ref": f"ParseTier{tier}MemoryMB"}
        assert sam[logical_id]["Metadata"]["Dockerfile"] == "functions/parse/Dockerfile"
        assert sam[logical_id]["Properties"]["Timeout"] == 900


def test_each_parse_tier_has_local_storage_for_the_biggest_object_and_its_json(
    template: Template,
) -> None:
    # The worker builds the DoclingDocument JSON in memory, so it is at most the tier's
    # ceiling; the source object is at most MaxObjectMB. Both sit in /tmp at once.
    parameters = template.sam["Parameters"]
    max_object_mb = int(parameters["MaxObjectMB"]["Default"])
    assert max_object_mb == DEFAULT_MAX_OBJECT_MB
    storage = []
    for tier, logical_id in enumerate(PARSE_TIERS, start=1):
        memory_mb = int(parameters[f"ParseTier{tier}MemoryMB"]["Default"])
        size = _sam(template, logical_id)["EphemeralStorage"]["Size"]
        assert size >= max_object_mb + largest_document_json_mb(memory_mb), logical_id
        assert size <= 10240  # Lambda's limit
        storage.append(size)
    # A full disk is a resource limit: the next tier must have more room to escalate to.
    assert storage == sorted(storage) and len(set(storage)) == 3
    environment = _sam(template, "ParseTier1Function")["Environment"]["Variables"]
    assert environment["RICHDOC_MAX_OBJECT_MB"] == {"Ref": "MaxObjectMB"}


def test_state_machine_is_standard_logged_and_traced(template: Template) -> None:
    machine = template.resources["PipelineStateMachine"]["Properties"]
    assert machine["StateMachineType"] == "STANDARD"
    assert machine["TracingConfiguration"] == {"Enabled": True}
    assert machine["LoggingConfiguration"]["Destinations"]


def _alarms(template: Template) -> dict[str, dict[str, Any]]:
    return {
        lid: r["Properties"]
        for lid, r in template.resources.items()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    }


def test_every_alarm_notifies_the_alarm_topic(template: Template) -> None:
    alarms = _alarms(template)
    assert set(alarms) == {
        "InternalFailuresAlarm",
        "StarterErrorsAlarm",
        "ThrottlesAlarm",
        "DeadLetterAgeAlarm",
        "StuckJobsAlarm",
        "ReconcileFailuresAlarm",
    }
    for name, alarm in alarms.items():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["TreatMissingData"] == "notBreaching", name


def test_the_alarm_topic_uses_a_key_cloudwatch_may_use(template: Template) -> None:
    # CloudWatch cannot publish to a topic under the AWS managed key alias/aws/sns.
    topic = template.resources["AlarmTopic"]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    key = template.resources["AlarmTopicKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    statements = key["KeyPolicy"]["Statement"]
    [cloudwatch] = [
        s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    ]
    assert set(_actions(cloudwatch)) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    [account] = [s for s in statements if "AWS" in s["Principal"]]
    assert account["Principal"]["AWS"]["Fn::Sub"].endswith(":root")


def test_an_alarm_email_subscribes_only_when_given(template: Template) -> None:
    subscription = template.resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail"
    assert subscription["Properties"]["Protocol"] == "email"
    assert template.cfn["Conditions"]["HasAlarmEmail"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]
    }
    assert template.sam["Parameters"]["AlarmEmail"]["Default"] == ""


def test_internal_failures_page_and_expected_failures_do_not(template: Template) -> None:
    alarm = _alarms(template)["InternalFailuresAlarm"]
    # The records function emits JobsDeadLettered with exactly one dimension, the kind.
    assert (alarm["Namespace"], alarm["MetricName"]) == ("richdoc", "JobsDeadLettered")
    assert alarm["Dimensions"] == [{"Name": "kind", "Value": "internal"}]
    # A service name would add a "service" dimension to every metric Powertools emits,
    # and the alarms (which match dimensions exactly) would never see a data point.
    variables = template.sam["Globals"]["Function"]["Environment"]["Variables"]
    assert "POWERTOOLS_SERVICE_NAME" not in variables
    for logical_id in template.handlers:
        own = _sam(template, logical_id).get("Environment", {}).get("Variables", {})
        assert "POWERTOOLS_SERVICE_NAME" not in own, logical_id
    # No alarm counts every dead letter or every failed execution: a corrupt upload fails
    # its execution and reaches the dead-letter queue by design.
    for alarm in _alarms(template).values():
        names = {alarm.get("MetricName")} | {
            m["MetricStat"]["Metric"]["MetricName"]
            for m in alarm.get("Metrics", [])
            if "MetricStat" in m
        }
        assert not names & {"ExecutionsFailed", "NumberOfMessagesSent"}


def test_throttles_of_every_function_are_summed(template: Template) -> None:
    alarm = _alarms(template)["ThrottlesAlarm"]
    stats = [m["MetricStat"]["Metric"] for m in alarm["Metrics"] if "MetricStat" in m]
    assert {s["MetricName"] for s in stats} == {"Throttles"}
    functions = {s["Dimensions"][0]["Value"]["Ref"] for s in stats}
    assert functions == set(template.handlers)
    [expression] = [m for m in alarm["Metrics"] if "Expression" in m]
    assert expression["ReturnData"] is True
    assert set(re.findall(r"t\d+", expression["Expression"])) == {
        m["Id"] for m in alarm["Metrics"] if "MetricStat" in m
    }


def test_dead_letters_alarm_well_before_they_expire(template: Template) -> None:
    alarm = _alarms(template)["DeadLetterAgeAlarm"]
    assert alarm["MetricName"] == "ApproximateAgeOfOldestMessage"
    assert alarm["Dimensions"][0]["Value"] == {"Fn::GetAtt": ["DeadLetterQueue", "QueueName"]}
    assert alarm["Threshold"] == {"Ref": "DeadLetterMaxAgeSeconds"}
    retention = template.resources["DeadLetterQueue"]["Properties"]["MessageRetentionPeriod"]
    parameter = template.sam["Parameters"]["DeadLetterMaxAgeSeconds"]
    assert parameter["Default"] <= retention / 4 and parameter["MaxValue"] < retention


def test_stuck_jobs_and_failed_reconciles_alarm(template: Template) -> None:
    alarms = _alarms(template)
    assert (alarms["StuckJobsAlarm"]["Namespace"], alarms["StuckJobsAlarm"]["MetricName"]) == (
        "richdoc",
        "StuckJobs",
    )
    assert "Dimensions" not in alarms["StuckJobsAlarm"]  # emitted without dimensions
    reconcile = alarms["ReconcileFailuresAlarm"]
    assert reconcile["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert reconcile["Dimensions"][0]["Value"] == {
        "Fn::GetAtt": ["ReconcileFailureQueue", "QueueName"]
    }
    starter = alarms["StarterErrorsAlarm"]
    assert (starter["Namespace"], starter["MetricName"]) == ("AWS/Lambda", "Errors")
    assert starter["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "StarterFunction"}}]


def test_every_function_logs_to_its_own_group_with_the_retention_parameter(
    template: Template,
) -> None:
    for logical_id in template.handlers:
        group = _sam(template, logical_id)["LoggingConfig"]["LogGroup"]["Ref"]
        props = template.resources[group]["Properties"]
        assert props["RetentionInDays"] == {"Ref": "LogRetentionDays"}, logical_id
        assert props["LogGroupName"]["Fn::Sub"].startswith("/aws/lambda/"), logical_id


# ---- the backstops: reconciler and sweep ----------------------------------------------------


def test_the_reconciler_and_sweep_failures_reach_a_queue(template: Template) -> None:
    [config] = [
        r["Properties"]
        for r in template.resources.values()
        if r["Type"] == "AWS::Lambda::EventInvokeConfig"
    ]
    assert config["FunctionName"] == {"Ref": "RecordsFunction"}
    assert config["MaximumRetryAttempts"] == 2
    failure_queue = {"Fn::GetAtt": ["ReconcileFailureQueue", "Arn"]}
    assert config["DestinationConfig"]["OnFailure"]["Destination"] == failure_queue
    # Undeliverable events (not function errors) go to the same queue, which lets
    # EventBridge send only for these two rules.
    rules = ("RecordsFunctionExecutionEnded", "RecordsFunctionSweep")
    for rule in rules:
        [target] = template.resources[rule]["Properties"]["Targets"]
        assert target["DeadLetterConfig"] == {"Arn": failure_queue}
    [statement] = template.resources["ReconcileFailureQueuePolicy"]["Properties"]["PolicyDocument"][
        "Statement"
    ]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Condition"]["ArnEquals"]["aws:SourceArn"] == [
        {"Fn::GetAtt": [rule, "Arn"]} for rule in rules
    ]


def test_the_sweep_runs_on_a_schedule_with_the_workflow_timeout(
    template: Template, definition: dict[str, Any]
) -> None:
    sweep = template.resources["RecordsFunctionSweep"]["Properties"]
    assert sweep["ScheduleExpression"] == {"Fn::Sub": "rate(${SweepIntervalMinutes} minutes)"}
    assert "Input" not in sweep["Targets"][0]  # the Scheduled Event itself: its time is the clock
    environment = _sam(template, "RecordsFunction")["Environment"]["Variables"]
    assert environment["RICHDOC_WORKFLOW_TIMEOUT_S"] == definition["TimeoutSeconds"]


# ---- bounded concurrency --------------------------------------------------------------------


def test_parse_project_detect_and_records_have_reserved_concurrency(template: Template) -> None:
    reserved = {
        lid: _sam(template, lid).get("ReservedConcurrentExecutions") for lid in template.handlers
    }
    assert reserved == {
        "StarterFunction": None,  # bounded by its event source's MaximumConcurrency instead
        "PlanFunction": {"Ref": "PlanReservedConcurrency"},
        "ParseTier1Function": {"Ref": "ParseTier1ReservedConcurrency"},
        "ParseTier2Function": {"Ref": "ParseTier2ReservedConcurrency"},
        "ParseTier3Function": {"Ref": "ParseTier3ReservedConcurrency"},
        "MergeFunction": {"Ref": "StepReservedConcurrency"},
        "ProjectFunction": {"Ref": "StepReservedConcurrency"},
        "DetectFunction": {"Ref": "StepReservedConcurrency"},
        "RecordsFunction": {"Ref": "RecordsReservedConcurrency"},
    }
    parameters = template.sam["Parameters"]
    total = sum(parameters[r["Ref"]]["Default"] for r in reserved.values() if r is not None)
    assert total == 125  # docs/architecture.md, "Bounded concurrency"
    # The defaults deploy in an account with the default quota (1,000), which keeps 100
    # unreserved.
    assert total <= 900


def test_the_starter_scales_to_a_bounded_concurrency(template: Template) -> None:
    [mapping] = [
        r["Properties"]
        for r in template.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "StarterMaximumConcurrency"}}
    assert template.sam["Parameters"]["StarterMaximumConcurrency"]["MinValue"] == 2  # AWS's minimum


# ---- least privilege ------------------------------------------------------------------------

EXPECTED_ACTIONS = {
    "StarterFunctionRole": {
        "s3:GetObject",
        "s3:GetObjectVersion",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "states:StartExecution",
    },
    # Reads the source object and records attempts; writes no artifact.
    "PlanFunctionRole": {
        "s3:GetObject",
        "s3:GetObjectVersion",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    # Reads the shards' DoclingDocuments and writes the merged one; never the source.
    "MergeFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "s3:ListBucket",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    **{
        f"{tier}Role": {
            "s3:GetObject",
            "s3:GetObjectVersion",
            "s3:PutObject",
            "s3:ListBucket",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:Query",
        }
        for tier in PARSE_TIERS
    },
    "ProjectFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    "DetectFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    "RecordsFunctionRole": {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "sqs:SendMessage",
        "states:DescribeExecution",
        "states:GetExecutionHistory",
    },
}
# Log delivery to CloudWatch does not support resource-level permissions.
RESOURCE_STAR_ALLOWED = {
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
}


@pytest.mark.parametrize("role", sorted(EXPECTED_ACTIONS))
def test_function_roles_grant_exactly_the_actions_their_code_needs(
    template: Template, role: str
) -> None:
    actions = {a for s in _statements(template, role) for a in _actions(s)}
    assert actions == EXPECTED_ACTIONS[role]


def test_no_policy_uses_wildcard_actions_or_unscoped_resources(template: Template) -> None:
    roles = [lid for lid, r in template.resources.items() if r["Type"] == "AWS::IAM::Role"]
    for role in roles:
        for statement in _statements(template, role):
            for action in _actions(statement):
                assert not action.endswith(":*") and action != "*", (role, action)
            if statement["Resource"] == "*":
                assert set(_actions(statement)) <= RESOURCE_STAR_ALLOWED, (role, statement)


def test_the_records_function_sends_only_to_the_dead_letter_and_failure_queues(
    template: Template,
) -> None:
    statements = _statements(template, "RecordsFunctionRole")
    sends = [s["Resource"] for s in statements if "sqs:SendMessage" in _actions(s)]
    assert sorted(sends, key=json.dumps) == [
        {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]},
        {"Fn::GetAtt": ["ReconcileFailureQueue", "Arn"]},
    ]
    [queries] = [s for s in statements if _actions(s) == ["dynamodb:Query"]]
    assert queries["Resource"] == {"Fn::Sub": "${JobsTable.Arn}/index/by-status"}
    [executions] = [s for s in statements if "states:GetExecutionHistory" in _actions(s)]
    assert set(_actions(executions)) == {"states:DescribeExecution", "states:GetExecutionHistory"}
    # Only this state machine's executions (by name: the role cannot reference the machine).
    assert executions["Resource"]["Fn::Sub"].endswith(":execution:${PipelineStateMachine.Name}:*")


def test_parse_and_merge_functions_write_only_the_docling_cache(template: Template) -> None:
    for function in (*PARSE_TIERS, "MergeFunction"):
        statements = _statements(template, f"{function}Role")
        writes = [s for s in statements if "s3:PutObject" in _actions(s)]
        assert [s["Resource"] for s in writes] == [{"Fn::Sub": "${ArtifactBucket.Arn}/docling/*"}]
    merge_reads = [
        s["Resource"]
        for s in _statements(template, "MergeFunctionRole")
        if "s3:GetObject" in _actions(s)
    ]
    assert merge_reads == [{"Fn::Sub": "${ArtifactBucket.Arn}/docling/*"}]


def test_the_plan_function_reads_only_the_ingest_bucket(template: Template) -> None:
    statements = _statements(template, "PlanFunctionRole")
    s3 = [s for s in statements if any(a.startswith("s3:") for a in _actions(s))]
    assert [s["Resource"] for s in s3] == [{"Fn::Sub": "${IngestBucket.Arn}/*"}]


def test_the_fan_out_parameters_reach_the_plan_function_only(template: Template) -> None:
    parameters = template.sam["Parameters"]
    assert (parameters["ShardPages"]["Default"], parameters["ShardPages"]["MinValue"]) == (50, 0)
    concurrency = parameters["ShardMaxConcurrency"]
    assert (concurrency["Default"], concurrency["MinValue"], concurrency["MaxValue"]) == (10, 1, 40)
    for logical_id in template.handlers:
        variables = _sam(template, logical_id).get("Environment", {}).get("Variables", {})
        expected = {
            "RICHDOC_SHARD_PAGES": {"Ref": "ShardPages"},
            "RICHDOC_SHARD_CONCURRENCY": {"Ref": "ShardMaxConcurrency"},
        }
        found = {k: v for k, v in variables.items() if k in expected}
        assert found == (expected if logical_id == "PlanFunction" else {}), logical_id


def test_the_plan_function_is_the_parse_image_with_its_own_handler(template: Template) -> None:
    plan, tier1 = _sam(template, "PlanFunction"), _sam(template, "ParseTier1Function")
    assert plan["PackageType"] == "Image" and plan["ImageConfig"] == {"Command": ["app.plan"]}
    resources = template.sam["Resources"]
    assert resources["PlanFunction"]["Metadata"] == resources["ParseTier1Function"]["Metadata"]
    # The limits its inspection applies are the parse tiers'.
    for variable in ("RICHDOC_TIMEOUT_S", "RICHDOC_MAX_PAGES", "RICHDOC_MAX_OBJECT_MB"):
        assert (
            plan["Environment"]["Variables"][variable]
            == (tier1["Environment"]["Variables"][variable])
        )
    # Its local storage holds the biggest source object it downloads.
    assert plan["EphemeralStorage"]["Size"] >= DEFAULT_MAX_OBJECT_MB


def test_state_machine_may_invoke_only_the_pipeline_functions(template: Template) -> None:
    invoked = {
        s["Resource"]["Fn::Sub"][1]["functionName"]["Ref"]
        for s in _statements(template, "PipelineStateMachineRole")
        if "lambda:InvokeFunction" in _actions(s)
    }
    assert invoked == {
        "RecordsFunction",
        "PlanFunction",
        *PARSE_TIERS,
        "MergeFunction",
        "ProjectFunction",
        "DetectFunction",
    }


# ---- the state machine definition ------------------------------------------------------------


def test_definition_passes_asl_validator() -> None:
    npx = shutil.which("npx")
    assert npx, "node/npx is needed for asl-validator (make static installs it)"
    validator = ROOT / "node_modules" / ".bin" / "asl-validator"
    assert validator.exists(), "run `npm ci` (make test does) to install asl-validator"
    result = subprocess.run(
        [str(validator), "--json-path", str(DEFINITION_PATH)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _states(machine: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every state, those inside a Map state's iterator as ``Map/State``."""
    for name, state in machine["States"].items():
        yield prefix + name, state
        if state["Type"] == "Map":
            yield from _states(state["ItemProcessor"], f"{prefix}{name}/")


def _tasks(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in _states(definition) if s["Type"] == "Task"}


THROTTLE = "Lambda.TooManyRequestsException"


def _lambda_tasks(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in _tasks(definition).items() if s["Resource"].startswith("${")}


def test_every_task_retries_transient_errors_with_backoff_and_jitter_only(
    definition: dict[str, Any],
) -> None:
    for name, state in _lambda_tasks(definition).items():
        throttles, transient = state["Retry"]
        assert set(throttles["ErrorEquals"]) | set(transient["ErrorEquals"]) == TRANSIENT_NAMES
        assert throttles["ErrorEquals"] == [THROTTLE], name
        assert transient["BackoffRate"] > 1 and transient["JitterStrategy"] == "FULL", name
        assert 1 < transient["MaxAttempts"] <= 6, name
    sends = [s for s in _tasks(definition).values() if s["Resource"].endswith(":sqs:sendMessage")]
    assert len(sends) == 1  # the dead-letter send, which retries any SDK error


def _retry_delays(retrier: dict[str, Any]) -> list[float]:
    """The un-jittered wait before each retry (Step Functions' schedule)."""
    interval, rate = retrier["IntervalSeconds"], retrier["BackoffRate"]
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return [min(interval * rate**i, cap) for i in range(retrier["MaxAttempts"])]


def test_throttles_are_retried_for_about_a_quarter_of_an_hour_on_every_task(
    definition: dict[str, Any],
) -> None:
    for name, state in _lambda_tasks(definition).items():
        [throttles] = [r for r in state["Retry"] if THROTTLE in r["ErrorEquals"]]
        delays = _retry_delays(throttles)
        assert throttles["JitterStrategy"] == "FULL", name  # spread the retrying herd
        assert 120 <= throttles["MaxDelaySeconds"] <= 300, name
        # FULL jitter waits a uniform share of each delay: half of the schedule on average.
        assert 12 * 60 <= sum(delays) / 2 <= 20 * 60, (name, sum(delays))
        # The other transient errors keep their short window.
        [transient] = [r for r in state["Retry"] if THROTTLE not in r["ErrorEquals"]]
        assert sum(_retry_delays(transient)) <= 60, name


def test_resource_limits_and_permanent_failures_are_never_retried(
    definition: dict[str, Any],
) -> None:
    for name, state in _tasks(definition).items():
        for retrier in state.get("Retry", []):
            names = set(retrier["ErrorEquals"])
            assert not names & (RESOURCE_LIMIT_NAMES | PERMANENT_NAMES), name


def _catch_target(state: dict[str, Any], error: str) -> str:
    for catcher in state["Catch"]:
        if error in catcher["ErrorEquals"] or "States.ALL" in catcher["ErrorEquals"]:
            target: str = catcher["Next"]
            return target
    raise AssertionError(f"{error} is not caught")


@pytest.mark.parametrize("error", sorted(RESOURCE_LIMIT_NAMES))
def test_resource_limits_escalate_tier_by_tier_then_dead_letter(
    definition: dict[str, Any], error: str
) -> None:
    states = definition["States"]
    assert _catch_target(states["ParseTier1"], error) == "EscalateToTier2"
    assert states["EscalateToTier2"]["Next"] == "ParseTier2"
    assert _catch_target(states["ParseTier2"], error) == "EscalateToTier3"
    assert states["EscalateToTier3"]["Next"] == "ParseTier3"
    assert _catch_target(states["ParseTier3"], error) == "ParseTier3Failed"


def test_platform_kill_names_are_all_resource_limits() -> None:
    assert set(PLATFORM_RESOURCE_LIMIT_ERRORS) < RESOURCE_LIMIT_NAMES


@pytest.mark.parametrize("error", ["CorruptInput", "UnsupportedFeature", "Transient", "KeyError"])
def test_other_failures_go_straight_to_the_failure_record(
    definition: dict[str, Any], error: str
) -> None:
    states = definition["States"]
    for tier in (1, 2, 3):
        target = _catch_target(states[f"ParseTier{tier}"], error)
        assert target == f"ParseTier{tier}Failed"
        assert states[target]["Next"] == "RecordFailure"
    assert _catch_target(states["Project"], error) == "ProjectFailed"
    assert _catch_target(states["Detect"], error) == "DetectFailed"


def test_only_the_biggest_tier_accepts_partial_parses(definition: dict[str, Any]) -> None:
    states = definition["States"]
    accepts = [states[f"ParseTier{t}"]["Parameters"]["accept_partial"] for t in (1, 2, 3)]
    assert accepts == [False, False, True]


def test_failure_path_records_dead_letters_and_fails_with_the_kind(
    definition: dict[str, Any],
) -> None:
    states = definition["States"]
    assert states["RecordFailure"]["Next"] == "SendToDeadLetterQueue"
    send = states["SendToDeadLetterQueue"]
    assert send["Parameters"]["MessageBody.$"] == "$.message"
    assert send["Parameters"]["MessageAttributes.$"] == "$.failure.message_attributes"
    # The job becomes terminal only after the send: the mark carries the message's id.
    assert send["Next"] == "MarkDeadLettered"
    assert send["ResultSelector"] == {"message_id.$": "$.MessageId"}
    mark = states["MarkDeadLettered"]
    assert mark["Parameters"]["action"] == "mark_dead_lettered"
    assert mark["Parameters"]["message_id.$"] == f"{send['ResultPath']}.message_id"
    assert mark["Next"] == "FailureKind"
    choices = {c["StringEquals"]: c["Next"] for c in states["FailureKind"]["Choices"]}
    fail_errors = {kind: states[target]["Error"] for kind, target in choices.items()}
    assert fail_errors == {str(k): str(k) for k in FailureKind if k is not FailureKind.INTERNAL}
    assert states[states["FailureKind"]["Default"]]["Error"] == "internal"


def test_a_send_or_mark_that_fails_leaves_the_job_to_the_reconciler(
    definition: dict[str, Any],
) -> None:
    states = definition["States"]
    assert _catch_target(states["SendToDeadLetterQueue"], "States.ALL") == "DeadLetterPending"
    assert _catch_target(states["MarkDeadLettered"], "StaleRun") == "Superseded"
    assert _catch_target(states["MarkDeadLettered"], "Lambda.Unknown") == "DeadLetterPending"
    # A Fail state: the execution ends FAILED, which the status-change rule delivers.
    assert states["DeadLetterPending"]["Type"] == "Fail"


def test_workflow_has_an_overall_timeout_and_every_task_a_state_timeout(
    definition: dict[str, Any],
) -> None:
    assert 0 < definition["TimeoutSeconds"] <= 4 * 3600
    tasks = _tasks(definition)
    step_tasks = [name for name, state in tasks.items() if "tier" in state.get("Parameters", {})]
    step_tasks += ["Plan", "Merge", "Project", "Detect"]
    assert len(step_tasks) == 10  # three whole-document tiers, three shard tiers, four steps
    for name in step_tasks:
        assert tasks[name]["TimeoutSeconds"] > 0, name


def test_states_pass_keys_not_documents(definition: dict[str, Any]) -> None:
    # Step outputs land under $.results.<step>; the records and DLQ states read keys only.
    for name in ("ParseTier1", "ParseTier2", "ParseTier3"):
        assert definition["States"][name]["ResultPath"] == "$.results.parse"
    assert definition["States"]["Project"]["Parameters"]["docling_key.$"] == (
        "$.results.parse.docling_key"
    )
    assert definition["States"]["Detect"]["Parameters"]["projection_key.$"] == (
        "$.results.project.projection_key"
    )


# ---- page-range shards: plan, the Map state, merge ---------------------------------------------

SHARDS = "ParseShards"


def _iterator(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = definition["States"][SHARDS]["ItemProcessor"]["States"]
    return states


def test_a_plan_decides_between_the_whole_document_tiers_and_the_shards(
    definition: dict[str, Any],
) -> None:
    states = definition["States"]
    assert states["RecordStart"]["Next"] == "Plan"
    assert states["Plan"]["Next"] == "Sharded"
    [choice] = states["Sharded"]["Choices"]
    assert choice == {
        "Variable": "$.results.plan.sharded",
        "BooleanEquals": True,
        "Next": SHARDS,
    }
    assert states["Sharded"]["Default"] == "ParseTier1"  # the whole-document path, unchanged
    # A document the plan refuses fails once, before any parse.
    assert _catch_target(states["Plan"], "CorruptInput") == "PlanFailed"
    assert states["PlanFailed"]["Next"] == "RecordFailure"


def test_the_shards_run_in_an_inline_map_bounded_by_the_plans_concurrency(
    definition: dict[str, Any],
) -> None:
    shards = definition["States"][SHARDS]
    # Inline: a distributed Map's failure would reach the Catch as
    # States.ExceedToleratedFailureThreshold, not the shard's error name (docs/shards.md).
    assert shards["ItemProcessor"]["ProcessorConfig"] == {"Mode": "INLINE"}
    assert shards["ItemsPath"] == "$.results.plan.shards"
    assert shards["MaxConcurrencyPath"] == "$.results.plan.max_concurrency"
    assert shards["ItemSelector"]["pages.$"] == "$$.Map.Item.Value"
    assert shards["Next"] == "Merge"
    assert definition["States"]["Merge"]["Next"] == "Project"


@pytest.mark.parametrize("tier", [1, 2, 3])
def test_a_shard_tier_is_its_whole_document_tier_with_a_page_range(
    definition: dict[str, Any], tier: int
) -> None:
    whole, shard = (
        definition["States"][f"ParseTier{tier}"],
        _iterator(definition)[f"ParseShardTier{tier}"],
    )
    assert shard["Resource"] == whole["Resource"]
    assert shard["Retry"] == whole["Retry"]
    assert [c["ErrorEquals"] for c in shard["Catch"]] == [c["ErrorEquals"] for c in whole["Catch"]]
    assert {
        k: v for k, v in shard["Parameters"].items() if k not in ("pages.$", "execution.$")
    } == {k: v for k, v in whole["Parameters"].items() if k != "execution.$"}
    assert shard["Parameters"]["pages.$"] == "$.pages"
    assert shard["TimeoutSeconds"] == whole["TimeoutSeconds"]


@pytest.mark.parametrize("error", sorted(RESOURCE_LIMIT_NAMES))
def test_a_shards_resource_limit_escalates_that_shard_alone(
    definition: dict[str, Any], error: str
) -> None:
    states = _iterator(definition)
    assert _catch_target(states["ParseShardTier1"], error) == "EscalateShardToTier2"
    assert states["EscalateShardToTier2"]["Next"] == "ParseShardTier2"
    assert _catch_target(states["ParseShardTier2"], error) == "EscalateShardToTier3"
    assert states["EscalateShardToTier3"]["Next"] == "ParseShardTier3"
    assert _catch_target(states["ParseShardTier3"], error) == "ShardTier3Failed"
    for tier in (2, 3):
        # The escalation record names the shard.
        assert states[f"EscalateShardToTier{tier}"]["Parameters"]["pages.$"] == "$.pages"


@pytest.mark.parametrize("error", ["CorruptInput", "UnsupportedFeature", "Transient", "KeyError"])
def test_a_shard_that_fails_for_good_fails_its_iteration_under_its_own_name(
    definition: dict[str, Any], error: str
) -> None:
    states = _iterator(definition)
    for tier in (1, 2, 3):
        target = _catch_target(states[f"ParseShardTier{tier}"], error)
        assert target == f"ShardTier{tier}Failed"
        assert states[target]["Next"] == "RecordShardFailure"
    assert states["RecordShardFailure"]["Next"] == "ShardFailed"
    # Even when the record cannot be written, the shard's error (at $.error) is raised.
    assert _catch_target(states["RecordShardFailure"], "States.ALL") == "ShardFailed"
    assert states["RecordShardFailure"]["Catch"][0]["ResultPath"] != "$.error"
    failed = states["ShardFailed"]
    assert (failed["Type"], failed["ErrorPath"], failed["CausePath"]) == (
        "Fail",
        "$.error.Error",
        "$.error.Cause",
    )
    # The Map's Catch: one failure record for the job (the shard's attempt is closed).
    shards = definition["States"][SHARDS]
    assert _catch_target(shards, "StaleRun") == "Superseded"
    assert _catch_target(shards, error) == "ParseShardsFailed"
    failed_at = definition["States"]["ParseShardsFailed"]
    assert failed_at["Result"] == {"stage": "parse", "attempt_recorded": True}
    assert failed_at["Next"] == "RecordFailure"


def test_only_the_biggest_shard_tier_accepts_partial_parses(definition: dict[str, Any]) -> None:
    states = _iterator(definition)
    accepts = [states[f"ParseShardTier{t}"]["Parameters"]["accept_partial"] for t in (1, 2, 3)]
    assert accepts == [False, False, True]


def test_the_map_keeps_keys_only_and_the_merge_drops_them(definition: dict[str, Any]) -> None:
    from richdoc.contracts import ShardParsed

    for tier in (1, 2, 3):
        selector = _iterator(definition)[f"ParseShardTier{tier}"]["ResultSelector"]
        assert set(selector) == {f"{name}.$" for name in ShardParsed.model_fields}
    assert definition["States"][SHARDS]["ResultPath"] == "$.results.shards"
    merge = definition["States"]["Merge"]
    # The merged parse replaces $.results (plan, shard list): later states stay small.
    assert (merge["ResultSelector"], merge["ResultPath"]) == ({"parse.$": "$"}, "$.results")
