"""Which of a source object's user metadata and tags travel with its results.

An allow-listed prefix (template parameter ``MetadataPrefix``, ``richdoc-`` by default)
picks them: user metadata (``x-amz-meta-<name>``, whose names S3 stores in lower case) and
object tags whose names begin with it are copied into the job record when the job is
created, and from there into the manifest and the completion events, where EventBridge
rules can route by them. An empty prefix copies nothing. A name that is both a metadata
name and a tag key keeps the metadata's value.

S3 returns a metadata value that holds non-ASCII characters RFC 2047-encoded
(``=?UTF-8?B?...?=``: it decodes such values when it stores them and encodes them to
make them mail-safe when it returns them), so each value is decoded here
(``decoded_value``) and travels as the text the uploader meant: a rule on
``"richdoc-tenant": ["Zoë"]`` matches. Tags come back as UTF-8, as they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from email.errors import HeaderParseError
from email.header import decode_header, make_header

# The prefix's environment variable (the starter's; template parameter MetadataPrefix).
METADATA_PREFIX_ENV = "RICHDOC_METADATA_PREFIX"
DEFAULT_PREFIX = "richdoc-"


def prefix_from_env() -> str:
    return os.environ.get(METADATA_PREFIX_ENV, DEFAULT_PREFIX)


def decoded_value(value: str) -> str:
    """A user metadata value as S3 returned it, RFC 2047 encoded-words decoded; a value
    without encoded words (or with malformed ones) as it is."""
    if "=?" not in value:
        return value
    try:
        decoded = str(make_header(decode_header(value)))
    except (HeaderParseError, LookupError, UnicodeDecodeError, ValueError):
        return value
    return decoded if decoded or not value.strip() else value  # nothing decodable: as is


def passed_through(
    metadata: Mapping[str, str], tags: Iterable[tuple[str, str]], prefix: str
) -> dict[str, str]:
    """The metadata (decoded) and tags named with ``prefix``, metadata first; {} for an
    empty prefix."""
    if not prefix:
        return {}
    kept = {name: value for name, value in tags if name.startswith(prefix)}
    kept.update(
        (name, decoded_value(value)) for name, value in metadata.items() if name.startswith(prefix)
    )
    return dict(sorted(kept.items()))
