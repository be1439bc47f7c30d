"""The bases of the published models: field names are the wire names, and a key the model
does not know is refused (the JSON Schemas say ``additionalProperties: false``)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FrozenWireModel(WireModel):
    model_config = ConfigDict(frozen=True)


class AbsentOmitted(BaseModel):
    """A model whose unknown members are absent from the file, never null: every dump of
    it leaves them out, so ``model_dump`` and ``model_dump_json`` write what the file has."""

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class Additions(BaseModel):
    """A model with members added within its schema's version (``ADDED``): each is left
    out of every dump while it is None, so a file says nothing of what was not known, and
    files written before the member existed read the same way."""

    ADDED: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_unknown_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {
            key: value for key, value in data.items() if value is not None or key not in self.ADDED
        }
