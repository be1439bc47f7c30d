"""The AWS emulation an embedded stack runs in: moto, in this process or served.

Two modes: in-process (``mock_aws``: boto3 in this process talks to the emulation) and
server (moto's WSGI application on 127.0.0.1, so the AWS CLI and other processes can use
``--endpoint-url``). Everything here is changed on the stack's ``ExitStack`` and undone
when it closes:

* the caller's AWS settings are put aside (``isolate_environment``): every ``AWS_*``
  variable is removed (an ``AWS_ENDPOINT_URL`` or ``AWS_PROFILE`` of the shell would send
  the emulation's own calls elsewhere), the config and credentials files are empty, boto3's
  default session is set aside, and ``LOCAL_ENVIRONMENT`` is set;
* moto's configuration: the Step Functions interpreter runs executions, IAM knows the
  AWS managed policies;
* loggers that would bury the output (``quiet_loggers``);
* what lives as long as the stack kept out of the collector's full passes
  (``freeze_long_lived``).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import socket
import threading
import warnings
from typing import TYPE_CHECKING, Any
from unittest import mock

import boto3

if TYPE_CHECKING:
    from moto.core.config import DefaultConfig

REGION = "us-east-1"
ACCOUNT = "123456789012"

# moto's DynamoDB backend is used one request at a time (patches.dynamodb_lock); whatever
# reads its state directly takes the same lock, so that it never sees a request half done
# (a cancelled transaction's stream records are dropped inside the request).
DYNAMODB_LOCK = threading.RLock()

LOCAL_ENVIRONMENT = {
    # No credentials or network needed: everything is emulated in this process.
    "AWS_ACCESS_KEY_ID": "richdoc-local",
    "AWS_SECRET_ACCESS_KEY": "richdoc-local",
    "AWS_SESSION_TOKEN": "richdoc-local",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    # No X-Ray daemon locally. (Metrics stay on: their EMF lines go to the function log.)
    "POWERTOOLS_TRACE_DISABLED": "true",
}

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "iam": {"load_aws_managed_policies": True},
}

# The server mode serves moto's own WSGI application (as moto's ThreadedMotoServer does) on
# a socket bound here, so a port in use is an error at once rather than a dead thread.
SERVER_APP_TARGET = "moto.moto_server.werkzeug_app"


def isolate_environment(exit_stack: contextlib.ExitStack) -> None:
    """The caller's AWS settings put aside, ``LOCAL_ENVIRONMENT`` set. Call it first: moto
    makes boto3 sessions when it is imported."""
    exit_stack.enter_context(mock.patch.dict(os.environ))
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[key]
    os.environ.update(LOCAL_ENVIRONMENT)
    # A default session made earlier holds the caller's profile and settings.
    exit_stack.enter_context(mock.patch.object(boto3, "DEFAULT_SESSION", None))


def run_in_process(exit_stack: contextlib.ExitStack) -> None:
    from moto import mock_aws

    exit_stack.enter_context(mock_aws(config=MOTO_CONFIG))


def serve(exit_stack: contextlib.ExitStack, port: int) -> int:
    """Serve the emulation on 127.0.0.1:``port`` (0: a free port); returns the port.
    Raises ``OSError`` when it cannot listen there."""
    from moto.core.config import default_user_config
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        server = make_server(
            "127.0.0.1",
            port,
            DomainDispatcherApplication(create_backend_app),
            threaded=True,
            request_handler=MotoRequestHandler,
            fd=listener.fileno(),
        )
    finally:
        listener.close()  # the server holds its own duplicate
    port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, name="moto-server", daemon=True)
    thread.start()
    # Last, once the server has stopped: the emulation's state goes with the stack, as
    # mock_aws drops it in process (another stack served in this process starts empty).
    exit_stack.callback(_reset_backends)
    exit_stack.callback(thread.join, 10)
    exit_stack.callback(server.server_close)
    exit_stack.callback(server.shutdown)
    # Handlers in this process and the ASL interpreter reach the server by URL.
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    os.environ["MOTO_PORT"] = str(port)
    # The server runs in this process, so its configuration is set directly (its
    # /moto-api/config endpoint does not accept the IAM setting); each section is merged,
    # which the TypedDict of moto's settings does not express.
    settings: dict[str, dict[str, Any]] = default_user_config  # type: ignore[assignment]
    updates: dict[str, dict[str, Any]] = MOTO_CONFIG  # type: ignore[assignment]
    exit_stack.enter_context(
        mock.patch.dict(
            settings,
            {
                section: {**settings.get(section, {}), **values}
                for section, values in updates.items()
            },
        )
    )
    return port


def _reset_backends() -> None:
    """Every service's state dropped, as moto's own reset (its /moto-api/reset) does."""
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


def quiet_loggers(exit_stack: contextlib.ExitStack) -> None:
    # Fail states log a long ERROR line each; werkzeug logs every request (the event
    # loops poll many times a second), which would bury the server's own output.
    for name, level in (
        ("moto.stepfunctions.parser", logging.CRITICAL),
        ("werkzeug", logging.WARNING),
    ):
        logger = logging.getLogger(name)
        exit_stack.callback(logger.setLevel, logger.level)
        logger.setLevel(level)
    # Handlers that add no metric in an invocation would warn on every one of them. Not
    # undone at the stop: a handler still running then (its thread outlives the stack, as
    # an execution does) warned on the terminal at the end of every run and every Ctrl-C.
    # The filter is one entry, whatever the number of stacks (warnings keeps no duplicate).
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)


def freeze_long_lived(exit_stack: contextlib.ExitStack | None = None) -> None:
    """Move every object alive now out of the collector's reach until the stack stops
    (``gc.freeze``; the stack calls it once deployed and after each handler's Init).

    The modules, the deployment and each function's Init live as long as the stack, and
    the interpreter's full collections walked them all: 784,000 objects after 50
    documents, a third of a second a pass, 20 ms of every document (bench/, item 5).
    Frozen objects are still freed when nothing refers to them; only a cycle made
    before a freeze waits for the stop (``gc.unfreeze``, on ``exit_stack``).
    """
    gc.freeze()
    if exit_stack is not None:
        exit_stack.callback(gc.unfreeze)
