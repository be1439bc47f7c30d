"""Each JSONPath of the definition parsed once, not at every evaluation.

moto's Amazon States Language interpreter evaluates a path (``InputPath``, ``OutputPath``,
``ResultPath``, a parameter's ``.$``) by calling jsonpath-ng's ``parse``, which builds a
new PLY parser, tables and all, every time: several percent of the embedded stack's CPU
per job (bench/, item 5). A parsed path is an immutable expression (``find`` and
``update_or_create`` work on the data they are given), so the replacement keeps one per
path text for the stack's life, for the two modules that parse.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patch_targets import original, replace

EXTRACT = "moto.stepfunctions.parser.asl.utils.json_path.parse"  # jsonpath_ng.ext.parse
RESULT = "moto.stepfunctions.parser.asl.component.common.path.result_path.parse"
PATCHED = (EXTRACT, RESULT)


def parsed_once(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    return functools.lru_cache(maxsize=4096)(parse)


def install(exit_stack: contextlib.ExitStack) -> None:
    for target in PATCHED:
        replace(exit_stack, target, parsed_once(original(target)))
