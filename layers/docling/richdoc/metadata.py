"""Which of a source object's user metadata and tags travel with its results.

An allow-listed prefix (template parameter ``MetadataPrefix``, ``richdoc-`` by default)
picks them: user metadata (``x-amz-meta-<name>``, whose names S3 stores in lower case) and
object tags whose names begin with it are copied, as they are, into the job record when
the job is created, and from there into the manifest and the completion events, where
EventBridge rules can route by them. An empty prefix copies nothing. A name that is both
a metadata name and a tag key keeps the metadata's value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# The prefix's environment variable (the starter's; template parameter MetadataPrefix).
METADATA_PREFIX_ENV = "RICHDOC_METADATA_PREFIX"
DEFAULT_PREFIX = "richdoc-"


def prefix_from_env() -> str:
    return os.environ.get(METADATA_PREFIX_ENV, DEFAULT_PREFIX)


def passed_through(
    metadata: Mapping[str, str], tags: Iterable[tuple[str, str]], prefix: str
) -> dict[str, str]:
    """The metadata and tags named with ``prefix``, metadata first; {} for an empty prefix."""
    if not prefix:
        return {}
    kept = {name: value for name, value in tags if name.startswith(prefix)}
    kept.update((name, value) for name, value in metadata.items() if name.startswith(prefix))
    return dict(sorted(kept.items()))
