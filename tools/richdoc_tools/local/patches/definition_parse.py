"""One ANTLR parse per state machine definition.

moto parses the definition with ANTLR again for every execution: most of the
interpreter's CPU per job (bench/, item 5). The parse tree is read-only, so it is kept per
definition; each execution still gets fresh evaluation components built from it, exactly
as moto's own ``parse`` builds them (its ``Preprocessor``), so executions share nothing
mutable.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from richdoc_tools.local.patches.target import original, replace

if TYPE_CHECKING:
    from antlr4 import ParserRuleContext
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent

TARGET = "moto.stepfunctions.parser.asl.parse.asl_parser.AmazonStateLanguageParser.parse"
PATCHED = (TARGET,)

Parse = Callable[[str], "tuple[EvalComponent, ParserRuleContext]"]


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
                self.trees.setdefault(definition, tree)
            return program, tree
        return Preprocessor().visit(tree), tree


def install(exit_stack: contextlib.ExitStack) -> None:
    parse = original(TARGET).__func__  # a staticmethod
    replace(exit_stack, TARGET, staticmethod(DefinitionParses(parse)))
