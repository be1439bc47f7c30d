"""A webhook receiver for the tests: a real HTTPS server (``http.server`` behind TLS, its
certificate issued for 127.0.0.1 by a certificate authority of the test's own, made with
``trustme``) in a thread, doing what docs/consumers.md's receiver does: refuse a request
whose authorization is not the stack's, take each completion event once (by its
``event_id``), answer 2xx. It can be told to fail its next requests (``fail_next``) or to
refuse with a status that EventBridge does not retry (``refuse_with``), and it records
every request. The stack delivering to it trusts that authority (``ca_file``), as
EventBridge trusts the public ones."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme

from richdoc_client.events import CompletionEvent


@dataclass
class Request:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    header: str  # the authorization header's name (lower case)
    value: str  # and the value every request must carry
    requests: list[Request] = field(default_factory=list)
    events: dict[str, CompletionEvent] = field(default_factory=dict)  # event_id -> event
    failures_left: int = 0
    refusal: int | None = None
    url: str = ""
    ca_file: Path | None = None  # the authority that issued its certificate (PEM)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, count: int, status: int = 503) -> None:
        """The next ``count`` requests are answered ``status``: down for a while."""
        with self.lock:
            self.failures_left = count
            self.refusal = status

    def refuse_with(self, status: int | None) -> None:
        """Every request answered ``status`` from now on (None: accept again)."""
        with self.lock:
            self.failures_left = 1 << 30 if status is not None else 0
            self.refusal = status

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            if headers.get(self.header) != self.value:
                status = 401
            elif self.failures_left > 0:
                self.failures_left -= 1
                assert self.refusal is not None
                status = self.refusal
            else:
                event = CompletionEvent.model_validate_json(body)
                self.events.setdefault(event.detail.event_id, event)  # dedupe by event_id
                status = 200
            self.requests.append(Request(status=status, headers=headers, body=body))
            return status

    def deliveries(self) -> list[dict[str, Any]]:
        """The bodies of the requests it accepted, in order."""
        with self.lock:
            return [json.loads(r.body) for r in self.requests if r.status == 200]


@dataclass(frozen=True)
class Authority:
    """A certificate authority of the test's own, and its certificate as a PEM file (what
    the stack is told to trust)."""

    ca: trustme.CA
    ca_file: Path

    @classmethod
    def made_in(cls, directory: Path) -> Authority:
        ca = trustme.CA()
        ca_file = directory / "webhook-ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        return cls(ca, ca_file)

    def certificate_files(self, directory: Path) -> tuple[Path, Path]:
        """A certificate for 127.0.0.1 and its private key, as PEM files."""
        issued = self.ca.issue_cert("127.0.0.1")
        certificate, key = directory / "webhook-cert.pem", directory / "webhook-key.pem"
        issued.cert_chain_pems[0].write_to_path(str(certificate))
        issued.private_key_pem.write_to_path(str(key))
        return certificate, key


@contextmanager
def receiving(header: str, value: str, authority: Authority) -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 over TLS, its certificate issued by ``authority``."""
    receiver = Receiver(header=header.lower(), value=value, ca_file=authority.ca_file)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.ca.issue_cert("127.0.0.1").configure_cert(tls)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            status = receiver.answer(headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the test reads the receiver's records

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    receiver.url = f"https://127.0.0.1:{server.server_address[1]}/richdoc/events"
    thread = threading.Thread(target=server.serve_forever, name="webhook-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
