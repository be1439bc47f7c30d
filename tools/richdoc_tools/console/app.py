"""The console's Flask application, made by ``create_app`` from its settings.

The factory is the one module that knows every page group: it registers each blueprint
and installs ``security``; the blueprints import only leaves (``settings``, ``forms``,
``twins``, ``security``, ``summaries``) and the operator's services, never this module.
Every template is autoescaped, whatever its name.
"""

from __future__ import annotations

from flask import Flask

from richdoc_tools.console import deadletters, document, fleet, job, jobs, security
from richdoc_tools.console.settings import EXTENSION, ConsoleSettings
from richdoc_tools.ops.backlog import duration


def create_app(config: ConsoleSettings) -> Flask:
    app = Flask(__name__)
    app.extensions[EXTENSION] = config
    # Every template, whatever its file name: user-controlled text is always data.
    app.jinja_env.autoescape = True
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["duration"] = duration  # 95 -> 1m35s
    app.config["MAX_CONTENT_LENGTH"] = 2 << 30  # the bucket takes far bigger; a browser won't
    app.config["JSON_SORT_KEYS"] = False
    security.install(app, config)
    for page_group in (jobs, job, deadletters, document, fleet):
        app.register_blueprint(page_group.blueprint)
    return app
