"""A projection of top-level attributes converts only those attributes.

moto answers a ``ProjectionExpression`` (``GetItem``, ``BatchGetItem``, ``Query``) by
converting the whole item to plain Python once per projected path (``Item.project``),
then keeping the path's part: a job record read for five attributes is converted five
times whole, and the stack reads the jobs that way whenever it waits for them (bench/,
item 5). When every path is one distinct top-level name (no ``.``, no ``[i]``), what
moto keeps of each conversion is exactly that attribute converted on its own, so the
replacement converts only the named attributes, in the same order. Any other projection
(nested paths, list items, a name twice) is answered by moto's own ``project``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.dynamodb.models.dynamo_type.Item.project"
PATCHED = (TARGET,)

Project = Callable[[Any, list[list[str]]], Any]
LIST_ITEM = re.compile(r"(.+)\[(\d+)\]$")  # moto's own test for a list item, in find_nested_key


def top_level_names(paths: list[list[str]]) -> list[str] | None:
    """The names, when every path is one distinct top-level name; else None."""
    names = [path[0] for path in paths if len(path) == 1 and not LIST_ITEM.match(path[0])]
    if len(names) != len(paths) or len(set(names)) != len(names):
        return None
    return names


class TopLevelProjection:
    """Stands in for ``Item.project``."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __get__(self, item: object, owner: type | None = None) -> Callable[[list[list[str]]], Any]:
        def bound(paths: list[list[str]]) -> Any:
            return self.answer(item, paths)

        return bound

    def answer(self, item: Any, paths: list[list[str]]) -> Any:
        names = top_level_names(paths)
        if names is None:
            return self.project(item, paths)
        from moto.dynamodb.models.dynamo_type import Item, deserializer, serializer

        kept = {
            name: deserializer.deserialize(item.attrs[name].to_regular_json())
            for name in names
            if name in item.attrs
        }
        return Item(
            hash_key=item.hash_key,
            range_key=item.range_key,
            attrs=dict(serializer.serialize(kept)["M"]),
        )


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, TopLevelProjection(original(TARGET)))
