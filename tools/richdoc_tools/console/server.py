"""Serving the console: werkzeug's threaded server, on 127.0.0.1 only.

The socket is bound first (port 0 picks a free one), so the application is made knowing
the port its Host allowlist must name, and a port in use is an error before anything is
printed. Once the server listens, ``serve`` hands the address with the access token to
``ready`` (the command prints it) and serves until interrupted (Ctrl-C, or SIGTERM turned
into the same).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Iterator

from flask import Flask

HOST = "127.0.0.1"  # never another interface: the console holds the operator's credentials


class CannotListen(Exception):
    """The port is taken (or not ours to take)."""


def console_url(port: int, token: str) -> str:
    return f"http://{HOST}:{port}/?token={token}"


def serve(port: int, make_app: Callable[[int], Flask], ready: Callable[[int], None]) -> None:
    """Listen on ``HOST:port``, make the application for the port it got, call ``ready``
    with that port, and serve until interrupted. CannotListen when the port is taken."""
    from werkzeug.serving import make_server

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((HOST, port))
            listener.listen(128)
        except OSError as exc:
            raise CannotListen(f"cannot listen on {HOST}:{port}: {exc.strerror}") from exc
        bound = int(listener.getsockname()[1])
        server = make_server(HOST, bound, make_app(bound), threaded=True, fd=listener.fileno())
    finally:
        listener.close()  # the server holds its own duplicate
    try:
        with _quiet_requests():
            ready(bound)
            server.serve_forever()
    finally:
        server.server_close()


@contextlib.contextmanager
def _quiet_requests() -> Iterator[None]:
    """No line per request: the pages poll their twins every second or so."""
    logger = logging.getLogger("werkzeug")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
