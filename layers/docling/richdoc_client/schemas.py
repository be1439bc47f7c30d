"""The published JSON Schemas, generated from the models (``make schemas`` writes them to
``schemas/``; a test holds the committed files equal to these).

Each schema has the version of its model (``richdoc_client.versions``): the current one
of the major version is ``schemas/<name>.v1.schema.json``, and every release is kept
unchanged as ``schemas/released/<name>-<version>.schema.json``.

A member is optional in a schema when the file leaves it out when it has no value (a
node's ``page`` without provenance, a candidate's ``validFrom``), or when it was added
after the major version's first release (older documents lack it; it says since when);
every other member, defaults and nulls included, is always written, so the schema
requires it. Unknown members are allowed: readers ignore them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from richdoc_client import chunks, detection, events, manifest, projection
from richdoc_client.versions import MAJOR, SINCE_KEY

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


#: Where the released schemas are kept, under schemas/.
RELEASED = "released"


@dataclass(frozen=True)
class Published:
    name: str  # the schema's file is schemas/<name>.v1.schema.json
    schema_id: str  # the document's own ``schema`` value, or the line's
    version: str  # MAJOR.MINOR (richdoc_client.versions)
    model: type[BaseModel]
    description: str

    @property
    def file_name(self) -> str:
        return f"{self.name}.v{MAJOR}.schema.json"

    @property
    def released_name(self) -> str:
        """This version's file under schemas/released/."""
        return f"{self.name}-{self.version}.schema.json"


PUBLISHED: tuple[Published, ...] = (
    Published(
        "projection",
        projection.SCHEMA,
        projection.VERSION,
        projection.Projection,
        "projection.json",
    ),
    Published(
        "detection", detection.SCHEMA, detection.VERSION, detection.Detection, "detection.json"
    ),
    Published("chunk", chunks.SCHEMA, chunks.VERSION, chunks.Chunk, "a line of chunks.jsonl"),
    Published(
        "manifest",
        manifest.SCHEMA,
        manifest.VERSION,
        manifest.Manifest,
        "documents/<document id>/manifest.json",
    ),
    Published(
        "event",
        events.SCHEMA,
        events.VERSION,
        events.CompletionDetail,
        "a completion event's detail",
    ),
)


def json_schema(published: Published) -> dict[str, Any]:
    schema = published.model.model_json_schema(by_alias=True, mode="validation")
    _require_what_is_written(schema)
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"urn:{published.schema_id.replace('/', ':')}",
        "description": (
            f"{published.description} ({published.schema_id}, version {published.version})"
        ),
        "x-richdoc-version": published.version,
        **schema,
    }


def schema_bytes(published: Published) -> bytes:
    return (json.dumps(json_schema(published), indent=2, sort_keys=True) + "\n").encode()


def _require_what_is_written(node: Any) -> None:
    """Every object's members with a default: optional when the default is a null the
    member may not hold (the model leaves it out) or the member was added after the
    major version's first release, else required; no default is kept."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = node.setdefault("required", [])
            for name, member in properties.items():
                if not isinstance(member, dict) or "default" not in member:
                    continue
                absent_when_unknown = member.pop("default") is None and not _allows_null(member)
                if not (absent_when_unknown or SINCE_KEY in member) and name not in required:
                    required.append(name)
        for value in node.values():
            _require_what_is_written(value)
    elif isinstance(node, list):
        for value in node:
            _require_what_is_written(value)


def _allows_null(node: dict[str, Any]) -> bool:
    if node.get("type") == "null":
        return True
    return any(
        isinstance(option, dict) and _allows_null(option) for option in node.get("anyOf", [])
    )
