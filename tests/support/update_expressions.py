"""Generated DynamoDB update expressions and moto's parsed trees as plain data, for the
tests that compare a speed patch of moto's update handling with moto's own."""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import strategies as st

NAMES = st.sampled_from(["#a", "#b", "#c", "d", "e.f", "g[1]"])
VALUES = st.sampled_from([":v", ":w", ":x"])
SET_ACTIONS = st.one_of(
    st.builds(lambda n, v: f"{n} = {v}", NAMES, VALUES),
    st.builds(lambda n, v: f"{n} = {n} + {v}", NAMES, VALUES),
    st.builds(lambda n, v: f"{n} = list_append({n}, {v})", NAMES, VALUES),
    st.builds(lambda n, v: f"{n} = if_not_exists({n}, {v})", NAMES, VALUES),
)
CLAUSES = st.one_of(
    st.builds(lambda acts: "SET " + ", ".join(acts), st.lists(SET_ACTIONS, min_size=1, max_size=5)),
    st.builds(lambda ns: "REMOVE " + ", ".join(ns), st.lists(NAMES, min_size=1, max_size=4)),
    st.builds(
        lambda pairs: "ADD " + ", ".join(f"{n} {v}" for n, v in pairs),
        st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=3),
    ),
    st.builds(
        lambda pairs: "DELETE " + ", ".join(f"{n} {v}" for n, v in pairs),
        st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=3),
    ),
)
# Update expressions over a few names and values, every section, sometimes one twice.
EXPRESSIONS = st.lists(CLAUSES, min_size=1, max_size=5).map(" ".join)

# moto's parsing modules opt out of type checking: their classes are Any here.
NODES: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")


def tree_shape(value: Any, seen: dict[int, int] | None = None) -> Any:
    """A node tree as plain data: classes, fields, and which objects are the same one
    (by their order of first appearance), parents included."""
    seen = {} if seen is None else seen
    if id(value) in seen:
        return ("same as", seen[id(value)])
    if isinstance(value, NODES.Node):
        seen[id(value)] = len(seen)
        return (type(value).__name__, {k: tree_shape(v, seen) for k, v in vars(value).items()})
    if isinstance(value, list):
        seen[id(value)] = len(seen)
        return [tree_shape(v, seen) for v in value]
    return repr(value)
