"""Canary: moto's expression processors build their processing map at every node they
visit (twice); the patch (moto_fixes.speed.dynamodb_traversal) builds it once per traversal and
validates every update expression to the same tree, or refuses it with the same error."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from typing import Any

from hypothesis import given
from richdoc_tools.local.moto_fixes.speed import dynamodb_traversal

from tests.support.update_expressions import EXPRESSIONS, tree_shape

# moto's parsing modules opt out of type checking: their classes are Any here.
NODES: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")
PARSER: Any = importlib.import_module("moto.dynamodb.parsing.expressions")
VALIDATORS: Any = importlib.import_module("moto.dynamodb.parsing.validators")
# What the patch visits in moto's stead.
TRAVERSAL = ("traverse_node_recursively", "nodes_to_be_processed", "process")

NAMES = {"#a": "pk", "#b": "b", "#c": "c"}  # "#a" is the key: moto refuses to update it
VALUES = {":v": {"N": "1"}, ":w": {"S": "two"}, ":x": {"L": [{"N": "3"}]}}
ATTRIBUTES = {"b": {"N": "5"}, "d": {"S": "dee"}, "e": {"M": {"f": {"SS": ["x"]}}}}


def _processors() -> list[Any]:
    return [
        cls
        for _, cls in inspect.getmembers(VALIDATORS, inspect.isclass)
        if issubclass(cls, NODES.DepthFirstTraverser) and cls is not NODES.DepthFirstTraverser
    ]


def test_moto_s_processors_map_node_classes_to_their_own_methods_by_a_literal() -> None:
    assert dynamodb_traversal.TARGET == (
        "moto.dynamodb.parsing.ast_nodes.DepthFirstTraverser.traverse"
    )
    traverser = NODES.DepthFirstTraverser
    source = inspect.getsource(traverser.traverse_node_recursively)
    assert "isinstance(node, self.nodes_to_be_processed())" in source
    assert "self.pre_processing_of_child(node, i)" in source
    assert "parent_node.children[child_id] = node" in source
    assert "self._processing_map().items()" in inspect.getsource(traverser.process)
    processors = _processors()
    assert VALIDATORS.ExpressionAttributeResolvingProcessor in processors
    for cls in processors:
        for name in TRAVERSAL:
            assert name not in vars(cls), (cls, name)
        body = inspect.getsource(cls._processing_map).split("->", 1)[1].split(":", 1)[1]
        # One statement: a dict literal of classes to bound methods, the same every call.
        assert body.strip().startswith("return {") and body.count("return") == 1, cls
    update = inspect.getsource(VALIDATORS.UpdateExpressionValidator.get_ast_processors)
    assert all(cls.__name__ in update for cls in processors if cls.__name__ != "Validator")


def _validated(expression: str, patched: bool) -> Any:
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    table_class: Any = importlib.import_module("moto.dynamodb.models.table").Table
    table = table_class(
        "t",
        account_id="123456789012",
        region="us-east-1",
        schema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        attr=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    item = Item(DynamoType({"S": "k"}), None, {"pk": {"S": "k"}, **ATTRIBUTES})
    ast = PARSER.UpdateExpressionParser.make(expression)
    with contextlib.ExitStack() as exit_stack:
        if patched:
            dynamodb_traversal.install(exit_stack)
        validator = VALIDATORS.UpdateExpressionValidator(
            ast,
            expression_attribute_names=NAMES,
            expression_attribute_values=VALUES,
            item=item,
            table=table,
        )
        try:
            return tree_shape(validator.validate(), {})
        except Exception as error:
            return type(error).__name__, str(error)


@given(EXPRESSIONS)
def test_every_expression_validates_to_moto_s_tree_or_moto_s_error(expression: str) -> None:
    assert _validated(expression, patched=True) == _validated(expression, patched=False)
    assert NODES.DepthFirstTraverser.traverse is not dynamodb_traversal.mapped_traverse


def test_names_and_values_are_resolved_and_a_key_update_is_refused() -> None:
    resolved = repr(_validated("SET #b = #b + :v, #c = list_append(:x, :x)", patched=True))
    assert "DynamoType" in resolved and "ExpressionAttributeValue" not in resolved
    refused = _validated("SET #a = :w", patched=True)
    assert refused[0] == "UpdateHashRangeKeyException", refused
