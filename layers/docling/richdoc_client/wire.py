"""The bases of the published models: field names are the wire names, and a member the
model does not know is ignored, so a reader of one minor version reads the documents of
every later one (``richdoc_client.versions`` states the rule)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer
from pydantic.json_schema import SkipJsonSchema


class WireModel(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FrozenWireModel(WireModel):
    model_config = ConfigDict(frozen=True)


class AbsentOmitted(BaseModel):
    """A model with members that are absent from the file when they have no value.

    Such a member is typed ``T | SkipJsonSchema[None]``: None is not a value it holds on
    the wire (its schema admits no null and does not require it), so every dump leaves it
    out while it is None, and a file without it reads as None. That covers a prop docling
    gives no value for (a node's ``page``) and a member added by a minor version that a
    document has nothing to say in (``since``: an ``ocr_confidence`` of native text), so
    files written before the member existed and files without its subject read alike.
    A member typed ``T | None`` is written, as ``null``.
    """

    _ABSENT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._ABSENT_WHEN_NONE = frozenset(
            key
            for name, field in cls.model_fields.items()
            if _holds_no_null(field.annotation)
            for key in (name, field.serialization_alias or name)
        )

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        absent = self._ABSENT_WHEN_NONE
        return {key: value for key, value in data.items() if value is not None or key not in absent}


# pydantic's marker class (typed for checkers as an alias of ``Annotated``).
_SKIP_JSON_SCHEMA: Final = cast(type, SkipJsonSchema)


def _holds_no_null(annotation: Any) -> bool:
    """The annotation is a union with ``SkipJsonSchema[None]``."""
    return any(
        get_origin(option) is Annotated
        and get_args(option)[0] is type(None)
        and any(isinstance(meta, _SKIP_JSON_SCHEMA) for meta in option.__metadata__)
        for option in get_args(annotation)
    )
