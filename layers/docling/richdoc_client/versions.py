"""Schema versions, and the rule by which the published documents evolve.

Every published schema has a semantic version ``MAJOR.MINOR``. A document names its
family in ``schema`` (``richdoc.manifest/v1``: the major version, unchanged by every
minor release, so a rule or a reader that matches it keeps matching) and its version in
``schema_version`` (``"1.1"``). Chunk lines carry neither: ``chunks.jsonl`` is read
with the projection it was cut from, and its schema's version is ``chunks.VERSION``.

The rule, within a major version:

* a release may only add members, and an added member is optional (documents of the
  minors before it lack it; its schema says since when, ``x-richdoc-since``);
* nothing is removed, retyped or made required, and no closed vocabulary (statuses,
  failure kinds, labels) gains or loses a value: those are a new major version;
* every reader accepts members it does not know (they are ignored) and documents of
  every earlier minor.

A document that names its schema but not its version was written before versions
existed: it is ``1.0``. The released schemas are committed under ``schemas/released/``
and never change; ``tests/unit/test_schemas.py`` fails on a release that breaks the
rule (docs/consumers.md, "How the documents evolve").
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BaseModel, Field, model_validator

MAJOR: Final = 1
#: Documents that name their schema and no version were written as this one.
FIRST: Final = f"{MAJOR}.0"
VERSION_PATTERN: Final = rf"^{MAJOR}\.(0|[1-9][0-9]*)$"
SchemaVersion = Annotated[str, Field(pattern=VERSION_PATTERN)]
#: The annotation a member added after a major's first release carries in its schema.
SINCE_KEY: Final = "x-richdoc-since"


def since(version: str) -> dict[str, Any]:
    """The ``json_schema_extra`` of a member added in ``version`` (optional for readers)."""
    return {SINCE_KEY: version}


def minor(version: str) -> int:
    return int(version.split(".")[1])


class Versioned(BaseModel):
    """A published document that names its schema version (``schema_version``)."""

    @model_validator(mode="before")
    @classmethod
    def _written_before_versions(cls, data: object) -> object:
        if isinstance(data, dict) and "schema" in data and "schema_version" not in data:
            return {**data, "schema_version": FIRST}
        return data
