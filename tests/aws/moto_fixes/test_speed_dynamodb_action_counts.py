"""Canary: moto counts an update expression's sections once per node of its tree (each
count a walk of the node's subtree); the patch (moto_fixes.speed.dynamodb_action_counts) counts
them in one pass and refuses exactly the expressions moto refuses, with moto's error."""

from __future__ import annotations

import copy
import importlib
import inspect
from typing import Any

from hypothesis import given
from richdoc_tools.local.moto_fixes.speed import dynamodb_action_counts
from richdoc_tools.local.patches.target import original

from tests.support.update_expressions import EXPRESSIONS

# moto's parsing modules opt out of type checking: their classes are Any here.
NODES: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")
PARSER: Any = importlib.import_module("moto.dynamodb.parsing.expressions")


def _outcome(traverse: Any, expression: str) -> tuple[str, str] | None:
    from moto.dynamodb.parsing.validators import ActionCountValidator

    ast = PARSER.UpdateExpressionParser.make(expression)
    try:
        traverse(ActionCountValidator(), copy.deepcopy(ast))
    except Exception as error:
        return type(error).__name__, str(error)
    return None


def test_moto_counts_the_sections_at_every_update_expression_node() -> None:
    from moto.dynamodb.parsing.validators import ActionCountValidator

    assert (
        dynamodb_action_counts.TARGET
        == "moto.dynamodb.parsing.validators.ActionCountValidator.traverse"
    )
    assert "traverse" not in vars(ActionCountValidator)  # DepthFirstTraverser's, inherited
    assert ActionCountValidator()._processing_map().keys() == {NODES.UpdateExpression}
    source = inspect.getsource(ActionCountValidator.verify_action_counts)
    for section in ("UpdateExpressionAddClause", "UpdateExpressionRemoveClause"):
        assert section in source
    assert source.index('"ADD"') < source.index('"REMOVE"') < source.index('"SET"')


@given(EXPRESSIONS)
def test_the_one_pass_count_refuses_what_moto_refuses_with_moto_s_error(expression: str) -> None:
    moto_traverse = original("moto.dynamodb.parsing.ast_nodes.DepthFirstTraverser.traverse")
    assert moto_traverse is NODES.DepthFirstTraverser.traverse
    assert _outcome(dynamodb_action_counts.counted_traverse, expression) == _outcome(
        moto_traverse, expression
    )


def test_a_section_used_twice_is_refused_and_once_each_passes() -> None:
    refused = _outcome(dynamodb_action_counts.counted_traverse, "SET #a = :v REMOVE d SET #b = :w")
    assert refused is not None and refused[0] == "TooManyClauses"
    assert 'The \\"SET\\" section can only be used once in an update expression' in refused[1]
    once_each = "SET #a = :v, #b = :w REMOVE d ADD e.f :x DELETE g[1] :v"
    assert _outcome(dynamodb_action_counts.counted_traverse, once_each) is None
