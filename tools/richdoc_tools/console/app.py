"""The console's Flask application, made by ``create_app`` from its settings.

The settings (``ConsoleSettings``) are injected, not read from the environment: the
stack's ``Operator``, the access and CSRF tokens, the port the Host allowlist names. Each
page group is a blueprint; ``security.install`` guards every request; every template is
autoescaped, whatever its name.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from flask import Flask, current_app

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


def create_app(config: ConsoleSettings) -> Flask:
    from richdoc_tools.console import deadletters, document, fleet, job, jobs, security

    app = Flask(__name__)
    app.extensions[EXTENSION] = config
    # Every template, whatever its file name: user-controlled text is always data.
    app.jinja_env.autoescape = True
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.config["MAX_CONTENT_LENGTH"] = 2 << 30  # the bucket takes far bigger; a browser won't
    app.config["JSON_SORT_KEYS"] = False
    security.install(app, config)
    for blueprint in (jobs.blueprint, job.blueprint, deadletters.blueprint, document.blueprint):
        app.register_blueprint(blueprint)
    app.register_blueprint(fleet.blueprint)
    return app
