"""An UpdateExpression parsed once per expression text, not twice per request.

moto tokenizes and parses an UpdateItem's expression twice (the request handler reads
the names and values it uses; the backend validates and applies it), and an update in a
transaction once more. The stack's handlers send the same few expressions again and again,
and parsing was about a twentieth of the embedded stack's CPU (bench/, item 5). The parsed
tree is only read: the handler searches it for placeholders, and the backend's validator
deep-copies it before it resolves names and values into the copy (the canary checks both,
and that a tree stays the same through updates). So the replacement keeps the last trees
parsed, one per expression text, and hands out the same tree; an expression moto refuses
is parsed, and refused, every time.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.dynamodb.parsing.expressions.UpdateExpressionParser.make"
PATCHED = (TARGET,)

# More than the stack's handlers send; a test's generated expressions just cycle through.
KEPT = 512


def install(exit_stack: contextlib.ExitStack) -> None:
    parse = original(TARGET).__func__  # a classmethod: the function under it
    replace(exit_stack, TARGET, classmethod(_kept(parse)))


# moto's parser module opts out of type checking: its trees are Any here.
Parse = Callable[[type, str], Any]


def _kept(parse: Parse) -> Parse:
    @functools.lru_cache(maxsize=KEPT)
    def make(parser: type, expression_str: str) -> Any:  # moto's parameter name
        return parse(parser, expression_str)

    return make
