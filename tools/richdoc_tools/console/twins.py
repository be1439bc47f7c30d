"""Every page and its JSON twin, from one view function (as datasette does).

A view returns its page's model (pydantic); ``page`` registers it at ``RULE`` (the model
rendered by the page's template) and at ``RULE.json`` (the model as JSON), and
``RULE?format=json`` answers JSON too. The pages' scripts poll the twins for live updates,
and anything a person sees is there for a script to read. Actions (POSTs) answer the same
way through ``respond``: JSON when asked for it, else the page.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from flask import Blueprint, current_app, render_template
from pydantic import BaseModel
from werkzeug.wrappers import Response

from richdoc_tools.console.security import wants_json

View = Callable[..., BaseModel | Response]


def respond(model: BaseModel, template: str, *, as_json: bool = False) -> Response:
    if as_json or wants_json():
        return current_app.response_class(model.model_dump_json(), mimetype="application/json")
    return current_app.response_class(render_template(template, page=model), mimetype="text/html")


def page(blueprint: Blueprint, rule: str, template: str) -> Callable[[View], View]:
    """Register a GET view at ``rule`` and ``rule.json``."""

    def register(view: View) -> View:
        @functools.wraps(view)
        def endpoint(as_json: bool, **arguments: object) -> Response:
            result = view(**arguments)
            if isinstance(result, Response):  # a redirect
                return result
            return respond(result, template, as_json=as_json)

        name = view.__name__
        blueprint.add_url_rule(rule, name, endpoint, defaults={"as_json": False})
        blueprint.add_url_rule(rule + ".json", name, endpoint, defaults={"as_json": True})
        return endpoint

    return register
