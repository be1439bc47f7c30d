"""Non-ASCII user metadata is stored decoded and returned RFC 2047-encoded.

What moto does: it stores and returns user metadata values as they came: a raw UTF-8
value came back raw, so code that copied ``Metadata`` as it is passed every test and
carried ``=?UTF-8?B?...?=`` into job records, manifests and events on AWS (an
EventBridge rule on the plain value never matched).

What AWS does: S3 decodes a value's RFC 2047 encoded-words when it stores the object and,
when it returns the metadata (GetObject, HeadObject), encodes every value that holds a
non-ASCII character as an encoded-word, ``=?UTF-8?B?<base64>?=`` ("User-defined object
metadata":
https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingMetadata.html#UserMetadata).

The fix stores what S3 stores (``FakeKey.set_metadata``) and returns what S3 returns
(``FakeKey.metadata``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
from collections.abc import Callable
from email.errors import HeaderParseError
from email.header import decode_header, make_header
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.s3.models import FakeKey
    from moto.utilities.utils import LowercaseDict

SET_TARGET = "moto.s3.models.FakeKey.set_metadata"
GET_TARGET = "moto.s3.models.FakeKey.metadata"
PATCHED = (SET_TARGET, GET_TARGET)

USER_PREFIX = "x-amz-meta-"


def encoded(value: str) -> str:
    """``value`` as S3 returns it: an encoded-word when it holds a non-ASCII character."""
    if value.isascii():
        return value
    return f"=?UTF-8?B?{base64.b64encode(value.encode()).decode('ascii')}?="


def decoded(value: str) -> str:
    """``value`` as S3 stores it: its encoded-words decoded."""
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (HeaderParseError, LookupError, UnicodeDecodeError, ValueError):
        return value


def _is_user(name: object) -> bool:
    return isinstance(name, str) and name.lower().startswith(USER_PREFIX)


def storing_decoded(
    set_metadata: Callable[[FakeKey, Any, bool], None],
) -> Callable[[FakeKey, Any, bool], None]:
    @functools.wraps(set_metadata)
    def set_decoded(self: FakeKey, metadata: Any, replace: bool = False) -> None:
        for name in list(metadata.keys()):
            value = metadata[name]
            if _is_user(name) and isinstance(value, str):
                metadata[name] = decoded(value)
        set_metadata(self, metadata, replace)

    return set_decoded


def returning_encoded(metadata: property) -> property:
    getter: Callable[[FakeKey], LowercaseDict] | None = metadata.fget
    assert getter is not None

    @functools.wraps(getter)
    def encoded_metadata(self: FakeKey) -> LowercaseDict:
        stored = getter(self)
        if not any(
            _is_user(n) and isinstance(v, str) and not v.isascii() for n, v in stored.items()
        ):
            return stored
        shown = type(stored)()
        for name, value in stored.items():
            shown[name] = encoded(value) if _is_user(name) and isinstance(value, str) else value
        return shown

    return property(encoded_metadata)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, SET_TARGET, storing_decoded(original(SET_TARGET)))
    replace(exit_stack, GET_TARGET, returning_encoded(original(GET_TARGET)))
