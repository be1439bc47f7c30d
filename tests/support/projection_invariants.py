"""The structural promises of every projection, checked literally (shared by the tests).

Written against the JSON contract rather than the implementation's helpers, so a bug in
the projection cannot hide behind the same bug here.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from typing import Any

from richdoc.graph import Node, Projection

# The prop that holds the text of a span's block, by node label.
TEXT_PROP = {"SECTION": "title", "PARAGRAPH": "text", "TABLE_ROW": "text"}


def props_of(node: Node) -> dict[str, Any]:
    """A node's props as projection.json holds them (absent props left out)."""
    return node.props.model_dump(mode="json")


def stats_of(projection: Projection) -> dict[str, Any]:
    """A projection's stats as projection.json holds them."""
    return projection.stats.model_dump(mode="json")


def span_slice_audit(projection: Projection) -> list[str]:
    """Spans whose byte slice of the canonical text is not their block's text."""
    data = projection.canonical_text.encode("utf-8")
    failures = []
    for index, span in enumerate(projection.spans):
        node = projection.nodes[span.node]
        expected = props_of(node)[TEXT_PROP[node.label.value]]
        try:
            actual = data[span.start : span.end].decode("utf-8")
        except UnicodeDecodeError:
            failures.append(f"span {index} cuts a UTF-8 sequence")
            continue
        if actual != expected:
            failures.append(f"span {index}: {actual!r} != {expected!r}")
    return failures


def assert_graph_invariants(projection: Projection) -> None:
    nodes, edges, spans = projection.nodes, projection.edges, projection.spans
    assert [node.id for node in nodes] == list(range(len(nodes)))
    assert nodes[0].label.value == "DOCUMENT"
    assert all(node.label.value != "DOCUMENT" for node in nodes[1:])

    # Every node but DOCUMENT has exactly one CONTAINS parent; ord is 0..n-1 per parent.
    parents: dict[int, list[int]] = defaultdict(list)
    children: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for edge in edges:
        assert edge.label == "CONTAINS"
        parents[edge.dst].append(edge.src)
        children[edge.src].append((edge.ord, edge.dst))
    assert sorted(parents) == list(range(1, len(nodes)))
    assert all(len(srcs) == 1 for srcs in parents.values())
    for kids in children.values():
        assert sorted(order for order, _ in kids) == list(range(len(kids)))

    # Node ids are reading order: a pre-order walk of the CONTAINS tree gives 0..n-1.
    walk: list[int] = []
    stack = [0]
    while stack:
        node_id = stack.pop()
        walk.append(node_id)
        stack.extend(dst for _, dst in sorted(children[node_id], reverse=True))
    assert walk == list(range(len(nodes)))

    # Sections nest by level; table rows hang under tables and nothing else does.
    for edge in edges:
        parent, child = nodes[edge.src], nodes[edge.dst]
        if parent.label.value == "SECTION" and child.label.value == "SECTION":
            assert props_of(child)["level"] > props_of(parent)["level"]
        assert (parent.label.value == "TABLE") == (child.label.value == "TABLE_ROW")
        assert parent.label.value in ("DOCUMENT", "SECTION", "TABLE")

    # Spans: one per heading, paragraph and row, sorted, disjoint, separated by "\n\n".
    text_nodes = [n.id for n in nodes if n.label.value in TEXT_PROP]
    assert [span.node for span in spans] == text_nodes
    data = projection.canonical_text.encode("utf-8")
    for before, after in pairwise(spans):
        assert before.end < after.start
        assert data[before.end : after.start] == b"\n\n"
    if spans:
        assert spans[0].start == 0 and spans[-1].end == len(data)
    else:
        assert data == b""
    assert stats_of(projection)["canonical_text_bytes"] == len(data)
    assert span_slice_audit(projection) == []
