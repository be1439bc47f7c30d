"""``richdoc console``: the operator's console in a browser, on 127.0.0.1.

With nothing but PATHs (or nothing at all) it starts the embedded stack, as ``richdoc
run`` does, and uploads the PATHs; with ``--stack`` or ``--endpoint-url`` it works
against a deployed stack or ``richdoc local serve``, through the same ``Operator`` as the
other commands. It prints its address with the access token once it listens; Ctrl-C or
SIGTERM stops it (and the embedded stack).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import Failed, UsageError
from richdoc_tools.cli.local import stack_parameters, webhook_ca_file
from richdoc_tools.cli.options import embedded_stack_options, example, stack_options

if TYPE_CHECKING:
    import socket
    from types import FrameType

    from richdoc_tools.local.faults.injected import FaultSettings
    from richdoc_tools.ops.operator import Operator


@click.command(
    short_help="the operator's console in a browser, on 127.0.0.1",
    epilog=example(
        "richdoc console samples/",
        "richdoc console --stack richdoc --region eu-west-1",
        "richdoc console --endpoint-url http://127.0.0.1:4566",
    ),
)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@stack_options(None, "a deployed stack's name (default: start the embedded stack)")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    metavar="PORT",
    help="the port on 127.0.0.1 (default 0: a free one)",
)
@click.option("--clarify", is_flag=True, help="upload the PATHs asking for temporal ambiguities")
@click.option(
    "--log", metavar="FILE", help="the embedded stack's function logs (default: a temp file)"
)
@embedded_stack_options
def console(
    paths: tuple[str, ...],
    stack: str | None,
    endpoint_url: str | None,
    region: str | None,
    profile: str | None,
    port: int,
    clarify: bool,
    log: str | None,
    lenient: bool,
    faults: FaultSettings | None,
    parameter_overrides: tuple[str, ...],
) -> int:
    """Serve the operator's console on 127.0.0.1: jobs, each job's execution graph, the
    dead-letter queue, the document with its graph. Upload the PATHs (files or
    directories) first. Without --stack or --endpoint-url, start the embedded stack for it."""
    import signal
    import tempfile

    from richdoc_tools.console.server import CannotListen, listen
    from richdoc_tools.run import expand_inputs
    from richdoc_tools.terminal import visible

    try:
        files = expand_inputs(paths)
    except FileNotFoundError as exc:
        raise UsageError(visible(exc)) from exc
    try:
        listener = listen(port)
    except CannotListen as exc:
        raise UsageError(f"{exc}; choose another --port (0 picks a free one)") from exc

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the console like Ctrl-C

    if parameter_overrides and (stack is not None or endpoint_url is not None):
        raise UsageError("--parameter-overrides sets the embedded stack's parameters")
    signal.signal(signal.SIGTERM, terminate)
    try:
        if stack is None and endpoint_url is None:
            from richdoc_tools.local.stack import EmbeddedStack, StackError

            parameters = stack_parameters(parameter_overrides)
            log_path = (
                Path(log) if log else Path(tempfile.mkdtemp(prefix="richdoc-")) / "functions.log"
            )
            print("deploying template.yaml into the embedded AWS stack ...", flush=True)
            try:
                with EmbeddedStack(
                    parameters=parameters,
                    log_path=log_path,
                    capture_process_output=True,
                    strict=not lenient,
                    injected_faults=faults,
                    webhook_ca_file=webhook_ca_file(),
                ) as embedded:
                    print(f"function logs: {visible(log_path)}", flush=True)
                    _serve(
                        _connect(embedded.stack_name, None, None, None),
                        f"embedded stack {embedded.stack_name!r}",
                        files,
                        clarify=clarify,
                        listener=listener,
                    )
            except StackError as exc:
                raise Failed(visible(exc)) from exc
        else:
            name = stack or "richdoc"
            where = f" at {endpoint_url}" if endpoint_url else ""
            _serve(
                _connect(name, endpoint_url, region, profile),
                f"stack {name!r}{where}",
                files,
                clarify=clarify,
                listener=listener,
            )
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()  # when it never got to serve
    print("stopped", flush=True)
    return 0


def _connect(
    stack: str, endpoint_url: str | None, region: str | None, profile: str | None
) -> Operator:
    from richdoc_tools.ops.operator import Operator

    return Operator.connect(stack, endpoint_url=endpoint_url, region=region, profile=profile)


def _serve(
    operator: Operator, label: str, files: list[Path], *, clarify: bool, listener: socket.socket
) -> None:
    from flask import Flask

    from richdoc_tools.console.app import create_app
    from richdoc_tools.console.server import console_url, serve
    from richdoc_tools.console.settings import ConsoleSettings
    from richdoc_tools.ops.uploads import upload
    from richdoc_tools.run import input_keys
    from richdoc_tools.terminal import visible

    if files:
        bucket = operator.resources.ingest_bucket
        print(f"uploading {len(files)} file(s) to s3://{visible(bucket)}/ ...", flush=True)
        for file, key in zip(files, input_keys(files), strict=True):
            with file.open("rb") as body:
                upload(operator, key, body, clarify=clarify)
    settings: list[ConsoleSettings] = []

    def make_app(bound: int) -> Flask:
        settings.append(ConsoleSettings(operator=operator, port=bound, stack_label=label))
        return create_app(settings[0])

    def ready(bound: int) -> None:
        print(
            f"richdoc console for {visible(label)}; open this address (it holds the access token):"
        )
        print(console_url(bound, settings[0].token), flush=True)
        print("Ctrl-C stops it.", flush=True)

    serve(listener, make_app, ready)
