"""``richdoc reprocess --contract-changed``: which successful runs ran under another
processor contract than today's, the parse's or the detection rule set."""

from __future__ import annotations

import boto3
import pytest
from richdoc_tools.ops.operator import Operator, StackResources
from richdoc_tools.ops.reprocess import contract_changed, deployed_rules

from richdoc.artifacts import docling_key
from richdoc.contracts import JobOutputs
from richdoc.formats import DocFormat
from richdoc.jobs import Job, JobStatus
from richdoc.parse.settings import Pipeline, processor_contract
from tests.support.records import OUTPUTS, SOURCE

TODAY = docling_key("ab" * 32, processor_contract(DocFormat.DOCX, Pipeline.SIMPLE))


def succeeded(*, docling: str = TODAY, detection_rules: str | None) -> Job:
    outputs = JobOutputs.model_validate({**OUTPUTS.model_dump(), "docling_key": docling})
    return Job(
        job_id="job-1",
        status=JobStatus.SUCCEEDED,
        run=1,
        pipeline="simple",
        source=SOURCE,
        outputs=outputs,
        detection_rules=detection_rules,
    )


def test_a_run_under_todays_parse_and_the_deployed_rule_set_is_unchanged() -> None:
    assert not contract_changed(succeeded(detection_rules="contracts-v2"), "contracts-v2")


def test_a_run_detected_under_another_rule_set_changed() -> None:
    assert contract_changed(succeeded(detection_rules="spec-v1"), "contracts-v2")
    assert contract_changed(succeeded(detection_rules="contracts-v2"), "spec-v1")


@pytest.mark.parametrize(("deployed", "changed"), [("spec-v1", False), ("contracts-v2", True)])
def test_a_record_made_before_rule_sets_were_recorded_ran_spec_v1(
    deployed: str, changed: bool
) -> None:
    assert contract_changed(succeeded(detection_rules=None), deployed) is changed


def test_a_run_parsed_under_another_contract_changed_whatever_its_rule_set() -> None:
    old = docling_key("ab" * 32, "0123456789abcdef")
    assert contract_changed(succeeded(docling=old, detection_rules="contracts-v2"), "contracts-v2")


OUTPUT_NAMES = (
    "IngestBucketName",
    "ArtifactBucketName",
    "IngestQueueUrl",
    "IngestQueueArn",
    "DeadLetterQueueUrl",
    "DeadLetterQueueArn",
    "JobsTableName",
    "StateMachineArn",
)


def operator(parameters: dict[str, str]) -> Operator:
    resources = StackResources.from_outputs(
        "richdoc", {name: name.lower() for name in OUTPUT_NAMES}, parameters
    )
    return Operator(boto3.Session(region_name="us-east-1"), resources)


def test_the_deployed_rule_set_is_the_stacks_parameter() -> None:
    assert deployed_rules(operator({"DetectionRules": "spec-v1"})) == "spec-v1"
    assert deployed_rules(operator({"DetectionRules": "contracts-v2"})) == "contracts-v2"


def test_a_stack_deployed_before_the_parameter_runs_spec_v1() -> None:
    assert deployed_rules(operator({"OcrMode": "auto"})) == "spec-v1"
