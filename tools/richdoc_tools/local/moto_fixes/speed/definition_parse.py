"""One ANTLR parse per state machine definition.

moto parses the definition with ANTLR again for every execution: most of the
interpreter's CPU per job (bench/, item 5). The parse tree is read-only, so it is kept per
definition; each execution still gets fresh evaluation components built from it, exactly
as moto's own ``parse`` builds them (its ``Preprocessor``), so executions share nothing
mutable.

The kept tree also knows its text. moto's ``Preprocessor`` formats error messages before
it knows there is an error (``raise_on_missing=ValueError(f"... {ctx.getText()}")`` for
the program and every Map's item processor), and ANTLR's ``getText`` walks the whole
subtree each time: more than half of each build. A node's text is fixed once parsed, so
each node of the kept tree answers ``getText`` with the text it was parsed from.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from antlr4 import ParserRuleContext
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent

TARGET = "moto.stepfunctions.parser.asl.parse.asl_parser.AmazonStateLanguageParser.parse"
PATCHED = (TARGET,)

Parse = Callable[[str], "tuple[EvalComponent, ParserRuleContext]"]


def with_texts(tree: ParserRuleContext) -> ParserRuleContext:
    """``tree``, each rule node of which answers ``getText`` from its text, computed once."""
    from antlr4.tree.Tree import TerminalNode

    def text_of(node: object) -> str:
        if isinstance(node, TerminalNode):
            return str(node.getText())
        children = getattr(node, "children", None) or ()
        text = "".join(text_of(child) for child in children)
        if hasattr(node, "__dict__"):  # ANTLR's generated contexts; its bases have slots
            vars(node)["getText"] = functools.partial(str, text)
        return text

    text_of(tree)
    return tree


class DefinitionParses:
    """Stands in for ``AmazonStateLanguageParser.parse``: ANTLR parses each definition
    once; every call builds fresh components from the kept tree."""

    def __init__(self, parse: Parse) -> None:
        self.parse = parse
        self.trees: dict[str, ParserRuleContext] = {}
        self.lock = threading.Lock()

    def __call__(self, definition: str) -> tuple[EvalComponent, ParserRuleContext]:
        from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

        tree = self.trees.get(definition)
        if tree is None:
            program, tree = self.parse(definition)  # raises on an invalid definition
            with self.lock:
                self.trees.setdefault(definition, with_texts(tree))
            return program, tree
        return Preprocessor().visit(tree), tree


def install(exit_stack: contextlib.ExitStack) -> None:
    parse = original(TARGET).__func__  # a staticmethod
    replace(exit_stack, TARGET, staticmethod(DefinitionParses(parse)))
