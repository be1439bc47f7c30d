"""The console's settings, and the settings of the application serving a request.

A leaf: the factory (``app.create_app``) stores them on the application and every page
reads them through ``settings()``, so no page imports the factory (the shape of Flask's
tutorial). They are injected, not read from the environment: the stack's ``Operator``,
the access and CSRF tokens, the port the Host allowlist names.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from flask import current_app

if TYPE_CHECKING:
    from richdoc_tools.ops.operator import Operator

EXTENSION = "richdoc_console"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class ConsoleSettings:
    operator: Operator
    port: int  # the port the console listens on (the Host and Origin allowlists name it)
    stack_label: str  # what the pages say they show: "embedded stack 'richdoc'", ...
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    page_size: int = 50
    clock: Callable[[], datetime] = _now

    @property
    def cookie_name(self) -> str:
        # Cookies do not keep ports apart: two consoles on one machine need two names.
        return f"richdoc_console_{self.port}"


def settings() -> ConsoleSettings:
    """The settings of the application handling the current request."""
    found: ConsoleSettings = current_app.extensions[EXTENSION]
    return found
