"""Injected faults (richdoc_tools.local.faults.injected): decided by what the work is, the same
for the same seed whatever the order or timing, at the rate asked for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from richdoc_tools.local.faults.injected import (
    TIMEOUT_ESCALATES,
    FaultInjector,
    FaultKind,
    FaultSettings,
    FaultsUsageError,
    Integration,
    integration_of,
)
from richdoc_tools.local.requests.service_errors import ServiceErrorResponse
from richdoc_tools.local.requests.service_request import ServiceRequest


def test_settings_parse_a_rate_and_an_optional_seed() -> None:
    assert FaultSettings.parse("0.05") == FaultSettings(rate=0.05, seed=0)
    assert FaultSettings.parse("0.05, seed=7") == FaultSettings(rate=0.05, seed=7)
    for bad in ("", "x", "1.5", "-0.1", "0.1,seed=x", "0.1,rate=2"):
        with pytest.raises(FaultsUsageError):
            FaultSettings.parse(bad)


def _request(invocation_id: str, service: str = "dynamodb") -> ServiceRequest:
    return ServiceRequest(
        service=service,
        operation="UpdateItem",
        region="us-east-1",
        access_key_id="k",
        invocation_id=invocation_id,
        method="POST",
    )


def _faults_of(injector: FaultInjector, key: str, calls: int) -> list[str]:
    """The outcome of each of an invocation's calls: '' or the error code."""
    invocation = injector.begin("ProjectFunction", key, "")
    outcomes = []
    for _ in range(calls):
        try:
            injector.check(_request(invocation.id), on_own_thread=False)
            outcomes.append("")
        except ServiceErrorResponse as error:
            outcomes.append(error.error_code)
    injector.end(invocation)
    return outcomes


def test_the_same_seed_and_work_give_the_same_faults_in_any_order() -> None:
    keys = [f"doc-{i}.pdf" for i in range(40)]
    first = FaultInjector(FaultSettings(rate=0.2, seed=7))
    forward = {key: _faults_of(first, key, 20) for key in keys}
    second = FaultInjector(FaultSettings(rate=0.2, seed=7))
    backward = {key: _faults_of(second, key, 20) for key in reversed(keys)}
    assert forward == backward
    other_seed = FaultInjector(FaultSettings(rate=0.2, seed=8))
    assert {key: _faults_of(other_seed, key, 20) for key in keys} != forward


def test_faults_come_at_about_the_rate_asked_for_and_never_at_rate_zero() -> None:
    injector = FaultInjector(FaultSettings(rate=0.05, seed=1))
    outcomes = [o for i in range(400) for o in _faults_of(injector, f"k{i}", 10)]
    share = sum(1 for o in outcomes if o) / len(outcomes)
    assert 0.03 < share < 0.07
    assert set(outcomes) <= {
        "",
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "InternalServerError",
    }
    none = FaultInjector(FaultSettings(rate=0.0, seed=1))
    assert not any(o for i in range(50) for o in _faults_of(none, f"k{i}", 10))


def test_a_retried_invocation_draws_anew() -> None:
    injector = FaultInjector(FaultSettings(rate=0.5, seed=3))
    attempts = [_faults_of(injector, "same.pdf", 12) for _ in range(6)]
    assert len({tuple(a) for a in attempts}) > 1
    assert injector.retried_invocations == 5


def test_invocation_faults_fit_who_invoked() -> None:
    injector = FaultInjector(FaultSettings(rate=1.0, seed=0))
    kinds_by_integration: dict[Integration, set[FaultKind]] = {i: set() for i in Integration}
    for i in range(200):
        for integration in Integration:
            invocation = injector.begin("ParseTier3Function", f"k{i}", "")
            fault = injector.invocation_fault(invocation, "ParseTier3Function", integration)
            assert fault is not None
            kinds_by_integration[integration].add(fault.kind)
            if fault.kind is FaultKind.CRASH:
                # the top tier's timeout is a real resource limit: never pretended
                assert fault.error_type == "Lambda.ServiceException"
                assert fault.crash_at >= 1
            injector.end(invocation)
    assert FaultKind.DROPPED not in kinds_by_integration[Integration.ASYNC]
    assert FaultKind.DROPPED in kinds_by_integration[Integration.TASK]


def test_the_tiers_whose_timeout_escalates_are_those_the_definition_escalates(
    definition: dict[str, Any],
) -> None:
    escalating = set()
    substitutions = {
        "${ParseTier1FunctionArn}": "ParseTier1Function",
        "${ParseTier2FunctionArn}": "ParseTier2Function",
        "${ParseTier3FunctionArn}": "ParseTier3Function",
    }

    def walk(states: dict[str, Any]) -> None:
        for state in states.values():
            for catch in state.get("Catch", []):
                if "Sandbox.Timedout" in catch["ErrorEquals"] and catch["Next"].startswith(
                    "Escalate"
                ):
                    escalating.add(substitutions[state["Resource"]])
            if state.get("Type") == "Map":
                walk(state["ItemProcessor"]["States"])

    walk(definition["States"])
    assert escalating == TIMEOUT_ESCALATES


def test_an_invocation_is_known_by_its_events_work() -> None:
    injector = FaultInjector()
    sqs_event = {
        "Records": [
            {
                "eventSource": "aws:sqs",
                "body": json.dumps({"Records": [{"s3": {"object": {"key": "a+b%C3%A9.pdf"}}}]}),
            }
        ]
    }
    assert integration_of(sqs_event) is Integration.QUEUE
    assert injector.work_of("StarterFunction", sqs_event) == ("StarterFunction", "a bé.pdf", "")
    execution_input = {"job_id": "j1", "run": 1, "source": {"key": "x.pdf"}}
    assert injector.learn_job(execution_input) == "x.pdf"
    records = {"job_id": "j1", "run": 1, "action": "start"}
    assert integration_of(records) is Integration.TASK
    assert injector.work_of("RecordsFunction", records) == ("RecordsFunction:start", "x.pdf", "")
    shard = {"job_id": "j1", "source": {"key": "x.pdf"}, "pages": {"start": 51, "end": 100}}
    assert injector.work_of("ParseTier1Function", shard) == (
        "ParseTier1Function",
        "x.pdf",
        "51-100",
    )
    sweep = {"detail-type": "Scheduled Event", "detail": {}}
    assert integration_of(sweep) is Integration.ASYNC
    assert injector.work_of("RecordsFunction", sweep) == ("RecordsFunction:sweep", "", "")
    image = {"sk": {"S": "JOB"}, "source": {"M": {"key": {"S": "z.pdf"}}}}
    stream = {"Records": [{"eventSource": "aws:dynamodb", "dynamodb": {"NewImage": image}}]}
    assert integration_of(stream) is Integration.STREAM
    assert injector.work_of("NotifierFunction", stream) == ("NotifierFunction", "z.pdf", "")
