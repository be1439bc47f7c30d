"""moto's expression processors look up what they process once per traversal, not twice
per node.

moto validates an UpdateExpression with ten processors, each a depth-first traversal of
the expression's tree (``DepthFirstTraverser``). At every node the traversal builds the
processor's map from node class to processing method, a dict of bound methods, to ask
whether the node is one it processes, and builds it again to process it: twenty dicts a
node, about a thirtieth of the embedded stack's CPU (bench/, item 5). Every processor's
map is a literal of classes and its own methods, the same whenever it is built, so the
replacement builds it once per traversal and then visits the nodes as moto does: children
first, in order, each announced to ``pre_processing_of_child``; a node of a mapped class
processed by the first class it is an instance of, and the result put in its place under
the same parent.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from richdoc_tools.local.patches.target import replace

TARGET = "moto.dynamodb.parsing.ast_nodes.DepthFirstTraverser.traverse"
PATCHED = (TARGET,)


def mapped_traverse(traverser: Any, root: Any) -> Any:
    """moto's ``DepthFirstTraverser.traverse`` with the processing map built once."""
    # moto's module opts out of type checking: its classes are Any here.
    nodes: Any = importlib.import_module("moto.dynamodb.parsing.ast_nodes")
    node_class = nodes.Node
    processing = list(traverser._processing_map().items())
    processed = tuple(cls for cls, _ in processing)
    announce = traverser.pre_processing_of_child
    if type(traverser).pre_processing_of_child is nodes.DepthFirstTraverser.pre_processing_of_child:
        announce = None  # moto's own hook does nothing

    def visit(node: Any, child_id: int) -> Any:
        if not isinstance(node, node_class):
            return node
        parent = node.parent
        if node.children is not None:
            for index, child in enumerate(node.children):
                if announce is not None:
                    announce(node, index)
                visit(child, index)
        if isinstance(node, processed):
            process = next(method for cls, method in processing if isinstance(node, cls))
            node = process(node)
            node.parent = parent
            if parent:
                parent.children[child_id] = node
        return node

    return visit(root, -1)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, mapped_traverse)
