"""``richdoc deploy check``'s reading of an upgrade (richdoc_tools.upgrades): from the
template before admission it names the two indexes the jobs table would gain in one
update, which CloudFormation refuses, and proposes the template's own steps, each an
update AWS accepts; from the previous release nothing is refused; a replaced table, a
changed index, a removed table and a removed output are named."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from richdoc_tools.local.cloudformation.template import Template
from richdoc_tools.preflight import Status
from richdoc_tools.upgrades import (
    CONSUMER_OUTPUTS,
    assess_upgrade,
    index_readiness,
    state_of,
    stepped,
    upgrade_steps,
)
from samtranslator.yaml_helper import yaml_parse

from tests.support.paths import ROOT
from tests.support.releases import (
    BEFORE_ADMISSION,
    PREVIOUS_RELEASE,
    RELEASE_COMMITS,
    tagged_commit,
    template_at,
)


def _assess(previous: dict[str, Any], template: Template, **parameters: str) -> list[Any]:
    return assess_upgrade(previous, {}, template.sam, parameters, source="the previous")


def test_from_before_admission_it_names_the_two_indexes_and_the_steps(template: Template) -> None:
    previous = yaml_parse(template_at(BEFORE_ADMISSION))
    [finding] = _assess(previous, template)
    assert finding.status is Status.FAIL
    assert "JobsTable" in finding.says and "by-queue, tenants-by-service" in finding.says
    assert "Cannot perform more than one GSI creation or deletion in a single update" in (
        finding.says
    )
    assert finding.fix is not None
    steps = re.findall(r"\d\. sam deploy --parameter-overrides ([^(;]+)", finding.fix)
    assert [step.strip() for step in steps] == [
        "AdmissionIndexes=by-queue Admission=paused",
        "AdmissionIndexes=both Admission=paused",
        "AdmissionIndexes=both Admission=running",
    ]
    # The first step, given, is an update AWS accepts.
    [step] = _assess(previous, template, AdmissionIndexes="by-queue", Admission="paused")
    assert step.status is Status.OK


def test_the_template_s_steps_each_create_one_index_and_end_where_a_fresh_deploy_starts(
    template: Template,
) -> None:
    previous = state_of(yaml_parse(template_at(BEFORE_ADMISSION)), {})
    steps = stepped(previous, template.sam, {}, upgrade_steps(template.sam))
    assert steps is not None
    assert [created for _, created in steps] == [["by-queue"], ["tenants-by-service"], []]
    last = state_of(template.sam, steps[-1][0])
    assert last.tables == state_of(template.sam, {}).tables


@pytest.mark.parametrize("release", sorted(RELEASE_COMMITS))
def test_from_every_release_nothing_is_refused(template: Template, release: str) -> None:
    [finding] = _assess(yaml_parse(template_at(release)), template)
    assert finding.status is Status.OK, finding


def _changed(template: Template) -> dict[str, Any]:
    return copy.deepcopy(template.sam)


def test_a_key_schema_change_replaces_the_table(template: Template) -> None:
    previous = _changed(template)
    previous["Resources"]["JobsTable"]["Properties"]["KeySchema"] = [
        {"AttributeName": "pk", "KeyType": "HASH"}
    ]
    [finding] = _assess(previous, template)
    assert finding.status is Status.FAIL
    assert "KeySchema changed, which replaces the table" in finding.says


def test_an_index_that_changes_under_its_name_is_refused(template: Template) -> None:
    previous = _changed(template)
    indexes = previous["Resources"]["JobsTable"]["Properties"]["GlobalSecondaryIndexes"]
    indexes[1]["Projection"] = {"ProjectionType": "ALL"}
    [finding] = _assess(previous, template)
    assert finding.status is Status.FAIL and "projection of by-queue changes" in finding.says


def test_a_table_gone_from_the_template_is_named(template: Template) -> None:
    previous = _changed(template)
    previous["Resources"]["OtherTable"] = copy.deepcopy(previous["Resources"]["JobsTable"])
    [finding] = _assess(previous, template)
    assert finding.status is Status.FAIL
    assert "OtherTable is not in the new template" in finding.says
    assert "kept by its DeletionPolicy" in finding.says


@pytest.mark.parametrize(
    ("output", "status"), [("EventBusName", Status.FAIL), ("StateMachineConsoleUrl", Status.WARN)]
)
def test_a_removed_output_fails_when_consumers_read_it(
    template: Template, output: str, status: Status
) -> None:
    current = copy.deepcopy(template.sam)
    del current["Outputs"][output]
    findings = assess_upgrade(template.sam, {}, current, {}, source="the previous")
    [removed] = [f for f in findings if output in f.says]
    assert removed.status is status


def test_the_consumer_outputs_are_the_ones_the_consumers_page_names(template: Template) -> None:
    outputs = set(template.sam["Outputs"])
    assert outputs >= CONSUMER_OUTPUTS
    page = (ROOT / "docs" / "consumers.md").read_text()
    named = {name for name in re.findall(r"`([A-Za-z]+)`", page) if name in outputs}
    assert named <= CONSUMER_OUTPUTS


def test_an_index_still_building_stops_the_next_step() -> None:
    building = index_readiness({"by-status": "ACTIVE", "by-queue": "CREATING"})
    assert building.status is Status.FAIL and "by-queue is CREATING" in building.says
    assert building.fix is not None and "describe-table" in building.fix
    assert index_readiness({"by-status": "ACTIVE"}).status is Status.OK


def test_each_release_tag_names_the_commit_the_upgrade_tests_fall_back_to() -> None:
    # A clone without tags deploys the release from its commit; with the tag, both agree.
    for tag, commit in RELEASE_COMMITS.items():
        found = tagged_commit(tag)
        assert found in (None, commit), f"{tag} names {found}, not {commit}"
    assert PREVIOUS_RELEASE in RELEASE_COMMITS
