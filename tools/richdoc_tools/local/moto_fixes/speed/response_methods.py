"""The names of a response class's methods, read once per class.

moto's request handling (``BaseResponse.call_action``) looks the action up among the
response class's method names, which it reads with ``inspect.getmembers`` on every
request: a few percent of the embedded stack's CPU per job (bench/, item 5), for an
answer that depends only on the class. The replacement keeps each class's names for the
stack's life; patch points that add a method moto lacks (``redrive_execution``) are
installed before the first request, in the same group.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.core.responses.method_names_from_class"
PATCHED = (TARGET,)


def once_per_class(names: Callable[[object], list[str]]) -> Callable[[object], frozenset[str]]:
    @functools.cache
    def method_names_from_class(clazz: object) -> frozenset[str]:
        return frozenset(names(clazz))  # moto only asks whether an action is among them

    return method_names_from_class


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, once_per_class(original(TARGET)))
