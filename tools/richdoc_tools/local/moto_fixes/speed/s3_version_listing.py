"""ListObjectVersions copies only the keys under its prefix.

moto answers ``ListObjectVersions`` by deep-copying every version of every key in the
bucket, bodies and all, before it looks at the prefix: each call costs the whole
bucket's bytes, so a stack slows down as its artifact and manifest buckets fill (the
pipeline lists one key's versions per artifact it reads and per manifest it writes;
bench/, item 5). A key outside the prefix is dropped by the listing whatever it holds,
and, when no ``KeyMarker`` is given, nothing about it reaches the answer (pagination
skips only from a marker; ``IsLatest`` compares a version with the versions of its own
key). So for a first page the replacement hands moto a view of the bucket holding only
the keys under the prefix; a page after a marker is answered by moto's own code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.s3.models.S3Backend.list_object_versions"
PATCHED = (TARGET,)

Listing = Callable[..., Any]


class KeysUnderPrefix:
    """What moto's listing reads of ``bucket.keys``: its key lists, under ``prefix``."""

    def __init__(self, keys: Any, prefix: str) -> None:
        self.all_keys = keys
        self.prefix = prefix

    def iterlists(self) -> Iterator[tuple[str, list[Any]]]:
        for key, versions in self.all_keys.iterlists():
            if key.startswith(self.prefix):
                yield key, versions


class BucketUnderPrefix:
    """What moto's listing reads of a bucket (``keys``), limited to a prefix."""

    def __init__(self, bucket: Any, prefix: str) -> None:
        self.keys = KeysUnderPrefix(bucket.keys, prefix)


class BackendUnderPrefix:
    """What moto's listing reads of the backend (``get_bucket``), limited to a prefix."""

    def __init__(self, backend: Any, prefix: str) -> None:
        self.backend = backend
        self.prefix = prefix

    def get_bucket(self, bucket_name: str) -> BucketUnderPrefix:
        return BucketUnderPrefix(self.backend.get_bucket(bucket_name), self.prefix)


class FirstPagesUnderPrefix:
    """Stands in for ``S3Backend.list_object_versions``."""

    def __init__(self, listing: Listing) -> None:
        self.listing = listing

    def __get__(self, backend: object, owner: type | None = None) -> Listing:
        def bound(bucket_name: str, *args: Any, **kwargs: Any) -> Any:
            return self.answer(backend, bucket_name, *args, **kwargs)

        return bound

    def answer(
        self,
        backend: Any,
        bucket_name: str,
        delimiter: str | None = None,
        key_marker: str | None = None,
        max_keys: int | None = 1000,
        prefix: str = "",
        version_id_marker: str | None = None,
    ) -> Any:
        scope = backend if key_marker is not None or not prefix else None
        return self.listing(
            scope or BackendUnderPrefix(backend, prefix),
            bucket_name,
            delimiter=delimiter,
            key_marker=key_marker,
            max_keys=max_keys,
            prefix=prefix,
            version_id_marker=version_id_marker,
        )


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, FirstPagesUnderPrefix(original(TARGET)))
