"""DynamoDB attribute values serialized by their wire format, not walked member by member.

moto serializes a JSON response by walking the output shape. An ``AttributeValue`` is a
structure of ten members (S, N, B, SS, NS, BS, M, L, NULL, BOOL), so every attribute of
every item, old and new image of every stream record, costs ten lookups through the
attribute picker and a serializer call per member: most of what a job's DynamoDB and
stream responses cost the embedded stack (bench/, item 5). The wire format of an
attribute value is fixed (one type tag, its value: a string, a base64 blob, a set, a map
or list of attribute values, a boolean), so the replacement writes it in one pass over
the value, member by member in the shape's order, converting each as moto's serializer
converts its type (strings as ``_serialize_type_string``, blobs as ``_base64``).

It answers only what it can answer exactly: a plain dict with nothing but type tags, in
a JSON-protocol response whose picker has moto's default aliases and no response
transformers. Anything else (another
key, a value it does not know) goes to moto's walk, whole; a canary compares both on
random values.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from enum import Enum
from typing import Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.core.serialize.BaseJSONSerializer._serialize_type_structure"
PATCHED = (TARGET,)

SHAPE = "AttributeValue"

Structure = Callable[[Any, dict[str, Any], Any, Any, str], None]


class NotPlain(Exception):
    """A value the wire format here does not cover: moto's walk serializes it."""


def _string(value: object) -> object:
    if isinstance(value, Enum):
        value = value.value
    return str(value) if value not in [None, {}, []] else value


def wire(serializer: Any, value: Any, shape: Any) -> dict[str, Any]:
    """``value`` (an attribute value as moto keeps it) as the response carries it."""
    if type(value) is not dict:
        raise NotPlain
    members = shape.members
    if not value.keys() <= members.keys():
        raise NotPlain
    out: dict[str, Any] = {}
    for tag, member in members.items():
        item = value.get(tag)
        if item is None:
            continue
        if "name" in member.serialization:  # moto would write it under another name
            raise NotPlain
        kind = member.type_name
        if kind == "string":
            out[tag] = _string(item)
        elif kind == "blob":
            out[tag] = serializer._base64(item)
        elif kind == "boolean":
            out[tag] = item
        elif kind == "map" and type(item) is dict:
            out[tag] = {key: wire(serializer, sub, member.value) for key, sub in item.items()}
        elif kind == "list" and type(item) is list:
            element = member.member
            if "name" in element.serialization:
                raise NotPlain
            if element.type_name == "string":
                out[tag] = [_string(each) for each in item]
            elif element.type_name == "blob":
                out[tag] = [serializer._base64(each) for each in item]
            elif element.type_name == "structure" and element.name == SHAPE:
                out[tag] = [wire(serializer, each, element) for each in item]
            else:
                raise NotPlain
        else:
            raise NotPlain
    return out


def plain_json(serializer: Any) -> bool:
    """A JSON-protocol serializer with moto's default picker: what ``wire`` mirrors."""
    from moto.core.serialize import (
        DEFAULT_ALIAS_PROVIDERS,
        JSONSerializer,
        XFormedAttributePicker,
    )

    picker = getattr(serializer, "_value_picker", None)
    return (
        type(serializer) is JSONSerializer
        and type(picker) is XFormedAttributePicker
        and picker.alias_providers is DEFAULT_ALIAS_PROVIDERS
        and not picker.response_transformers
    )


class AttributeValuesByWire:
    """Stands in for ``BaseJSONSerializer._serialize_type_structure``."""

    def __init__(self, structure: Structure) -> None:
        self.structure = structure

    def __get__(self, serializer: object, owner: type | None = None) -> Callable[..., None]:
        return functools.partial(self.serialize, serializer)

    def serialize(
        self, serializer: Any, serialized: dict[str, Any], value: Any, shape: Any, key: str
    ) -> None:
        if key and shape.name == SHAPE and value is not None and plain_json(serializer):
            try:
                written = wire(serializer, value, shape)
            except NotPlain:
                pass
            else:
                serialized[serializer.get_serialized_name(shape, key)] = written
                return
        self.structure(serializer, serialized, value, shape, key)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, AttributeValuesByWire(original(TARGET)))
