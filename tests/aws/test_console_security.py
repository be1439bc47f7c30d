"""The console's protections (``richdoc_tools.console.security``): the access token and its
cookie, the Host allowlist against DNS rebinding, cross-site requests refused, the
response headers, downloads that cannot run, user-controlled text escaped."""

from __future__ import annotations

import io
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

import pytest
from flask.testing import FlaskClient
from richdoc_tools.console.app import create_app
from richdoc_tools.console.security import CONTENT_SECURITY_POLICY
from richdoc_tools.console.settings import ConsoleSettings

from richdoc.jobs import DeadLetterMark, JobStatus
from richdoc.taxonomy import Failure, FailureKind
from tests.support.console import BASE_URL, PORT, Console, job, make_console

HOSTILE = '<script>window.__pwned=1</script>"><img src=x onerror=alert(1)>\u202egpj.html'


@pytest.fixture
def console(aws: None, template: Any) -> Console:
    return make_console(template)


@pytest.fixture
def stranger(console: Console) -> FlaskClient:
    """A client without the cookie (another page, another user of the machine)."""
    return console.app.test_client()


PAGES = [
    "/jobs",
    "/jobs.json",
    "/jobs?format=json",
    "/dead-letters",
    "/failures.json",
    "/static/console.js",
    "/static/console.css",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_request_needs_the_token(stranger: FlaskClient, path: str) -> None:
    response = stranger.get(path, base_url=BASE_URL)
    assert response.status_code == 403
    assert "the URL it printed" in response.get_data(as_text=True)


def test_a_wrong_token_or_cookie_is_refused(console: Console, stranger: FlaskClient) -> None:
    assert stranger.get("/jobs?token=guess", base_url=BASE_URL).status_code == 403
    assert stranger.get("/jobs?token=é", base_url=BASE_URL).status_code == 403
    stranger.set_cookie(console.settings.cookie_name, "guess", domain="127.0.0.1")
    assert stranger.get("/jobs", base_url=BASE_URL).status_code == 403


def test_the_token_becomes_an_http_only_same_site_cookie_and_leaves_the_address(
    console: Console, stranger: FlaskClient
) -> None:
    token = console.settings.token
    entered = stranger.get(f"/jobs?status=FAILED&token={token}", base_url=BASE_URL)
    assert entered.status_code == 303
    assert entered.headers["Location"] == "/jobs?status=FAILED"  # no token in history
    cookie = entered.headers["Set-Cookie"]
    assert cookie.startswith(f"{console.settings.cookie_name}={token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert stranger.get("/jobs", base_url=BASE_URL).status_code == 200
    # A POST cannot sign in.
    assert (
        console.app.test_client().post(f"/uploads?token={token}", base_url=BASE_URL).status_code
        == 403
    )


@pytest.mark.parametrize(
    "host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:1", f"127.0.0.2:{PORT}", ""]
)
def test_a_host_outside_the_allowlist_is_refused_even_with_the_cookie(
    console: Console, host: str
) -> None:
    response = console.client.get("/jobs", base_url=BASE_URL, headers={"Host": host})
    assert response.status_code == 403
    assert "127.0.0.1 and localhost" in response.get_data(as_text=True)


def test_localhost_is_allowed_too(console: Console, stranger: FlaskClient) -> None:
    local = f"http://localhost:{PORT}"
    assert stranger.get(f"/?token={console.settings.token}", base_url=local).status_code == 303
    assert stranger.get("/jobs", base_url=local).status_code == 200


def _upload(console: Console, **kwargs: Any) -> Any:
    return console.post(
        "/uploads",
        data={"files": [(io.BytesIO(b"# a\n"), "a.md")]},
        content_type="multipart/form-data",
        **kwargs,
    )


def test_a_post_without_the_csrf_token_is_refused(console: Console) -> None:
    assert _upload(console, csrf=False).status_code == 403
    assert _upload(console, csrf=False, headers={"X-CSRF-Token": "forged"}).status_code == 403
    ok = _upload(console, headers={"Accept": "application/json"})
    assert ok.status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": f"http://127.0.0.1:{PORT + 1}"},
    ],
)
def test_a_cross_site_post_is_refused_even_with_the_token_and_cookie(
    console: Console, headers: dict[str, str]
) -> None:
    response = _upload(console, headers=headers)
    assert response.status_code == 403
    assert console.operator.s3.list_objects_v2(Bucket="ingest").get("KeyCount") == 0


@pytest.mark.parametrize(
    "origin",
    [
        BASE_URL,
        # A form of the page itself: no-referrer makes the browser send "null".
        "null",
    ],
)
def test_a_same_origin_post_from_the_page_is_accepted(console: Console, origin: str) -> None:
    headers = {"Sec-Fetch-Site": "same-origin", "Origin": origin, "Accept": "application/json"}
    assert _upload(console, headers=headers).status_code == 200


def test_actions_are_post_only(console: Console) -> None:
    assert console.get("/uploads").status_code == 405
    assert console.get("/dead-letters/redrive").status_code == 405
    assert console.get("/dead-letters/discard").status_code == 405


@pytest.mark.parametrize("path", ["/jobs", "/jobs.json", "/nowhere", "/static/console.js"])
def test_every_response_carries_the_policy_headers(console: Console, path: str) -> None:
    response = console.get(path)
    policy = response.headers["Content-Security-Policy"]
    assert policy == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Frame-Options"] == "DENY"
    refused = console.app.test_client().get(path, base_url=BASE_URL)
    assert refused.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_the_pages_have_no_inline_script_or_style(console: Console) -> None:
    source = console.put_source("a.md", b"# a\n")
    console.put_job(job(1, source))
    for path in ("/jobs", "/dead-letters", "/failures", f"/jobs/{1:032x}/nowhere"):
        html = console.get(path).get_data(as_text=True)
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), path  # only external scripts
        assert "<style" not in html and " style=" not in html and " on" + "click=" not in html
        assert not re.search(r"\son[a-z]+=", html), path


def test_an_uploaded_source_is_only_ever_a_download(console: Console) -> None:
    page = b"<html><script>window.__pwned = 1</script></html>"
    source = console.put_source(HOSTILE, page)
    console.put_job(job(1, source))
    response = console.get(f"/jobs/{1:032x}/source")
    assert response.get_data() == page
    assert response.mimetype == "application/octet-stream"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment;")
    fallback, encoded = disposition.split("; ", 2)[1:]
    assert re.fullmatch(r'filename="[A-Za-z0-9._-]+"', fallback)  # nothing to misread
    # The name, exactly: the key's last segment (the key has a "/" in "</script>").
    assert encoded == "filename*=UTF-8''" + quote(PurePosixPath(HOSTILE).name, safe="")
    assert response.headers["Content-Security-Policy"] == "default-src 'none'; sandbox"


def test_user_controlled_text_is_escaped_in_every_page(console: Console) -> None:
    source = console.put_source(HOSTILE, b"<h1>x</h1>")
    failure = Failure(FailureKind.CORRUPT_INPUT, HOSTILE, feature=HOSTILE, error=HOSTILE)
    mark = DeadLetterMark(message_id=HOSTILE, sent_by="sweep")
    console.put_job(
        job(1, source, status=JobStatus.DEAD_LETTERED, failure=failure, dead_letter=mark)
    )
    for path in ("/jobs", f"/jobs/{1:032x}", "/dead-letters"):
        html = console.get(path).get_data(as_text=True)
        assert "<script>window.__pwned" not in html and "<img src=x" not in html, path
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;&#34;&gt;&lt;img" in html, path
    data = console.json("/jobs.json")
    assert data["jobs"][0]["source"]["key"] == HOSTILE  # JSON keeps the text exactly (data)


def test_another_console_on_another_port_has_its_own_cookie(console: Console) -> None:
    other = ConsoleSettings(operator=console.operator, port=PORT + 1, stack_label="x")
    assert other.cookie_name != console.settings.cookie_name
    client = create_app(other).test_client()
    # The first console's cookie does not open the second.
    client.set_cookie(console.settings.cookie_name, console.settings.token, domain="127.0.0.1")
    assert client.get("/jobs", base_url=f"http://127.0.0.1:{PORT + 1}").status_code == 403
