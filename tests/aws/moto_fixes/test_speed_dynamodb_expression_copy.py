"""Canary: moto's expression nodes are plain objects that ``copy.deepcopy`` copies through
the pickle protocol; the patch (moto_fixes.speed.dynamodb_expression_copy) gives them a
``__deepcopy__`` that builds the same copy, field by field."""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from richdoc_tools.local.moto_fixes.speed import dynamodb_expression_copy

from tests.support.update_expressions import EXPRESSIONS, tree_shape

NODES: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")
PICKLING = ("__slots__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__")
COPYING = ("__deepcopy__", "__copy__", "__new__")


def _node_classes() -> list[type]:
    return [
        cls for _, cls in inspect.getmembers(NODES, inspect.isclass) if issubclass(cls, NODES.Node)
    ]


def test_moto_s_nodes_are_plain_objects_deepcopy_pickles() -> None:
    assert dynamodb_expression_copy.TARGET == "moto.dynamodb.parsing.ast_nodes.Node.__deepcopy__"
    classes = _node_classes()
    assert NODES.UpdateExpression in classes and NODES.DDBTypedValue in classes
    for cls in classes:
        for name in PICKLING + COPYING:
            assert name not in vars(cls), (cls, name)
    validators = importlib.import_module("moto.dynamodb.parsing.validators")
    assert "self.node_to_validate = deepcopy(expression)" in inspect.getsource(
        validators.Validator.__init__
    )


@given(EXPRESSIONS, st.booleans())
def test_the_copy_is_the_one_deepcopy_makes(expression: str, subtree: bool) -> None:
    parser = importlib.import_module("moto.dynamodb.parsing.expressions")
    tree = parser.UpdateExpressionParser.make(expression)
    original = tree.children[-1] if subtree and tree.children else tree
    expected = tree_shape(copy.deepcopy(original), {})
    with contextlib.ExitStack() as exit_stack:
        dynamodb_expression_copy.install(exit_stack)
        copied = copy.deepcopy(original)
    assert "__deepcopy__" not in vars(NODES.Node)  # gone with the stack
    assert tree_shape(copied, {}) == expected
    # A copy shares no node or list with the original.
    originals = {id(v) for v in _walk(original)}
    assert not originals & {id(v) for v in _walk(copied)}


def _walk(node: Any) -> list[Any]:
    found = [node]
    for value in vars(node).values():
        if isinstance(value, list):
            found.append(value)
            found.extend(x for v in value if isinstance(v, NODES.Node) for x in _walk(v))
    return found
