"""Whom an upload runs for: its tenant.

The tenant is the value of the user metadata or object tag named ``TenantKey`` (template
parameter, e.g. ``richdoc-tenant``; metadata wins over a tag of the same name), and when
``TenantKey`` is empty or the upload carries no such value, the key's first path segment
(``acme/2024/report.pdf`` runs for ``acme``). Keys at the bucket's top level run for the
root tenant, ``/``, which no path segment can be. Admission serves tenants in turn, and
each tenant's uploads in the order they arrived (``richdoc.admission``).

S3 returns a metadata value that holds a non-ASCII character RFC 2047-encoded
(``=?UTF-8?B?...?=``); the value is decoded as ``richdoc.metadata`` decodes the metadata
that travels with the results, so an upload whose metadata names ``Café`` runs for the
same tenant as one whose tag does.

A tenant is user data: stored as it is (cut to ``MAX_TENANT_CHARS``), escaped wherever it
is shown, never interpreted.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from richdoc.metadata import decoded_value

TENANT_KEY_ENV = "RICHDOC_TENANT_KEY"
ROOT_TENANT = "/"
# A tenant is part of its item's partition key (at most 2,048 bytes); this keeps it far
# below that in any script.
MAX_TENANT_CHARS = 256


def tenant_key_from_env() -> str:
    return os.environ.get(TENANT_KEY_ENV, "").strip().lower()


def tenant_of(
    key: str,
    *,
    metadata: Mapping[str, str] | None = None,
    tags: Iterable[tuple[str, str]] = (),
    tenant_key: str = "",
) -> str:
    """The tenant of an upload at ``key`` with this user metadata and these tags."""
    if tenant_key:
        named = (metadata or {}).get(tenant_key)
        if named:
            named = decoded_value(named)  # as S3 returns it: a non-ASCII value encoded
        else:
            named = next((value for name, value in tags if name == tenant_key), None)
        if named and named.strip():
            return named.strip()[:MAX_TENANT_CHARS]
    segment, slash, _ = key.partition("/")
    if not slash or not segment:
        return ROOT_TENANT
    return segment[:MAX_TENANT_CHARS]
