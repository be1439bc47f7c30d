"""The state machine definition and the contract models agree on every name.

``statemachine/pipeline.asl.json`` moves JSON between the Lambdas; ``richdoc.contracts``
types it. This test walks every route of the definition (each Task's success and each
Catch, every Choice branch, every route through a Map state's iterator and out through
its Catch) with sample data built from the models: the starter's ``ExecutionInput``
first, then each Lambda's output model (or ``CaughtError`` on a Catch) put at its
``ResultPath``; a Map state's items are selected into each iteration's input, and what
an iteration ends with becomes the Map's result list. Along the way every JSONPath the
definition reads (Parameters values, ResultSelector, ItemSelector, Choice variables,
CausePath, the dead-letter message) must exist in the data the route has accumulated, and
every Task's Parameters must build exactly the input model of the Lambda it invokes (no
key the model does not know, every required field present, the right types). Each route
runs twice: optional fields filled, and left null.

A field renamed on one side only (a model field, a Parameters key, a path) fails here;
the tests at the end prove that on mutated copies.
"""

from __future__ import annotations

import copy
import json
import re
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError
from richdoc_tools.local.cloudformation.template import Template
from richdoc_tools.ops.statemachine import Machine, State, TransitionKind

from richdoc.contracts import (
    DETECT,
    MERGE,
    PARSE,
    PLAN,
    PROJECT,
    Contract,
    ExecutionInput,
    JobDecision,
    ParseInput,
    ParseOutput,
    PlanOutput,
    StageContract,
    StageInput,
)
from richdoc.records.calls import RECORDS_ACTION, CaughtError, MessageAttribute

# The dead-letter send: the sqs:sendMessage integration, its ARN substituted whole.
SEND_MESSAGE = "${SqsSendMessage}"
# Which contract each function's code implements (by its directory under functions/ and its
# handler function there: the plan is a second handler of the parse image).
STAGE_CONTRACTS: dict[str, StageContract[Any, Any]] = {
    "parse": PARSE,
    "parse.plan": PLAN,
    "merge": MERGE,
    "project": PROJECT,
    "detect": DETECT,
}
RECORDS_CODE = "records"
# Output fields a step fills from its input (the models cannot say it): a parse of a
# shard's pages answers with that page range (tests/parse/test_parse_shards.py shows it does).
ECHOED: dict[str, dict[str, str]] = {"parse": {"pages": "page_range"}}
CONTEXT = {  # the Step Functions context object ($$)
    "Execution": {
        "Id": "arn:aws:states:us-east-1:123456789012:execution:pipeline:job-r1",
        "Name": "job-r1",
        "StartTime": "2026-01-01T00:00:00Z",
        "RoleArn": "arn:aws:iam::123456789012:role/pipeline",
    },
    "StateMachine": {
        "Id": "arn:aws:states:us-east-1:123456789012:stateMachine:pipeline",
        "Name": "pipeline",
    },
    "State": {"Name": "state", "EnteredTime": "2026-01-01T00:00:00Z", "RetryCount": 0},
}
Json = Any  # a JSON value as json.loads returns it


class Violation(Exception):
    """The definition and the models disagree."""


# ---- sample data from the models ------------------------------------------------------------


def sample(annotation: Any, *, full: bool) -> Json:
    """A JSON value the annotation accepts; optional fields are filled when ``full``,
    null otherwise (a path through them must then still resolve)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        data = {
            info.alias or name: sample(info.annotation, full=full)
            for name, info in annotation.model_fields.items()
        }
        return annotation.model_validate(data).model_dump(mode="json", by_alias=True)
    if origin is Annotated:
        return sample(args[0], full=full)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if not full and len(options) < len(args):
            return None
        return sample(options[0], full=full)
    if origin is Literal:
        return args[0]
    if origin is list:
        return [sample(args[0], full=full)]
    if origin is dict:
        return {"name": sample(args[1], full=full)}
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return next(iter(annotation)).value
    scalars: dict[Any, Json] = {str: "text", int: 1, float: 0.5, bool: True}
    return scalars[annotation]


# ---- JSONPath, as the definition uses it -------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def resolve(path: str, data: Json, context: Json = CONTEXT) -> Json:
    """``$``, ``$.a.b`` on the state's data, ``$$.a.b`` on the context object."""
    if path == "$":
        return data
    if not path.startswith(("$.", "$$.")):
        raise Violation(f"{path}: only $.name.name and $$.name.name paths are modelled")
    node, parts = (context, path[3:]) if path.startswith("$$.") else (data, path[2:])
    for part in parts.split("."):
        if not _NAME.fullmatch(part):
            raise Violation(f"{path}: only $.name.name and $$.name.name paths are modelled")
        if not isinstance(node, dict) or part not in node:
            raise Violation(f"{path}: nothing at {part!r} (have {_keys(node)})")
        node = node[part]
    return node


def _keys(node: Json) -> str:
    return ", ".join(sorted(node)) if isinstance(node, dict) else type(node).__name__


def put(data: Json, path: str | None, value: Json) -> Json:
    """Apply a ResultPath: null keeps the input, ``$`` replaces it, ``$.a.b`` sets a field."""
    if path is None:
        return data
    if path == "$":
        return value
    parts = path.removeprefix("$.").split(".")
    if not path.startswith("$.") or not all(_NAME.fullmatch(p) for p in parts):
        raise Violation(f"ResultPath {path}: only $.name.name paths are modelled")
    result = copy.deepcopy(data)
    node = result
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise Violation(f"ResultPath {path}: {part!r} is not an object")
    node[parts[-1]] = value
    return result


def build(template: Json, data: Json, context: Json = CONTEXT) -> Json:
    """Evaluate a Parameters (ResultSelector, ItemSelector) template against ``data``."""
    if isinstance(template, dict):
        built = {}
        for key, value in template.items():
            if key.endswith(".$"):
                if not isinstance(value, str) or not value.startswith("$"):
                    raise Violation(f"{key}: intrinsic functions are not modelled: {value!r}")
                built[key[:-2]] = resolve(value, data, context)
            else:
                built[key] = build(value, data, context)
        return built
    if isinstance(template, list):
        return [build(v, data, context) for v in template]
    return template


# ---- what a Task's resource accepts and answers ------------------------------------------------


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside ``M``, ``M | None``, ``list[M]`` or ``dict[str, M]`` (True for the
    collections)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if origin in (Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return (models[0], False) if len(models) == 1 else (None, False)
    element = args[-1] if origin in (dict, list) else None
    if isinstance(element, type) and issubclass(element, BaseModel):
        return element, True
    return None, False


def unknown_keys(model: type[BaseModel], payload: Json, where: str) -> list[str]:
    """Keys the model would silently ignore (its fields ignore extras, so check here)."""
    if not isinstance(payload, dict):
        return []
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    problems = []
    for key, value in payload.items():
        if key not in fields:
            problems.append(f"{where}.{key} is not a field of {model.__name__}")
            continue
        nested, collection = _model_in(fields[key].annotation)
        if nested is not None and collection and isinstance(value, dict | list):
            members = value.items() if isinstance(value, dict) else enumerate(value)
            for name, item in members:
                problems += unknown_keys(nested, item, f"{where}.{key}.{name}")
        elif nested is not None:
            problems += unknown_keys(nested, value, f"{where}.{key}")
    return problems


def _validated(validate: Callable[[str], BaseModel], payload: Json, what: str) -> BaseModel:
    try:
        # Strict, from JSON: what the Lambda runtime hands the handler, no coercion.
        return validate(json.dumps(payload))
    except ValidationError as exc:
        raise Violation(f"{what} rejects the Parameters {payload}: {exc}") from exc


def _checked(model: type[BaseModel], payload: Json, what: str) -> BaseModel:
    problems = unknown_keys(model, payload, "Parameters")
    if problems:
        raise Violation(f"{what}: " + "; ".join(problems))
    return _validated(lambda raw: model.model_validate_json(raw, strict=True), payload, what)


class SendMessageParameters(BaseModel):
    """The sqs:sendMessage integration's Parameters (SendMessage API names)."""

    model_config = ConfigDict(extra="forbid")

    QueueUrl: str
    MessageBody: str
    MessageAttributes: dict[str, MessageAttribute] = {}


@dataclass
class Contracts:
    """How the walk answers each Task: the models of the code behind each resource."""

    template: Template
    stages: dict[str, StageContract[Any, Any]] = field(default_factory=lambda: STAGE_CONTRACTS)
    records_outputs: dict[str, type[Contract]] | None = None  # by action; None: the models'

    def code_of(self, resource: str) -> str:
        """The invoked code: its directory under functions/, and ``.<function>`` when its
        handler is not the directory's ``app.handler``."""
        match = re.fullmatch(r"\$\{(\w+)\}", resource)
        substitutions = self.template.sam["Resources"]["PipelineStateMachine"]["Properties"][
            "DefinitionSubstitutions"
        ]
        if match is None or match[1] not in substitutions:
            raise Violation(f"Resource {resource} is not a DefinitionSubstitutions placeholder")
        logical_id, attribute = substitutions[match[1]]["Fn::GetAtt"]
        assert attribute == "Arn"
        source = self.template.handlers[logical_id]
        code = source.code_dir.name
        return code if source.handler == "app.handler" else f"{code}.{source.function_name}"

    def answer(self, resource: str, payload: Json, *, full: bool) -> Json:
        """Check the Task's Parameters against the invoked code's input model; return a
        sample of what that code answers."""
        if resource == SEND_MESSAGE:
            _checked(SendMessageParameters, payload, "sqs:sendMessage")
            return {"MessageId": "m-1", "MD5OfMessageBody": "0" * 32}
        code = self.code_of(resource)
        if code == RECORDS_CODE:
            action = _validated(
                lambda raw: RECORDS_ACTION.validate_json(raw, strict=True), payload, "records"
            )
            problems = unknown_keys(type(action), payload, "Parameters")
            if problems:
                raise Violation(f"records ({type(action).__name__}): " + "; ".join(problems))
            outputs = self.records_outputs or {}
            result = outputs.get(str(payload["action"]), getattr(type(action), "result"))  # noqa: B009 (a ClassVar of every action model)
            return sample(result, full=full)
        if code not in self.stages:
            raise Violation(f"functions/{code}: no contract is known for it")
        contract = self.stages[code]
        _checked(contract.input, payload, f"{contract.input.__name__} (functions/{code})")
        answer = sample(contract.output, full=full)
        for given, answered in ECHOED.get(code, {}).items():
            if given in payload:
                answer[answered] = payload[given]
        return answer


# ---- the walk -----------------------------------------------------------------------------------


@dataclass
class Walk:
    problems: dict[str, str] = field(default_factory=dict)  # problem -> one route showing it
    visited: set[str] = field(default_factory=set)  # "Map/State" inside a Map's iterator
    routes: int = 0


class Ended:
    """Where a state hands over when it ends its state machine (or its iteration)."""


END = Ended()
Handover = tuple[str | Ended | None, Json]  # next state (END: ended with this output; None: failed)
Iterate = Callable[[str, Json], list[Json]]  # a Map state's name and an item


def _choice_paths(rule: Mapping[str, Any]) -> Iterator[str]:
    if "Variable" in rule:
        yield rule["Variable"]
    for key, value in rule.items():
        if key.endswith("Path") and isinstance(value, str):
            yield value
    for nested in (
        *rule.get("And", ()),
        *rule.get("Or", ()),
        *([rule["Not"]] if "Not" in rule else []),
    ):
        yield from _choice_paths(nested)


def _next(state: State) -> str | Ended:
    return state.next or END


def _step(
    state: State,
    data: Json,
    contracts: Contracts,
    *,
    full: bool,
    context: Json,
    iterate: Iterate,
) -> list[Handover]:
    """The states a state can hand over to, each with the data it hands over."""
    kind, name, spec = state.type, state.name, state.definition  # spec: what it does, as written
    effective = resolve(spec.get("InputPath", "$"), data, context)
    caught = sample(CaughtError, full=full)
    catches: list[Handover] = [
        (catch.target, put(data, catch.result_path, caught)) for catch in state.catches
    ]
    if kind == "Task":
        payload = (
            build(spec["Parameters"], effective, context) if "Parameters" in spec else effective
        )
        result = contracts.answer(spec["Resource"], payload, full=full)
        if "ResultSelector" in spec:
            result = build(spec["ResultSelector"], result, context)
        output = put(data, spec.get("ResultPath", "$"), result)
        return [(_next(state), resolve(spec.get("OutputPath", "$"), output, context)), *catches]
    if kind == "Map":
        items = resolve(spec["ItemsPath"], effective, context)
        if not isinstance(items, list) or not items:
            raise Violation(f"ItemsPath {spec['ItemsPath']} is not a list of items: {items!r}")
        if "MaxConcurrencyPath" in spec:
            concurrency = resolve(spec["MaxConcurrencyPath"], effective, context)
            if not isinstance(concurrency, int) or isinstance(concurrency, bool):
                raise Violation(f"MaxConcurrencyPath is not an integer: {concurrency!r}")
        item_context = {**context, "Map": {"Item": {"Value": items[0], "Index": 0}}}
        item = (
            build(spec["ItemSelector"], effective, item_context)
            if "ItemSelector" in spec
            else items[0]
        )
        handovers: list[Handover] = []
        for ended in iterate(name, item):
            output = put(data, spec.get("ResultPath", "$"), [ended])
            handovers.append((_next(state), resolve(spec.get("OutputPath", "$"), output, context)))
        return [*handovers, *catches]
    if kind == "Pass":
        result = spec.get("Result", build(spec.get("Parameters", effective), effective, context))
        output = put(data, spec.get("ResultPath", "$"), result)
        return [(_next(state), resolve(spec.get("OutputPath", "$"), output, context))]
    if kind == "Choice":
        branches = [
            t
            for t in state.transitions
            if t.kind in (TransitionKind.CHOICE, TransitionKind.DEFAULT)
        ]
        for branch in branches:
            for path in _choice_paths(branch.rule or {}):
                resolve(path, data, context)
        return [(branch.target, data) for branch in branches]
    if kind == "Fail":
        for key in ("CausePath", "ErrorPath"):
            if key in spec:
                resolve(spec[key], data, context)
        return [(None, data)]
    if kind == "Succeed":
        return [(END, data)]
    raise Violation(f"{kind} states are not modelled by this test yet: teach _step about them")


def walk(definition: dict[str, Any], contracts: Contracts) -> Walk:
    result = Walk()

    def visit(
        machine: Machine,
        prefix: str,
        name: str,
        data: Json,
        route: tuple[str, ...],
        full: bool,
        context: Json,
        ended: list[Json],
    ) -> None:
        """Walk every route from ``name``; outputs the routes end with go to ``ended``."""
        qualified = prefix + name
        result.visited.add(qualified)
        route = (*route, qualified)
        if route.count(qualified) > 1:
            result.problems[f"a loop through {qualified} is not modelled"] = " -> ".join(route)
            return

        def iterate(map_name: str, item: Json) -> list[Json]:
            iterator = machine[map_name].iterator
            assert iterator is not None
            outputs: list[Json] = []
            visit(
                iterator,
                f"{prefix}{map_name}/",
                iterator.start_at,
                item,
                route,
                full,
                context,
                outputs,
            )
            distinct = {json.dumps(output, sort_keys=True): output for output in outputs}
            return list(distinct.values())

        try:
            handovers = _step(
                machine[name], data, contracts, full=full, context=context, iterate=iterate
            )
        except Violation as exc:
            result.problems.setdefault(f"{qualified}: {exc}", " -> ".join(route))
            return
        for next_name, handed in handovers:
            if isinstance(next_name, str):
                visit(machine, prefix, next_name, handed, route, full, context, ended)
                continue
            if isinstance(next_name, Ended):
                ended.append(handed)
            if not prefix:  # a route of the state machine itself ends here
                result.routes += 1

    machine = Machine.from_definition(definition)
    for full in (True, False):
        visit(
            machine,
            "",
            machine.start_at,
            sample(ExecutionInput, full=full),
            (),
            full,
            CONTEXT,
            [],
        )
    return result


def _report(result: Walk) -> str:
    return "\n".join(f"{problem}\n    route: {route}" for problem, route in result.problems.items())


# ---- the tests ---------------------------------------------------------------------------------


def test_every_route_of_the_definition_agrees_with_the_contract_models(
    definition: dict[str, Any], template: Template
) -> None:
    result = walk(definition, Contracts(template))
    assert result.problems == {}, _report(result)
    # every state was checked
    assert result.visited == Machine.from_definition(definition).qualified_names()
    assert any("/" in name for name in result.visited)  # the Map's iterator, too
    assert result.routes > 20  # both catch paths and the success path, per failure kind


def test_every_invoked_function_has_a_contract(
    definition: dict[str, Any], template: Template
) -> None:
    contracts = Contracts(template)
    invoked = {
        contracts.code_of(state.definition["Resource"])
        for _, state in Machine.from_definition(definition).walk()
        if state.type == "Task" and state.definition["Resource"] != SEND_MESSAGE
    }
    assert invoked == {*STAGE_CONTRACTS, RECORDS_CODE}


def test_every_stage_input_carries_the_common_fields() -> None:
    for contract in STAGE_CONTRACTS.values():
        assert issubclass(contract.input, StageInput), contract.name
        assert contract.input.model_config.get("frozen")


# ---- the check itself: a rename on one side only is caught ------------------------------------


def _mutated(definition: dict[str, Any], state: str, old: str, new: str) -> dict[str, Any]:
    text = json.dumps(definition["States"][state]).replace(old, new)
    assert text != json.dumps(definition["States"][state]), f"{old} not in {state}"
    mutated = copy.deepcopy(definition)
    mutated["States"][state] = json.loads(text)
    return mutated


@pytest.mark.parametrize(
    ("state", "old", "new", "expected"),
    [
        # A Parameters key the Lambda's model does not have.
        ("Detect", '"projection_key.$"', '"projection_path.$"', "projection_path is not a field"),
        # A path into a step's output that the output model does not have.
        ("Project", "$.results.parse.docling_key", "$.results.parse.key", "nothing at 'key'"),
        # A field read before any state has put it there.
        ("RecordFailure", '"$.failed_at"', '"$.failure_at"', "nothing at 'failure_at'"),
        # A step output put where the next state does not look.
        ("Project", '"$.results.project"', '"$.results.projection"', "nothing at 'project'"),
        # A Pass result the records model does not accept.
        ("ProjectFailed", '"project"', '"projection"', "records rejects"),
        # The dead-letter message reads the failure record.
        (
            "SendToDeadLetterQueue",
            "$.failure.message_attributes",
            "$.failure.attributes",
            "nothing at 'attributes'",
        ),
        # The Choice reads the failure record.
        ("FailureKind", "$.failure.kind", "$.failure.class", "nothing at 'class'"),
        # The mark reads the message id the dead-letter send's ResultSelector keeps.
        ("MarkDeadLettered", "$.dead_letter.message_id", "$.dead_letter.id", "nothing at 'id'"),
        ("SendToDeadLetterQueue", "$.MessageId", "$.MessageID", "nothing at 'MessageID'"),
        ("MarkDeadLettered", '"message_id.$"', '"sqs_message_id.$"', "records rejects"),
        # Inside the Map: each item's page range, the shard tasks' inputs and results.
        ("ParseShards", "$$.Map.Item.Value", "$$.Map.Item.Values", "nothing at 'Values'"),
        ("ParseShards", '"pages.$": "$.pages"', '"page.$": "$.pages"', "page is not a field"),
        ("ParseShards", '"cached.$": "$.cached"', '"hit.$": "$.cached"', "hit is not a field"),
        ("ParseShards", "$.results.slots.max_concurrency", "$.results.slots.most", "nothing at"),
        # The shards' slots: what the plan asked for, what the claim answers.
        ("ClaimShardSlots", "$.results.plan.max_concurrency", "$.results.plan.most", "nothing at"),
        ("ClaimShardSlots", '"wanted.$"', '"want.$"', "records rejects"),
        # The plan's conversion reaches every parse.
        ("ParseTier1", "$.results.plan.contract", "$.results.plan.digest", "nothing at 'digest'"),
        ("ParseShards", '"pipeline.$": "$.pipeline"', '"pipe.$": "$.pipeline"', "pipe is not a"),
        ("ParseShards", '"shard_failed"', '"shard_lost"', "records rejects"),
        ("Merge", "$.results.shards", "$.results.shard_list", "nothing at 'shard_list'"),
        ("ParseShardsFailed", '"attempt_recorded"', '"recorded"', "recorded is not a field"),
    ],
)
def test_a_definition_side_rename_is_caught(
    definition: dict[str, Any], template: Template, state: str, old: str, new: str, expected: str
) -> None:
    result = walk(_mutated(definition, state, old, new), Contracts(template))
    assert result.problems, f"renaming {old} in {state} went unnoticed"
    assert any(expected in problem for problem in result.problems), _report(result)


class ParseOutputRenamed(Contract):
    """ParseOutput with ``docling_key`` renamed."""

    document_key: str
    sha256: str
    size: int
    pipeline: str
    pages: int
    cached: bool
    partial: bool
    failed_pages: list[int]
    seconds: float


class ParseInputWithoutSource(StageInput):
    tier: int
    accept_partial: bool = False


def test_a_model_side_rename_is_caught(definition: dict[str, Any], template: Template) -> None:
    renamed_output = Contracts(
        template,
        stages={**STAGE_CONTRACTS, "parse": StageContract("parse", ParseInput, ParseOutputRenamed)},
    )
    result = walk(definition, renamed_output)
    assert any("nothing at 'docling_key'" in p for p in result.problems), _report(result)

    dropped_input = Contracts(
        template,
        stages={
            **STAGE_CONTRACTS,
            "parse": StageContract("parse", ParseInputWithoutSource, ParseOutput),
        },
    )
    result = walk(definition, dropped_input)
    assert any("source is not a field" in p for p in result.problems), _report(result)


def test_a_records_output_rename_is_caught(definition: dict[str, Any], template: Template) -> None:
    class FailureRecordedRenamed(Contract):
        kind: str
        why: str  # was reason: the Fail states' CausePath reads $.failure.reason
        message_attributes: dict[str, MessageAttribute]

    result = walk(definition, Contracts(template, records_outputs={"fail": FailureRecordedRenamed}))
    assert any("nothing at 'reason'" in p for p in result.problems), _report(result)


def test_the_project_step_takes_what_an_earlier_definition_sends() -> None:
    """A run started before an upgrade keeps its definition, which passed the project step
    the key as source.name and the bucket beside it: the same input, said the old way."""
    from richdoc.contracts import ProjectInput

    common = {"job_id": "j" * 32, "run": 1, "execution": "e", "docling_key": "docling/x.json"}
    earlier = ProjectInput.model_validate(
        {
            **common,
            "source": {"name": "contracts/lease.pdf", "sha256": "ab" * 32, "pipeline": "standard"},
            "bucket": "ingest",
        }
    )
    now = ProjectInput.model_validate(
        {
            **common,
            "source": {"bucket": "ingest", "key": "contracts/lease.pdf"},
            "sha256": "ab" * 32,
            "pipeline": "standard",
        }
    )
    assert earlier == now


def test_each_step_says_what_it_writes_and_only_detect_is_the_runs_last_work() -> None:
    """The step decorator acts on what the contracts say, never on a step's name."""
    steps = (PLAN, PARSE, MERGE, PROJECT, DETECT)
    assert {step.name: step.writes for step in steps} == {
        "plan": None,
        "parse": "parse_artifacts",
        "merge": "parse_artifacts",
        "project": "run_outputs",
        "detect": "run_outputs",
    }
    assert [step.name for step in steps if step.last] == ["detect"]


def test_the_plan_alone_decides_for_the_job_its_shard_count_and_digest() -> None:
    plan = PlanOutput(
        sha256="ab" * 32,
        size=10,
        format="pdf",
        pipeline="standard",
        contract="c",
        page_count=120,
        sharded=True,
        shards=[],
        shard_count=3,
        max_concurrency=2,
        seconds=0.1,
    )
    assert plan.decision() == JobDecision(shard_count=3, sha256="ab" * 32)
    parsed = ParseOutput(
        docling_key="k",
        sha256="ab" * 32,
        size=10,
        pipeline="standard",
        page_count=1,
        cached=False,
        partial=False,
        failed_pages=[],
        seconds=0.1,
    )
    assert parsed.decision() is None
