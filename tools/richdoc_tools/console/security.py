"""The console's protections, applied once to every request and response.

The console holds the operator's AWS credentials, so a page on another site must not be
able to use it, and nothing it shows may run as code:

* it listens on 127.0.0.1 only (``server``), and a request must name it as
  ``127.0.0.1:PORT`` or ``localhost:PORT`` in its Host header: a DNS name rebound to
  127.0.0.1 is refused (403);
* a random access token is printed at start; ``?token=`` on any page trades it for an
  HttpOnly, SameSite=Strict cookie (and a redirect that drops it from the address bar and
  the history); any request without the cookie is refused (403);
* requests that change something are POSTs, refused (403) when the browser says they
  come from another site (``Sec-Fetch-Site``), from another origin (``Origin``), or
  without the CSRF token the pages carry (a form field or the ``X-CSRF-Token`` header);
* every response forbids inline scripts and styles and any other origin
  (Content-Security-Policy ``default-src 'self'``), framing, MIME sniffing and referrers.
"""

from __future__ import annotations

import hmac
import re
from urllib.parse import quote, urlencode

from flask import Flask, current_app, jsonify, redirect, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from richdoc_tools.console.settings import ConsoleSettings

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
TOKEN_PARAMETER = "token"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}
# What a download carries instead: nothing in it may run, even opened in a tab.
DOWNLOAD_POLICY = "default-src 'none'; sandbox"


def same(given: str | None, expected: str) -> bool:
    """A constant-time comparison of a secret (any text given, even non-ASCII)."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def wants_json() -> bool:
    return (
        request.path.endswith(".json")
        or request.args.get("format") == "json"
        or request.accept_mimetypes.best == "application/json"
    )


def refused(status: int, message: str) -> Response:
    """An error response: JSON for the JSON twins and scripts, a page for people."""
    response: Response
    if wants_json():
        response = jsonify(error=status, message=message)
    else:
        response = current_app.response_class(
            render_template("error.html", status=status, message=message), mimetype="text/html"
        )
    response.status_code = status
    return response


def install(app: Flask, config: ConsoleSettings) -> None:
    hosts = {f"127.0.0.1:{config.port}", f"localhost:{config.port}"}
    origins = {f"http://{host}" for host in hosts}

    @app.before_request
    def guard() -> Response | None:
        if request.host not in hosts:
            return refused(403, "this console answers only to 127.0.0.1 and localhost")
        token = request.args.get(TOKEN_PARAMETER)
        if token is not None:
            if not same(token, config.token) or request.method != "GET":
                return refused(403, "wrong access token")
            return _enter(config)
        if not same(request.cookies.get(config.cookie_name), config.token):
            return refused(
                403, "open the console with the URL it printed (it holds the access token)"
            )
        if request.method in ("GET", "HEAD"):
            return None
        site = request.headers.get("Sec-Fetch-Site")
        if site not in (None, "same-origin"):
            return refused(403, "a request from another site is refused")
        origin = request.headers.get("Origin")
        # Under Referrer-Policy no-referrer a browser sends "Origin: null" with the page's
        # own form posts; it is taken only when the browser also says same-origin.
        same_page_form = origin == "null" and site == "same-origin"
        if origin is not None and origin not in origins and not same_page_form:
            return refused(403, "a request from another origin is refused")
        sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD)
        if not same(sent, config.csrf_token):
            return refused(403, "the form is stale or forged: reload the page and try again")
        return None

    @app.after_request
    def protect(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        return refused(error.code or 500, error.description or error.name)

    @app.context_processor
    def tokens() -> dict[str, str]:
        return {"csrf_token": config.csrf_token, "stack_label": config.stack_label}


def attachment(data: bytes, filename: str, mimetype: str) -> Response:
    """A download: ``Content-Disposition: attachment`` with the name as RFC 6266 spells it
    (``filename*``, percent-encoded UTF-8) and a plain ASCII stand-in for old clients, and
    a policy under which nothing in it could run even if a browser displayed it."""
    fallback = re.sub(r"[^A-Za-z0-9._-]+", "_", filename).strip("_.") or "download"
    response = current_app.response_class(data, mimetype=mimetype)
    response.headers["Content-Disposition"] = (
        f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
    )
    response.headers["Content-Security-Policy"] = DOWNLOAD_POLICY
    return response


def _enter(config: ConsoleSettings) -> Response:
    """Trade the token in the address for the cookie; back to the same page without it."""
    rest = [(k, v) for k, v in request.args.items(multi=True) if k != TOKEN_PARAMETER]
    target = request.path + ("?" + urlencode(rest) if rest else "")
    response = redirect(target, code=303)
    response.set_cookie(
        config.cookie_name, config.token, httponly=True, samesite="Strict", path="/"
    )
    return response
