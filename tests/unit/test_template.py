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
from richdoc_tools.local.cloudformation.template import Template, repository_root

from richdoc.jobs import JobStatus
from richdoc.parse.settings import DEFAULT_MAX_OBJECT_MB, largest_document_json_mb
from richdoc.taxonomy import (
    ERROR_NAMES_BY_KIND,
    PLATFORM_INACTIVE_FUNCTION_ERRORS,
    PLATFORM_RESOURCE_LIMIT_ERRORS,
    FailureKind,
)
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
    from richdoc_tools.local.cloudformation.provisioners import PROVISIONERS

    types = {r["Type"] for r in template.resources.values()}
    assert types - set(PROVISIONERS) == set()


def test_definition_placeholders_match_definition_substitutions(template: Template) -> None:
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", DEFINITION_PATH.read_text()))
    substitutions = set(_sam(template, "PipelineStateMachine")["DefinitionSubstitutions"])
    assert placeholders == substitutions


def test_the_definition_takes_the_partition_from_the_template(
    template: Template, definition: dict[str, Any]
) -> None:
    # aws-cn and aws-us-gov have ARNs of their own: the definition spells none. Its one
    # service integration comes in whole (asl-validator checks a Resource is an ARN or one
    # placeholder), built in the stack's partition.
    assert "arn:" not in DEFINITION_PATH.read_text()
    [send] = [s for s in _tasks(definition).values() if s["Resource"] == "${SqsSendMessage}"]
    assert send["Parameters"]["QueueUrl"] == "${DeadLetterQueueUrl}"
    substitutions = _sam(template, "PipelineStateMachine")["DefinitionSubstitutions"]
    assert substitutions["SqsSendMessage"] == {
        "Fn::Sub": "arn:${AWS::Partition}:states:::sqs:sendMessage"
    }


def test_ingest_bucket_is_versioned_private_encrypted_and_notifies_the_queue(
    template: Template,
) -> None:
    bucket = template.resources["IngestBucket"]["Properties"]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    notifications = bucket["NotificationConfiguration"]["QueueConfigurations"]
    # Created objects start jobs; removed ones (deleted, or expired by the lifecycle)
    # delete their jobs and what was derived from them.
    assert notifications == [
        {"Event": event, "Queue": {"Fn::GetAtt": ["IngestQueue", "Arn"]}}
        for event in ("s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:LifecycleExpiration:*")
    ]


def _lifecycle(template: Template, bucket: str, **parameters: str) -> dict[str, dict[str, Any]]:
    """A bucket's lifecycle rules by id, as deployed with these parameters."""
    from richdoc_tools.local.cloudformation.intrinsics import parameters_resolver

    resolver = parameters_resolver(template, parameters)
    rules = resolver.resolve(
        template.resources[bucket]["Properties"]["LifecycleConfiguration"]["Rules"]
    )
    return {rule["Id"]: rule for rule in rules}


def test_source_versions_parse_artifacts_and_run_outputs_expire(template: Template) -> None:
    parameters = template.sam["Parameters"]
    defaults = {
        name: parameters[name]["Default"]
        for name in ("SourceVersionRetentionDays", "ParseArtifactRetentionDays", "JobRetentionDays")
    }
    assert defaults == {
        "SourceVersionRetentionDays": 30,
        "ParseArtifactRetentionDays": 90,
        "JobRetentionDays": 365,
    }
    ingest = _lifecycle(template, "IngestBucket")
    assert ingest["NoncurrentSourceVersions"]["NoncurrentVersionExpiration"] == {
        "NoncurrentDays": "30"
    }
    assert ingest["SourceUploads"]["ExpiredObjectDeleteMarker"] is True
    artifacts = _lifecycle(template, "ArtifactBucket")
    assert (
        artifacts["ParseArtifacts"]["Prefix"],
        artifacts["ParseArtifacts"]["ExpirationInDays"],
    ) == (
        "docling/",
        "90",
    )
    assert (artifacts["RunOutputs"]["Prefix"], artifacts["RunOutputs"]["ExpirationInDays"]) == (
        "jobs/",
        "365",
    )
    for rules in (ingest, artifacts):  # multipart uploads never left half done
        assert any("AbortIncompleteMultipartUpload" in rule for rule in rules.values())
        assert {rule["Status"] for rule in rules.values()} == {"Enabled"}
    # 0 keeps them: the rule is left out.
    kept = _lifecycle(
        template, "ArtifactBucket", ParseArtifactRetentionDays="0", JobRetentionDays="0"
    )
    assert set(kept) == {"IncompleteUploads"}
    assert "NoncurrentSourceVersions" not in _lifecycle(
        template, "IngestBucket", SourceVersionRetentionDays="0"
    )
    for name in defaults:
        assert parameters[name]["MinValue"] == 0, name


def test_job_records_expire_as_long_after_as_their_run_outputs(template: Template) -> None:
    from richdoc.jobs import JOB_RETENTION_ENV
    from richdoc.jobs.model import TTL_ATTRIBUTE
    from richdoc.jobs.references import PARSE_ARTIFACT_RETENTION_ENV

    table = template.resources["JobsTable"]["Properties"]
    assert table["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    variables = template.sam["Globals"]["Function"]["Environment"]["Variables"]
    # The records' TTL and the run outputs' lifecycle rule take the same parameter.
    assert variables[JOB_RETENTION_ENV] == {"Ref": "JobRetentionDays"}
    assert variables[PARSE_ARTIFACT_RETENTION_ENV] == {"Ref": "ParseArtifactRetentionDays"}
    rules = template.sam["Resources"]["ArtifactBucket"]["Properties"]["LifecycleConfiguration"]
    [outputs] = [r for r in rules["Rules"] if "Fn::If" in r and r["Fn::If"][0] == "ExpiresJobs"]
    assert outputs["Fn::If"][1]["ExpirationInDays"] == {"Ref": "JobRetentionDays"}


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


def _mappings(template: Template) -> dict[str, dict[str, Any]]:
    """Event source mappings by the function they invoke."""
    return {
        r["Properties"]["FunctionName"]["Ref"]: r["Properties"]
        for r in template.resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    }


def test_starter_reports_partial_batch_failures(template: Template) -> None:
    mapping = _mappings(template)["StarterFunction"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["IngestQueue", "Arn"]}


def test_the_notifier_reads_every_job_change_and_never_holds_the_stream_up(
    template: Template,
) -> None:
    table = template.resources["JobsTable"]["Properties"]
    assert table["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert set(_mappings(template)) == {"StarterFunction", "NotifierFunction", "DispatcherFunction"}
    mapping = _mappings(template)["NotifierFunction"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["JobsTable", "StreamArn"]}
    assert mapping["StartingPosition"] == "TRIM_HORIZON"  # nothing before the first poll lost
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # A poisoned record is isolated and retried for as long as its age allows (an outage
    # is waited out, not counted in attempts), then parked whole in a bucket (an S3
    # destination keeps the invocation's payload; a queue would keep only its metadata).
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["MaximumRetryAttempts"] == -1
    assert mapping["MaximumRecordAgeInSeconds"] == {"Ref": "NotifierMaxRecordAgeSeconds"}
    age = template.sam["Parameters"]["NotifierMaxRecordAgeSeconds"]
    assert 3600 <= age["Default"] <= age["MaxValue"] <= 86400  # within the stream's 24 hours
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": ["NotifyFailureBucket", "Arn"]
    }
    bucket = template.resources["NotifyFailureBucket"]["Properties"]
    [notification] = bucket["NotificationConfiguration"]["QueueConfigurations"]
    assert notification["Queue"] == {"Fn::GetAtt": ["NotifyFailureQueue", "Arn"]}
    [pattern] = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert pattern["dynamodb"]["Keys"] == {"sk": {"S": ["JOB"]}}
    terminal = {s.value for s in JobStatus if s.terminal}
    assert set(pattern["dynamodb"]["NewImage"]["job_status"]["S"]) == terminal


def test_the_dispatcher_isolates_a_change_it_fails_on_and_records_it_then_moves_on(
    template: Template,
) -> None:
    """A failing batch is halved until the failing change is alone (the others go
    through), retried, then recorded on a queue that alarms; the minutely run redoes
    what it would have woken."""
    mapping = _mappings(template)["DispatcherFunction"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["JobsTable", "StreamArn"]}
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["MaximumRetryAttempts"] == 5
    queue = {"Fn::GetAtt": ["DispatchFailureQueue", "Arn"]}
    assert mapping["DestinationConfig"] == {"OnFailure": {"Destination": queue}}
    alarm = _alarms(template)["DispatchFailuresAlarm"]
    assert alarm["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert alarm["Dimensions"][0]["Value"] == {"Fn::GetAtt": ["DispatchFailureQueue", "QueueName"]}
    assert template.sam["Outputs"]["DispatchFailureQueueUrl"]["Value"] == {
        "Ref": "DispatchFailureQueue"
    }


def test_jobs_table_has_status_index_recovery_and_encryption(template: Template) -> None:
    table = template.resources["JobsTable"]["Properties"]
    index, queue, stepped = table["GlobalSecondaryIndexes"]
    # The lane's index is left out of an upgrade's first step (one index per update).
    condition, lane, absent = stepped["Fn::If"]
    assert (condition, absent) == ("AdmissionIndexesInPlace", {"Ref": "AWS::NoValue"})
    assert index["IndexName"] == "by-status"
    assert index["KeySchema"][0] == {"AttributeName": "job_status", "KeyType": "HASH"}
    # Admission's sparse indexes: waiting jobs by tenant in upload order, keys only; the
    # tenants with waiting jobs, least recently served first.
    assert (queue["IndexName"], queue["Projection"]) == (
        "by-queue",
        {"ProjectionType": "KEYS_ONLY"},
    )
    assert [k["AttributeName"] for k in queue["KeySchema"]] == ["tenant", "backlog_key"]
    assert lane["IndexName"] == "tenants-by-service"
    assert [k["AttributeName"] for k in lane["KeySchema"]] == ["lane", "last_served"]
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["SSESpecification"] == {"SSEEnabled": True}
    # SSEEnabled true is the AWS managed key (aws/dynamodb); false or absent, an AWS owned
    # key. The security scan's skip says which the table has.
    [skip] = template.sam["Resources"]["JobsTable"]["Metadata"]["checkov"]["skip"]
    assert "AWS managed key" in skip["comment"] and "AWS-owned" not in skip["comment"]


def test_the_capacity_is_bounded_by_what_the_slot_ledger_item_holds(template: Template) -> None:
    from richdoc.admission.settings import MAX_CAPACITY, AdmissionSettings
    from richdoc.admission.slots import Holder, Ledger, ledger_bytes

    parameter = template.sam["Parameters"]["MaxRunningJobs"]
    assert int(parameter["MaxValue"]) == MAX_CAPACITY
    with pytest.raises(ValueError, match=f"1 to {MAX_CAPACITY} slots"):
        AdmissionSettings.of(MAX_CAPACITY + 1)

    def full(slots: int) -> Ledger:
        # The worst entry: the longest tenant name in four-byte characters.
        holder = Holder(run=9999, slots=99, tenant="\U0001d11e" * 256, admitted_at="0" * 32)
        return Ledger(running=slots, holders={f"{n:032x}": holder for n in range(slots)})

    # DynamoDB refuses an item past 400 KB: the full ledger never gets there.
    assert ledger_bytes(full(MAX_CAPACITY)) < 400 * 1024 < ledger_bytes(full(MAX_CAPACITY + 14))


@pytest.mark.parametrize("logical_id", ["JobsTable", "DeadLetterQueue"])
def test_the_job_records_and_the_dead_letters_outlive_the_stack(
    template: Template, logical_id: str
) -> None:
    # What no redeploy can recreate: every job's record, and the only way to redrive a
    # failed upload. Deleting the stack (or a replacing update) leaves them.
    resource = template.sam["Resources"][logical_id]
    assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain")
    if logical_id == "JobsTable":
        assert resource["Properties"]["DeletionProtectionEnabled"] is True


def test_parse_tiers_share_one_image_with_growing_memory(template: Template) -> None:
    sam = template.sam["Resources"]
    memories = [
        int(template.sam["Parameters"][f"ParseTier{i}MemoryMB"]["Default"]) for i in (1, 2, 3)
    ]
    assert memories == sorted(memories) and len(set(memories)) == 3
    for tier, logical_id in enumerate(PARSE_TIERS, start=1):
        assert sam[logical_id]["Properties"]["PackageType"] == "Image"
        memory = sam[logical_id]["Properties"]["MemorySize"]
        # Every tier capped by the small account profile (tier 1's default is above it).
        assert memory == {"Fn::If": ["SmallAccount", 3008, {"Ref": f"ParseTier{tier}MemoryMB"}]}
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
        "NotifyFailuresAlarm",
        "NotifierIteratorAgeAlarm",
        "BacklogAgeAlarm",
        "TransientDeadLettersAlarm",
        "DispatcherErrorsAlarm",
        "DispatchFailuresAlarm",
        "WebhookDeadLettersAlarm",
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
    # An alarm sums at most 10 metrics. The dispatcher's throttles are retried by its
    # stream and its schedule, and its own errors alarm (DispatcherErrorsAlarm).
    assert functions == set(template.handlers) - {"DispatcherFunction"}
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


def test_starter_failures_alarm_on_every_failed_record(template: Template) -> None:
    # With partial batch responses a batch with failed records is a successful invocation:
    # the alarm counts the records (the starter's EMF metric, no dimensions: Powertools
    # adds none without a service name) and the invocations that failed as a whole.
    starter = _alarms(template)["StarterErrorsAlarm"]
    stats = {m["Id"]: m["MetricStat"] for m in starter["Metrics"] if "MetricStat" in m}
    records, errors = stats["failedrecords"]["Metric"], stats["errors"]["Metric"]
    assert records == {"Namespace": "richdoc", "MetricName": "IngestRecordsFailed"}
    assert (errors["Namespace"], errors["MetricName"]) == ("AWS/Lambda", "Errors")
    assert errors["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "StarterFunction"}}]
    assert {stat["Stat"] for stat in stats.values()} == {"Sum"}
    [expression] = [m for m in starter["Metrics"] if "Expression" in m]
    assert expression["ReturnData"] is True
    assert set(re.findall(r"[a-z]+", expression["Expression"].lower())) == {"sum", "fill", *stats}
    # IngestRecordsFailed exists only in periods with a failed record, Errors only while
    # the starter runs: each filled with 0, so a period missing one still counts the other.
    for metric in stats:
        assert f"FILL({metric}, 0)" in expression["Expression"]
    assert (starter["Threshold"], starter["ComparisonOperator"]) == (0, "GreaterThanThreshold")


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


RESERVED_CONCURRENCY = {
    "PlanFunction": "PlanReservedConcurrency",
    "ParseTier1Function": "ParseTier1ReservedConcurrency",
    "ParseTier2Function": "ParseTier2ReservedConcurrency",
    "ParseTier3Function": "ParseTier3ReservedConcurrency",
    "MergeFunction": "StepReservedConcurrency",
    "ProjectFunction": "StepReservedConcurrency",
    "DetectFunction": "StepReservedConcurrency",
    "RecordsFunction": "RecordsReservedConcurrency",
}


def _deployed(template: Template, prop: str, **parameters: str) -> dict[str, Any]:
    """A property of every function as CloudFormation deploys the translated template with
    these parameters (defaults for the rest): conditions and ``AWS::NoValue`` applied;
    functions without it are left out."""
    from richdoc_tools.local.cloudformation.intrinsics import parameters_resolver

    resolver = parameters_resolver(template, parameters)
    values = {}
    for logical_id in template.handlers:
        properties = template.resources[logical_id]["Properties"]
        resolved = resolver.resolve({prop: properties[prop]} if prop in properties else {})
        if prop in resolved:
            values[logical_id] = resolved[prop]
    return values


def test_parse_project_detect_and_records_have_reserved_concurrency(template: Template) -> None:
    parameters = template.sam["Parameters"]
    reserved = _deployed(template, "ReservedConcurrentExecutions")
    # Not the starter: it is bounded by its event source's MaximumConcurrency instead.
    assert reserved == {
        lid: str(parameters[name]["Default"]) for lid, name in RESERVED_CONCURRENCY.items()
    }
    total = sum(int(value) for value in reserved.values())
    assert total == 165  # docs/architecture.md, "Bounded concurrency"
    # The defaults deploy in an account with the default quota (1,000), which keeps 100
    # unreserved.
    assert total <= 900


def test_reserved_concurrency_switches_off_per_function_and_for_a_small_account(
    template: Template,
) -> None:
    # Lambda keeps 100 executions unreserved: an account whose quota is below the sum plus
    # 100 (a new account's can be 10) cannot deploy any reservation at all.
    parameters = template.sam["Parameters"]
    for name in set(RESERVED_CONCURRENCY.values()):
        assert parameters[name]["MinValue"] == 0, name  # 0: none reserved
    off = _deployed(template, "ReservedConcurrentExecutions", ParseTier1ReservedConcurrency="0")
    assert "ParseTier1Function" not in off  # not a reservation of 0, which would stop it
    assert set(off) == set(RESERVED_CONCURRENCY) - {"ParseTier1Function"}
    steps_off = _deployed(template, "ReservedConcurrentExecutions", StepReservedConcurrency="0")
    assert set(steps_off) == set(RESERVED_CONCURRENCY) - {
        "MergeFunction",
        "ProjectFunction",
        "DetectFunction",
    }
    assert _deployed(template, "ReservedConcurrentExecutions", AccountProfile="small") == {}
    assert set(parameters["AccountProfile"]["AllowedValues"]) == {"standard", "small"}
    assert parameters["AccountProfile"]["Default"] == "standard"


def test_a_small_account_deploys_every_function_within_3008_mb(template: Template) -> None:
    # New accounts are capped at 3008 MB per function ("'MemorySize' value failed to
    # satisfy constraint: Member must have value less than or equal to 3008"): the stack
    # would roll back.
    small = {
        lid: int(mb)
        for lid, mb in _deployed(template, "MemorySize", AccountProfile="small").items()
    }
    assert max(small.values()) <= 3008, small
    assert [small[logical_id] for logical_id in PARSE_TIERS] == [3008, 3008, 3008]
    # The standard profile keeps the parameters' tiers.
    standard = _deployed(template, "MemorySize")
    parameters = template.sam["Parameters"]
    for tier, logical_id in enumerate(PARSE_TIERS, start=1):
        assert standard[logical_id] == str(parameters[f"ParseTier{tier}MemoryMB"]["Default"])
    # Under the profile the tier parameters are ignored, a smaller tier 1 too: one rule.
    assert (
        _deployed(template, "MemorySize", AccountProfile="small", ParseTier1MemoryMB="2048")[
            "ParseTier1Function"
        ]
        == 3008
    )


def test_the_starter_scales_to_a_bounded_concurrency(template: Template) -> None:
    mapping = _mappings(template)["StarterFunction"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "StarterMaximumConcurrency"}}
    assert template.sam["Parameters"]["StarterMaximumConcurrency"]["MinValue"] == 2  # AWS's minimum


# ---- least privilege ------------------------------------------------------------------------

# What a deleted job's purge needs: list and delete its artifacts, end a digest's lease.
PURGE_ACTIONS = {"s3:ListBucket", "s3:DeleteObject", "dynamodb:DeleteItem"}
EXPECTED_ACTIONS = {
    # Also deletes the jobs of removed source objects (a delete marker: listing versions).
    # The tags that travel with the results (MetadataPrefix).
    "StarterFunctionRole": {
        "s3:GetObject",
        "s3:GetObjectVersion",
        "s3:GetObjectTagging",
        "s3:GetObjectVersionTagging",
        "s3:ListBucket",
        "s3:ListBucketVersions",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        *PURGE_ACTIONS,
    },
    # Admission: the ledger, the tenants, the waiting jobs (and their minutely count, a
    # Scan of the backlog index); the admitted runs' executions; the stream mapping's
    # failure destination.
    "DispatcherFunctionRole": {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:Scan",
        "states:StartExecution",
        "sqs:SendMessage",
    },
    # Reads the source object and records attempts; writes no artifact.
    "PlanFunctionRole": {
        "s3:GetObject",
        "s3:GetObjectVersion",
        "s3:ListBucket",
        "s3:ListBucketVersions",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    # Reads the shards' DoclingDocuments and writes the merged one; never the source. A
    # merge that finds its job deleted deletes what it wrote (the digest's lease too).
    "MergeFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "s3:AbortMultipartUpload",
        "s3:ListBucket",
        "s3:DeleteObject",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:DeleteItem",
    },
    **{
        f"{tier}Role": {
            "s3:GetObject",
            "s3:GetObjectVersion",
            "s3:PutObject",
            "s3:AbortMultipartUpload",
            "s3:ListBucket",
            "s3:ListBucketVersions",
            "s3:DeleteObject",
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:Query",
            "dynamodb:DeleteItem",
        }
        for tier in PARSE_TIERS
    },
    "ProjectFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "s3:AbortMultipartUpload",
        "s3:ListBucket",
        "s3:DeleteObject",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    "DetectFunctionRole": {
        "s3:GetObject",
        "s3:PutObject",
        "s3:AbortMultipartUpload",
        "s3:ListBucket",
        "s3:DeleteObject",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    },
    # The reconciler also purges a deleted job's artifacts when its execution ends.
    # The shards' slots and the sweep's audit of them read the ledger's holders' jobs and
    # the tenants' shares (BatchGetItem) and the backlogs in the lane.
    "RecordsFunctionRole": {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "sqs:SendMessage",
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        *PURGE_ACTIONS,
    },
    # Reads the jobs of a document's versions, keeps its manifest and the outputs it names,
    # publishes the event; the failed batches' records go to its OnFailure bucket (reading
    # the stream is the managed AWSLambdaDynamoDBExecutionRole's).
    "NotifierFunctionRole": {
        "events:PutEvents",
        "s3:ListBucket",
        "s3:ListBucketVersions",
        "s3:GetObject",
        "s3:PutObject",
        "s3:DeleteObject",
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
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


# What the operator commands call (tests/e2e/test_operator_policy_e2e.py checks every
# call of a run of them against the deployed policy), by statement.
OPERATOR_ACTIONS = {
    "FindTheStack": {"cloudformation:DescribeStacks"},
    "JobRecords": {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:Query",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:DeleteItem",
    },
    "Backlog": {"dynamodb:Scan"},
    "Sources": {"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObjectVersion"},
    "ListSources": {"s3:ListBucket", "s3:ListBucketVersions"},
    "Artifacts": {"s3:GetObject", "s3:DeleteObject"},
    "ListArtifacts": {"s3:ListBucket"},
    "DeadLetters": {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:GetQueueAttributes",
        "sqs:StartMessageMoveTask",
    },
    "NextRuns": {"sqs:SendMessage"},
    "Executions": {
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        "states:DescribeStateMachineForExecution",
        "states:StopExecution",
    },
    "Definition": {"states:DescribeStateMachine"},
    "NotifyFailures": {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:ChangeMessageVisibility",
        "sqs:GetQueueAttributes",
    },
    "NotifyFailureRecords": {"s3:GetObject", "s3:ListBucket"},
    "EventLog": {"logs:FilterLogEvents"},
    "Republish": {"events:PutEvents"},
    "Manifests": {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
}


# What an application needs to consume results (tests/e2e/test_consumers_e2e.py reads
# them with the reader and a rule of its own under this policy), by statement.
CONSUMER_ACTIONS = {
    "ReadResults": {"s3:GetObject"},
    "ListResults": {"s3:ListBucket"},
    "Subscribe": {
        "events:PutRule",
        "events:DeleteRule",
        "events:DescribeRule",
        "events:PutTargets",
        "events:RemoveTargets",
        "events:ListTargetsByRule",
    },
    "Bus": {"events:DescribeEventBus"},
    "ListRules": {"events:ListRules"},
    "Replay": {"events:StartReplay", "events:DescribeReplay", "events:DescribeArchive"},
    "EventLog": {"logs:FilterLogEvents", "logs:GetLogEvents", "logs:DescribeLogStreams"},
    "FindTheStack": {"cloudformation:DescribeStacks"},
}


def test_the_stack_ships_a_consumer_policy_that_reads_results_and_receives_events(
    template: Template,
) -> None:
    policy = template.resources["ConsumerPolicy"]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy"
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {s["Sid"]: set(_actions(s)) for s in statements} == CONSUMER_ACTIONS
    for statement in statements:
        # "*" only where the action is authorized on no resource at all.
        resource_less = statement["Sid"] == "ListRules"
        assert statement["Effect"] == "Allow", statement
        assert (statement["Resource"] == "*") is resource_less, statement
    # Nothing of the pipeline's own: no records, queues, sources or executions; no
    # PutEvents (a replay is put on the bus by EventBridge): no forged event reaches the
    # other consumers.
    granted = {a for s in statements for a in _actions(s)}
    assert not any(a.startswith(("dynamodb:", "sqs:", "states:")) for a in granted)
    assert "events:PutEvents" not in granted
    by_sid = {s["Sid"]: s for s in statements}
    assert by_sid["ReadResults"]["Resource"] == {"Fn::Sub": "${ArtifactBucket.Arn}/documents/*"}
    # Rules of the consumers' own prefix only: never the stack's event-log rule.
    rules = by_sid["Subscribe"]["Resource"]["Fn::Sub"]
    assert rules.endswith(":rule/${EventBus}/${ConsumerRulePrefix}*")
    # StartReplay is authorized on the archive, the bus replayed into and the replay.
    replay = by_sid["Replay"]["Resource"]
    assert {"Fn::GetAtt": ["EventArchive", "Arn"]} in replay
    assert {"Fn::GetAtt": ["EventBus", "Arn"]} in replay
    assert any(":replay/*" in r.get("Fn::Sub", "") for r in replay)
    assert template.sam["Outputs"]["ConsumerPolicyArn"]["Value"] == {"Ref": "ConsumerPolicy"}


def test_the_stack_ships_an_operator_policy_of_exactly_what_the_commands_call(
    template: Template,
) -> None:
    policy = template.resources["OperatorPolicy"]
    assert policy["Type"] == "AWS::IAM::ManagedPolicy"
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {s["Sid"]: set(_actions(s)) for s in statements} == OPERATOR_ACTIONS
    for statement in statements:
        assert statement["Effect"] == "Allow" and statement["Resource"] != "*", statement
    assert template.sam["Outputs"]["OperatorPolicyArn"]["Value"] == {"Ref": "OperatorPolicy"}


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
    assert queries["Resource"] == [
        {"Fn::Sub": "${JobsTable.Arn}/index/by-status"},
        {"Fn::Sub": "${JobsTable.Arn}/index/tenants-by-service"},
    ]
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
    assert [s["Resource"] for s in s3] == [
        {"Fn::Sub": "${IngestBucket.Arn}/*"},
        {"Fn::GetAtt": ["IngestBucket", "Arn"]},
    ]


SOURCE_OBJECTS = {"Fn::Sub": "${IngestBucket.Arn}/*"}


def test_every_role_that_reads_sources_may_list_them_so_a_missing_one_is_a_404(
    template: Template,
) -> None:
    # S3 answers GetObject/HeadObject of a missing key or version with 403 AccessDenied
    # unless the caller may s3:ListBucket the bucket (GetObject's "Permissions").
    readers = [
        role
        for role in EXPECTED_ACTIONS
        if any(
            s["Resource"] == SOURCE_OBJECTS and "s3:GetObjectVersion" in _actions(s)
            for s in _statements(template, role)
        )
    ]
    assert sorted(readers) == sorted(
        ["StarterFunctionRole", "PlanFunctionRole", *(f"{t}Role" for t in PARSE_TIERS)]
    )
    for role in readers:
        listing = {
            action
            for s in _statements(template, role)
            if s["Resource"] == {"Fn::GetAtt": ["IngestBucket", "Arn"]}
            for action in _actions(s)
        }
        assert listing == {"s3:ListBucket", "s3:ListBucketVersions"}, role


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


def test_the_small_profile_caps_the_shards_at_what_its_3008_mb_tiers_hold(
    template: Template,
) -> None:
    from richdoc_tools.local.cloudformation.intrinsics import parameters_resolver

    variables = template.resources["PlanFunction"]["Properties"]["Environment"]["Variables"]
    shards = {k: variables[k] for k in ("RICHDOC_SHARD_PAGES", "RICHDOC_MAX_SHARD_PAGES")}
    small = parameters_resolver(template, {"AccountProfile": "small"}).resolve(shards)
    assert small == {"RICHDOC_SHARD_PAGES": "50", "RICHDOC_MAX_SHARD_PAGES": "25"}
    standard = parameters_resolver(template, {}).resolve(shards)
    assert standard == {"RICHDOC_SHARD_PAGES": "50"}  # no cap: ShardPages as given


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


def test_the_plans_inspection_ends_before_its_function_times_out(template: Template) -> None:
    from richdoc.parse.plan_step import PLAN_RESERVE_S, plan_limits
    from richdoc.parse.settings import ParseLimits
    from richdoc.taxonomy import ResourceLimit

    # The plan shares the tiers' RICHDOC_TIMEOUT_S, which may exceed its own timeout.
    plan_timeout = _sam(template, "PlanFunction")["Timeout"]
    most = template.sam["Parameters"]["ParseTimeoutSeconds"]["MaxValue"]
    assert most > plan_timeout  # why plan_limits exists
    configured = ParseLimits(max_pages=2000, timeout_s=most, mem_ceiling_mb=1536)
    # An inspection that starts with the whole invocation left may take it less the
    # reserve (which covers the records after it) ...
    limits = plan_limits(configured, remaining_s=plan_timeout)
    assert limits.timeout_s == plan_timeout - PLAN_RESERVE_S >= 60
    # ... never more than configured, and nothing once the reserve is reached: a typed
    # ResourceLimit, never the platform's Sandbox.Timedout.
    assert plan_limits(configured.within(30), remaining_s=plan_timeout).timeout_s == 30
    with pytest.raises(ResourceLimit):
        plan_limits(configured, remaining_s=PLAN_RESERVE_S)
    assert plan_limits(configured, remaining_s=None) == configured  # the command line


def test_a_parse_tier_s_conversion_ends_before_its_function_times_out(
    template: Template,
) -> None:
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import PARSE_RESERVE_S

    most = template.sam["Parameters"]["ParseTimeoutSeconds"]["MaxValue"]
    configured = ParseLimits(max_pages=2000, timeout_s=most, mem_ceiling_mb=1536)
    for tier in PARSE_TIERS:
        timeout = _sam(template, tier)["Timeout"]
        # A conversion that starts after a 30 s download keeps the reserve for storing
        # its document and the records: the configured 840 s would not.
        started_late = configured.within_invocation(timeout - 30, PARSE_RESERVE_S, "parse")
        assert started_late.timeout_s == timeout - 30 - PARSE_RESERVE_S < most, tier
        assert configured.within_invocation(timeout, PARSE_RESERVE_S, "parse").timeout_s <= most


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
    return {n: s for n, s in _tasks(definition).items() if s["Resource"].endswith("FunctionArn}")}


def test_every_task_retries_transient_errors_with_backoff_and_jitter_only(
    definition: dict[str, Any],
) -> None:
    for name, state in _lambda_tasks(definition).items():
        throttles, inactive, transient = state["Retry"]
        retried = [*throttles["ErrorEquals"], *inactive["ErrorEquals"], *transient["ErrorEquals"]]
        assert sorted(retried) == sorted(TRANSIENT_NAMES), name  # each name in one retrier
        assert throttles["ErrorEquals"] == [THROTTLE], name
        assert inactive["ErrorEquals"] == list(PLATFORM_INACTIVE_FUNCTION_ERRORS), name
        assert transient["BackoffRate"] > 1 and transient["JitterStrategy"] == "FULL", name
        assert 1 < transient["MaxAttempts"] <= 6, name
    others = [s for s in _tasks(definition).values() if not s["Resource"].endswith("FunctionArn}")]
    # The only other task: the dead-letter send, which retries any SDK error.
    assert [s["Resource"] for s in others] == ["${SqsSendMessage}"]


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
        [transient] = [r for r in state["Retry"] if "Transient" in r["ErrorEquals"]]
        assert sum(_retry_delays(transient)) <= 60, name


def test_an_inactive_function_is_waited_for_longer_than_aws_waiters_wait(
    definition: dict[str, Any],
) -> None:
    # Lambda restores an Inactive function after the first invoke fails; AWS's SDK waiters
    # for a function to become Active give up after 5 minutes (FunctionActive: 60 x 5 s).
    # The retrier waits at least that long, un-jittered (a deterministic floor), and not
    # much more: a function that stays unavailable is dead-lettered as transient.
    for name, state in _lambda_tasks(definition).items():
        [inactive] = [
            r for r in state["Retry"] if r["ErrorEquals"] == list(PLATFORM_INACTIVE_FUNCTION_ERRORS)
        ]
        assert inactive.get("JitterStrategy", "NONE") == "NONE", name
        assert inactive["BackoffRate"] > 1, name
        assert 5 * 60 <= sum(_retry_delays(inactive)) <= 10 * 60, (name, _retry_delays(inactive))


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
        "Next": "ClaimShardSlots",
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
    # As many shards at once as the run holds slots (its claim after the plan).
    assert shards["MaxConcurrencyPath"] == "$.results.slots.max_concurrency"
    claim = definition["States"]["ClaimShardSlots"]
    assert claim["Parameters"]["wanted.$"] == "$.results.plan.max_concurrency"
    assert (claim["ResultPath"], claim["Next"]) == ("$.results.slots", SHARDS)
    assert _catch_target(claim, "States.ALL") == "ShardsOneAtATime"
    fallback = definition["States"]["ShardsOneAtATime"]
    assert fallback["Result"] == {"max_concurrency": 1} and fallback["Next"] == SHARDS
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
    # The shard's Parameters, each path read through the Map's ItemSelector (an
    # iteration's input), are the whole document's, and the page range.
    selector = definition["States"][SHARDS]["ItemSelector"]

    def through_the_map(key: str, value: Any) -> Any:
        return selector[value.removeprefix("$.") + ".$"] if key.endswith(".$") else value

    shard_parameters = {k: through_the_map(k, v) for k, v in shard["Parameters"].items()}
    assert shard_parameters.pop("pages.$") == "$$.Map.Item.Value"
    assert shard_parameters == whole["Parameters"]
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


def test_completion_events_go_on_the_stacks_bus_archived_and_logged(template: Template) -> None:
    resources = template.resources
    bus = resources["EventBus"]["Properties"]
    assert bus["Name"] == {"Fn::Sub": "richdoc-${AWS::StackName}"}
    archive = resources["EventArchive"]["Properties"]
    assert archive["SourceArn"] == {"Fn::GetAtt": ["EventBus", "Arn"]}
    assert archive["RetentionDays"] == {"Ref": "EventArchiveRetentionDays"}
    rule = resources["EventLogRule"]["Properties"]
    assert rule["EventBusName"] == {"Ref": "EventBus"}
    # A replay is logged once already: replayed events (they carry replay-name) are not.
    assert rule["EventPattern"]["replay-name"] == [{"exists": False}]
    # A log group target is named by its ARN without the ":*" of its Arn attribute.
    [target] = rule["Targets"]
    assert target["Arn"]["Fn::Sub"].endswith(":log-group:${EventLogGroup}")
    # One account-level policy covers every stack's event log (a region allows 10): made
    # by the first stack, kept when it goes, shared by the others.
    log_policy = resources["EventLogPolicy"]
    assert log_policy["Condition"] == "CreatesEventLogPolicy"
    assert log_policy["DeletionPolicy"] == "Retain"
    assert log_policy["Properties"]["PolicyName"] == "richdoc-event-logs"
    policy = json.loads(log_policy["Properties"]["PolicyDocument"]["Fn::Sub"])
    [statement] = policy["Statement"]
    assert "events.amazonaws.com" in statement["Principal"]["Service"]
    assert statement["Resource"].endswith(":log-group:/aws/events/richdoc-*:*")
    group = resources["EventLogGroup"]["Properties"]["LogGroupName"]
    assert group == {"Fn::Sub": "/aws/events/richdoc-${AWS::StackName}"}
    notifier = resources["NotifierFunction"]["Properties"]
    assert notifier["Environment"]["Variables"]["EVENT_BUS_NAME"] == {"Ref": "EventBus"}
    outputs = template.sam["Outputs"]
    assert {"EventBusName", "EventBusArn", "EventArchiveArn", "EventLogGroupName"} <= set(outputs)
    assert {"NotifyFailureQueueUrl", "NotifyFailureBucketName", "ConsumerPolicyArn"} <= set(outputs)
