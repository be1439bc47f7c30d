"""Where moto's response serializer looks for a member in a plain dict, worked out once.

moto serializes a response by walking the operation's output shape; for every member of
every structure it asks its attribute picker which keys of the result might hold the
member (``XFormedAttributePicker.get_possible_keys``: six alias providers, each built
and asked anew, each answer also tried in snake_case). For DynamoDB a structure is every
attribute value of every item (ten members: S, N, M, L, ...), so a stream's records or a
job item cost thousands of these questions: the largest part of the serializer's CPU per
job (bench/, item 5). For a plain ``dict`` the answer depends only on the member's key,
its shape and the structure it sits in (a dict has no ``Meta`` of aliases, and its class
name is always ``dict``), so the replacement keeps it per (key, shape, parent); any
other object, or a picker with other alias providers, is asked exactly as moto asks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.core.serialize.XFormedAttributePicker.get_possible_keys"
PATCHED = (TARGET,)

PossibleKeys = Callable[[Any, Any], Iterator[str]]


class KeysOfPlainDicts:
    """Stands in for ``get_possible_keys``: for a plain dict, moto's answer kept per
    member key, shape and parent shape (the shapes kept too, so an id is never reused)."""

    def __init__(self, possible_keys: PossibleKeys) -> None:
        self.possible_keys = possible_keys
        self.answers: dict[tuple[str, int, int], tuple[object, object, tuple[str, ...]]] = {}
        self.lock = threading.Lock()

    def __get__(self, picker: object, owner: type | None = None) -> Callable[[Any], Iterator[str]]:
        def bound(context: Any) -> Iterator[str]:
            return self.keys(picker, context)

        return bound

    @staticmethod
    def default_aliases(picker: object) -> bool:
        from moto.core.serialize import DEFAULT_ALIAS_PROVIDERS

        return getattr(picker, "alias_providers", None) is DEFAULT_ALIAS_PROVIDERS

    def keys(self, picker: object, context: Any) -> Iterator[str]:
        if type(context.obj) is not dict or not self.default_aliases(picker):
            return self.possible_keys(picker, context)
        shape = context.shape
        parent = getattr(shape, "parent", None)
        slot = (context.key, id(shape), id(parent))
        answer = self.answers.get(slot)
        if answer is None or answer[0] is not shape or answer[1] is not parent:
            answer = (shape, parent, tuple(self.possible_keys(picker, context)))
            with self.lock:
                self.answers[slot] = answer
        return iter(answer[2])


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, KeysOfPlainDicts(original(TARGET)))
