"""The bases of the published models: field names are the wire names, and a member the
model does not know is ignored, so a reader of one minor version reads the documents of
every later one (``richdoc_client.versions`` states the rule)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class WireModel(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FrozenWireModel(WireModel):
    model_config = ConfigDict(frozen=True)


class AbsentOmitted(BaseModel):
    """A model whose unknown members are absent from the file, never null: every dump of
    it leaves them out, so ``model_dump`` and ``model_dump_json`` write what the file has."""

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None}
