"""The console's pure parts: the state machine's layout (``console.diagram``), what an
execution's history says about each state (``console.execution``), and the graph laid over
a document (``console.overlay``)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from richdoc_tools.console.diagram import MAP_HEADER, draw
from richdoc_tools.console.execution import StateStatus, state_runs
from richdoc_tools.console.overlay import overlay
from richdoc_tools.ops.statemachine import SEPARATOR, Machine

from richdoc.detection import Ambiguity, AmbiguityKind, Candidate, Detection, DetectionStats
from richdoc_client.projection import (
    DocumentNode,
    DocumentProps,
    Edge,
    Node,
    ParagraphNode,
    ParagraphProps,
    Projection,
    ProjectionSource,
    ProjectionStats,
    Span,
    SpanKind,
)
from tests.support.paths import DATA, DEFINITION_PATH

HISTORIES = DATA / "console"


def _history(name: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads((HISTORIES / f"history-{name}.json").read_text())
    return events


# ---- the layout ----------------------------------------------------------------------------------


def test_every_state_is_drawn_once_and_every_transition_is_an_arrow() -> None:
    machine = Machine.load(DEFINITION_PATH)
    diagram = draw(machine)
    assert sorted(b.name for b in diagram.boxes) == sorted(machine.qualified_names())
    drawn = {(line.source, line.target) for line in diagram.lines}
    for name, state in machine.walk():
        prefix = name.rsplit(SEPARATOR, 1)[0] + SEPARATOR if SEPARATOR in name else ""
        for t in state.transitions:
            assert (prefix + t.source, prefix + t.target) in drawn
    assert ("", machine.start_at) in drawn  # the start marker


def test_boxes_do_not_overlap_and_the_iterator_sits_inside_its_map() -> None:
    diagram = draw(Machine.load(DEFINITION_PATH))
    frame = diagram.box("ParseShards")
    inner = [b for b in diagram.boxes if b.name.startswith("ParseShards" + SEPARATOR)]
    outer = [b for b in diagram.boxes if SEPARATOR not in b.name]
    for b in inner:
        assert frame.x < b.x and b.x + b.width < frame.x + frame.width
        assert frame.y + MAP_HEADER <= b.y and b.y + b.height < frame.y + frame.height
    for group in (inner, outer):
        for a, b in itertools.combinations(group, 2):
            apart = (
                a.x + a.width <= b.x
                or b.x + b.width <= a.x
                or a.y + a.height <= b.y
                or b.y + b.height <= a.y
            )
            assert apart, (a.name, b.name)
    for b in diagram.boxes:
        assert b.x >= 0 and b.x + b.width <= diagram.width
        assert b.y >= 0 and b.y + b.height <= diagram.height


def test_arrows_go_from_the_bottom_of_a_box_down_to_the_top_of_the_next() -> None:
    diagram = draw(Machine.load(DEFINITION_PATH))
    boxes = {b.name: b for b in diagram.boxes}
    for line in diagram.lines:
        if not line.source:
            continue
        source, target = boxes[line.source], boxes[line.target]
        (x0, y0), (x1, y1) = line.points[0], line.points[-1]
        assert y0 == source.y + source.height and source.x <= x0 <= source.x + source.width
        assert y1 == target.y and target.x <= x1 <= target.x + target.width
        assert all(a[1] <= b[1] for a, b in itertools.pairwise(line.points))
        assert line.path.startswith(f"M{x0:.1f},{y0:.1f}")


def test_the_layout_is_deterministic_and_follows_the_definition(
    definition: dict[str, Any],
) -> None:
    assert draw(Machine.load(DEFINITION_PATH)) == draw(Machine.load(DEFINITION_PATH))
    changed = copy.deepcopy(definition)
    changed["States"]["Detect"]["Next"] = "Succeeded"
    lines = {(line.source, line.target) for line in draw(Machine.from_definition(changed)).lines}
    assert ("Detect", "Succeeded") in lines and ("Detect", "RecordSuccess") not in lines


# ---- what the history says ----------------------------------------------------------------------


def test_a_successful_execution_colours_its_route_and_leaves_the_rest() -> None:
    runs = state_runs(Machine.load(DEFINITION_PATH), _history("succeeded"))
    route = ["RecordStart", "Plan", "Sharded", "ParseTier1", "Project", "Detect", "RecordSuccess"]
    for name in [*route, "Succeeded"]:
        assert runs.states[name].status is StateStatus.SUCCEEDED, name
        assert runs.states[name].entered == 1
    assert runs.states["ParseShards"].status is StateStatus.NOT_RUN
    assert runs.states["RecordFailure"].status is StateStatus.NOT_RUN
    assert set(itertools.pairwise([*route, "Succeeded"])) == runs.taken
    plan = runs.states["Plan"]
    assert plan.input is not None and json.loads(plan.input)["run"] == 1
    assert plan.output is not None and "plan" in json.loads(plan.output)["results"]


def test_a_caught_error_and_the_fail_state_it_leads_to() -> None:
    runs = state_runs(Machine.load(DEFINITION_PATH), _history("dead-lettered"))
    parse = runs.states["ParseTier1"]
    assert parse.status is StateStatus.CAUGHT and parse.error == "CorruptInput"
    assert parse.cause and "not a docx" in parse.cause
    assert runs.states["CorruptInput"].status is StateStatus.FAILED
    assert ("ParseTier1", "ParseTier1Failed") in runs.taken
    assert runs.states["SendToDeadLetterQueue"].status is StateStatus.SUCCEEDED


def test_retries_and_map_iterations_add_up() -> None:
    runs = state_runs(Machine.load(DEFINITION_PATH), _history("sharded-retried"))
    assert runs.states["Project"].retries == 1
    assert runs.states["Project"].status is StateStatus.SUCCEEDED
    assert runs.states["Project"].error == "Lambda.ServiceException"  # the retried one
    tier1 = runs.states["ParseShards/ParseShardTier1"]
    assert tier1.entered == 2 and tier1.iterations == [0, 1]
    assert tier1.status is StateStatus.CAUGHT  # one iteration escalated
    assert runs.states["ParseShards/ParseShardTier2"].iterations == [1]
    assert runs.states["ParseShards"].status is StateStatus.SUCCEEDED
    assert ("ParseShards/ParseShardTier1", "ParseShards/EscalateShardToTier2") in runs.taken


def test_a_running_execution_and_a_stopped_one() -> None:
    events = _history("succeeded")
    upto = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "TaskStateEntered"
        and e.get("stateEnteredEventDetails", {}).get("name") == "Project"
    )
    running = state_runs(Machine.load(DEFINITION_PATH), events[: upto + 3])
    assert running.states["Project"].status is StateStatus.RUNNING
    assert running.states["Detect"].status is StateStatus.NOT_RUN
    aborted = [
        *events[: upto + 3],
        {"id": 999, "previousEventId": events[upto + 2]["id"], "type": "ExecutionAborted"},
    ]
    assert (
        state_runs(Machine.load(DEFINITION_PATH), aborted).states["Project"].status
        is StateStatus.ABORTED
    )


def test_no_history_leaves_every_state_not_run() -> None:
    runs = state_runs(Machine.load(DEFINITION_PATH), [])
    assert {r.status for r in runs.states.values()} == {StateStatus.NOT_RUN} and not runs.taken


# ---- the graph over the document -----------------------------------------------------------------


def _projection(blocks: list[str], separator: str = "\n\n") -> Projection:
    text = separator.join(blocks)
    nodes: list[Node] = [DocumentNode(id=0, props=DocumentProps(name="doc.pdf"))]
    spans, edges, offset = [], [], 0
    for i, block in enumerate(blocks, start=1):
        start = len(text[:offset].encode())
        end = start + len(block.encode())
        bbox = [10.0, 20.0 * i, 110.0, 20.0 * i + 12]
        nodes.append(ParagraphNode(id=i, props=ParagraphProps(text=block, page=1, bbox=bbox)))
        edges.append(Edge(src=0, dst=i, ord=i - 1))
        spans.append(Span(node=i, start=start, end=end, kind=SpanKind.PARAGRAPH))
        offset += len(block) + len(separator)
    return Projection(
        source=ProjectionSource(name="doc.pdf"),
        canonical_text=text,
        nodes=nodes,
        edges=edges,
        spans=spans,
        stats=ProjectionStats.of_graph(nodes, edges, spans, text),
    )


@given(st.lists(st.text(st.characters(blacklist_categories=["Cs"]), min_size=1), max_size=6))
def test_segments_rebuild_the_text_and_spans_count_characters(blocks: list[str]) -> None:
    projection = _projection(blocks)
    graph = overlay(projection, None)
    assert "".join(s.text for s in graph.segments) == projection.canonical_text
    for node in graph.nodes[1:]:
        assert node.span is not None
        assert projection.canonical_text[node.span.start_char : node.span.end_char] == node.text
        data = projection.canonical_text.encode()
        assert data[node.span.start_byte : node.span.end_byte].decode() == node.text
    assert graph.canonical_chars == len(projection.canonical_text)


def test_multibyte_text_gets_character_offsets() -> None:
    graph = overlay(_projection(["Müller GmbH", "日本 2024-03-01 🎉", "end"]), None)
    spans = [n.span for n in graph.nodes[1:]]
    assert [(s.start_byte, s.end_byte) for s in spans if s] == [(0, 12), (14, 36), (38, 41)]
    assert [(s.start_char, s.end_char) for s in spans if s] == [(0, 11), (13, 28), (30, 33)]


def test_boxes_land_on_their_pages_and_ambiguities_on_their_evidence() -> None:
    projection = _projection(["first", "second", "third"])
    moved = projection.nodes[3]
    assert isinstance(moved, ParagraphNode)
    moved.props.page = 2
    detection = Detection(
        ambiguities=[
            Ambiguity(
                kind=AmbiguityKind.CONFLICTING_DATES,
                detectorConfidence=0.7,
                appliedCandidateConfidence=0.55,
                candidates=[
                    Candidate(label="a", spanRef=1),
                    Candidate(label="b", spanRef=7),  # no such span: no node
                    Candidate(label="undated"),
                ],
            )
        ],
        stats=DetectionStats(ambiguities=1, ambiguities_suppressed=0),
    )
    graph = overlay(projection, detection, [(612.0, 792.0), (612.0, 792.0)], "/p/{}.png".format)
    assert [[b.node for b in p.boxes] for p in graph.pages] == [[1, 2], [3]]
    assert graph.pages[1].image_url == "/p/2.png"
    box = graph.pages[0].boxes[1]
    assert (box.x, box.y, box.width, box.height) == (10.0, 40.0, 100.0, 12.0)
    assert [n.id for n in graph.nodes if n.ambiguous] == [2]
    assert [s.node for s in graph.segments if s.ambiguous] == [2]
    assert [c.node for c in graph.ambiguities[0].candidates] == [2, None, None]
    assert overlay(projection, detection).pages == []  # nothing rendered: no pages


@pytest.mark.parametrize("bbox", [[1, 2, 3], ["a", 1, 2, 3], [1, 2, 3, 4, 5]])
def test_a_malformed_bbox_is_refused_when_the_projection_is_read(bbox: object) -> None:
    data = json.loads(_projection(["only"]).to_json_bytes())
    data["nodes"][1]["props"]["bbox"] = bbox
    with pytest.raises(ValidationError, match="bbox"):
        Projection.model_validate(data)


def test_a_node_without_a_bbox_draws_no_box() -> None:
    projection = _projection(["only"])
    only = projection.nodes[1]
    assert isinstance(only, ParagraphNode)
    only.props.bbox = None
    graph = overlay(projection, None, [(100.0, 100.0)])
    assert graph.pages[0].boxes == [] and graph.nodes[1].bbox is None
