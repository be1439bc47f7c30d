"""Serving the console: werkzeug's threaded server, on 127.0.0.1 only.

The socket is bound first (``listen``; port 0 picks a free one), so a port in use is an
error before a stack starts, and the application is made knowing the port its Host
allowlist must name (``bind``: the browser tests serve that from a thread of their own).
``serve`` then hands the port to ``ready`` (the command prints the address with the
access token) and serves until interrupted (Ctrl-C, or SIGTERM turned into the same).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from flask import Flask

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

HOST = "127.0.0.1"  # never another interface: the console holds the operator's credentials


class CannotListen(Exception):
    """The port is taken (or not ours to take)."""


def console_url(port: int, token: str) -> str:
    return f"http://{HOST}:{port}/?token={token}"


def listen(port: int) -> socket.socket:
    """A socket listening on ``HOST:port`` (0: a free port); CannotListen when the port is
    taken. Bound before anything else starts, so a taken port fails at once."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, port))
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise CannotListen(f"cannot listen on {HOST}:{port}: {exc.strerror}") from exc
    return listener


def bind(listener: socket.socket, make_app: Callable[[int], Flask]) -> BaseWSGIServer:
    """werkzeug's threaded server on the listener, running the application made for its
    port (the listener is the server's from then on)."""
    from werkzeug.serving import make_server

    try:
        bound = int(listener.getsockname()[1])
        return make_server(HOST, bound, make_app(bound), threaded=True, fd=listener.fileno())
    finally:
        listener.close()  # the server holds its own duplicate


def serve(
    listener: socket.socket, make_app: Callable[[int], Flask], ready: Callable[[int], None]
) -> None:
    """Make the application for the listener's port, call ``ready`` with that port and
    serve until interrupted (the listener is the server's from then on)."""
    server = bind(listener, make_app)
    try:
        with _quiet_requests():
            ready(server.port)
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
