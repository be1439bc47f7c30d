"""An update expression's sections counted in one pass, not once per node.

DynamoDB refuses an UpdateExpression that uses a section (SET, REMOVE, ADD) twice. moto
checks it with a traversal that, at every node of the expression's tree that is an
``UpdateExpression`` (each clause, each list of actions, each action's list), walks that
node's whole subtree three times (``find_clauses``): quadratic in the number of actions,
about 1.7 ms for a 14-action update such as a job record's, every UpdateItem (bench/,
item 5). The replacement counts each node's sections from its children's counts in one
post-order pass and checks the nodes in the same order with the same rule, so the same
expression raises the same error (or none), as the canary's property test compares.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from richdoc_tools.local.patches.target import replace

TARGET = "moto.dynamodb.parsing.validators.ActionCountValidator.traverse"
PATCHED = (TARGET,)
ADDED = PATCHED  # an override: the class inherits DepthFirstTraverser's traverse


def counted_traverse(validator: Any, node: Any) -> Any:
    """moto's ``ActionCountValidator`` over ``node``: raises ``TooManyClauses`` where
    moto's traversal would first raise it; returns the node (moto's processor changes
    nothing)."""
    from moto.dynamodb.exceptions import TooManyClauses

    # moto's module opts out of type checking: its classes are Any here.
    nodes: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")
    Node, UpdateExpression = nodes.Node, nodes.UpdateExpression
    searched = (nodes.Expression, nodes.UpdateExpressionFunction)
    # moto's check order at a node, and the name each section's error gives.
    sections = (
        (nodes.UpdateExpressionAddClause, "ADD"),
        (nodes.UpdateExpressionRemoveClause, "REMOVE"),
        (nodes.UpdateExpressionSetClause, "SET"),
    )

    def counts(current: Any) -> tuple[int, ...]:
        """How many clauses of each section ``find_clauses`` finds under ``current``
        (children first, in order, as moto's depth-first traversal visits them)."""
        children = [child for child in current.children or [] if isinstance(child, Node)]
        below = [counts(child) for child in children]
        found = [0] * len(sections)
        for child, child_counts in zip(children, below, strict=True):
            searched_into = isinstance(child, searched)
            for index, (clause, _) in enumerate(sections):
                if type(child) is clause:
                    found[index] += 1
                elif searched_into:
                    found[index] += child_counts[index]
        if isinstance(current, UpdateExpression):
            for index, (_, name) in enumerate(sections):
                if found[index] > 1:
                    raise TooManyClauses(name)
        return tuple(found)

    if isinstance(node, Node):
        counts(node)
    return node


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, counted_traverse)
