"""A backend's URL table, worked out once per backend class and settings.

moto routes every request by its backend's ``urls``: a property that formats every URL
path of the service with every URL base on each request, and for S3 first reloads the
``moto.s3.urls`` module (its bases depend on ``MOTO_S3_CUSTOM_ENDPOINTS``), an import
with its file-system lookups on every S3 request: about 4 % of the embedded stack's CPU
per job (bench/, item 5). The table depends only on the backend's class and those
settings, so the replacement keeps it per (class, settings) for the stack's life and
works it out again when a setting changes.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patches.target import original, replace

TARGET = "moto.core.base_backend.BaseBackend.urls"
PATCHED = (TARGET,)

# The environment moto's URL tables read (moto.settings).
SETTINGS = ("MOTO_S3_CUSTOM_ENDPOINTS", "MOTO_ENABLE_ISO_REGIONS")

Urls = dict[str, Callable[..., Any]]


def kept(urls: property) -> property:
    tables: dict[tuple[type, tuple[str | None, ...]], Urls] = {}
    lock = threading.Lock()

    def backend_urls(backend: object) -> Urls:
        key = (type(backend), tuple(os.environ.get(name) for name in SETTINGS))
        table = tables.get(key)
        if table is None:
            assert urls.fget is not None
            table = urls.fget(backend)
            with lock:
                tables[key] = table
        return table

    return property(backend_urls, doc=urls.__doc__)


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, kept(original(TARGET)))
