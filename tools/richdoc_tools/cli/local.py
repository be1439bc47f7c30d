"""``richdoc local``: the embedded stack as a local AWS endpoint (``local serve``), and the
settings every embedded stack of the command line starts with (``stack_settings``: its
options, the template parameters it takes from the shell)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import UsageError
from richdoc_tools.cli.options import embedded_stack_options, example

if TYPE_CHECKING:
    from types import FrameType

    from richdoc_tools.local.faults.injected import FaultSettings
    from richdoc_tools.local.settings import StackSettings
    from richdoc_tools.local.stack import EmbeddedStack

# How long `local serve` may take to notice Ctrl-C or SIGTERM (see its wait loop).
SIGNAL_CHECK_S = 0.2

# The template parameters the embedded stack takes from the shell's environment: they
# become the plan function's variables of the same names (the template sets every
# function's environment, so a shell variable alone would not reach it).
STACK_PARAMETERS_FROM_ENV = {
    "RICHDOC_SHARD_PAGES": "ShardPages",
    "RICHDOC_SHARD_CONCURRENCY": "ShardMaxConcurrency",
    "RICHDOC_OCR_MODE": "OcrMode",
    "RICHDOC_PDF_PIPELINE": "PdfPipeline",
    "RICHDOC_DETECTION_RULES": "DetectionRules",
    # A webhook for every completion event (docs/consumers.md, "Webhooks"): the secret
    # from the environment, never the command line (ps shows arguments).
    "RICHDOC_WEBHOOK_URL": "WebhookUrl",
    "RICHDOC_WEBHOOK_AUTHORIZATION": "WebhookAuthorization",
    "RICHDOC_WEBHOOK_AUTH_NAME": "WebhookAuthName",
    "RICHDOC_WEBHOOK_SECRET": "WebhookAuthSecret",
}


def stack_parameters(overrides: Sequence[str] = ()) -> dict[str, str]:
    """Template parameters from ``STACK_PARAMETERS_FROM_ENV``, then ``overrides``
    (``--parameter-overrides``: ``KEY=VALUE`` items, several to a value); a bad value, or
    one the template refuses, is a usage error."""
    from richdoc.detection.ruleset import detection_rules_setting
    from richdoc.parse.ocr.mode import ocr_mode_setting
    from richdoc.parse.settings import (
        ParserSettings,
        shard_concurrency_setting,
        shard_pages_setting,
    )
    from richdoc_tools import preflight
    from richdoc_tools.local.cloudformation.template import load_template
    from richdoc_tools.terminal import visible

    try:
        shard_pages_setting()
        shard_concurrency_setting()
        ocr_mode_setting()
        ParserSettings.from_env()  # RICHDOC_PDF_PIPELINE, and the weights it may need
        detection_rules_setting()
    except ValueError as exc:
        raise UsageError(visible(exc)) from exc
    parameters = {
        parameter: os.environ[variable].strip()
        for variable, parameter in STACK_PARAMETERS_FROM_ENV.items()
        if os.environ.get(variable, "").strip()
    }
    if overrides:
        try:
            given = preflight.parse_overrides(list(overrides))
            preflight.check_parameters(load_template(), given)
        except preflight.BadParameters as exc:
            raise UsageError(f"--parameter-overrides: {visible(exc)}") from exc
        parameters.update(given)
    return parameters


# An authority the webhook delivery trusts beside the system's: a receiver on this machine
# with a certificate of its own (docs/consumers.md, "Webhooks").
WEBHOOK_CA_FILE = "RICHDOC_WEBHOOK_CA_FILE"


def webhook_ca_file() -> Path | None:
    """``RICHDOC_WEBHOOK_CA_FILE``'s certificate file; a usage error when it is missing."""
    from richdoc_tools.terminal import visible

    named = os.environ.get(WEBHOOK_CA_FILE, "").strip()
    if not named:
        return None
    path = Path(named)
    if not path.is_file():
        raise UsageError(f"{WEBHOOK_CA_FILE}: no such file: {visible(path)}")
    return path


def stack_settings(
    *,
    lenient: bool,
    faults: FaultSettings | None,
    parameter_overrides: Sequence[str],
    log_path: Path | None,
    stack_name: str | None = None,
    server_port: int | None = None,
    lifecycle_day_s: float | None = None,
) -> StackSettings:
    """The settings of a command's embedded stack: its options (``embedded_stack_options``,
    ``--log``, and those of ``local serve``), the parameters and webhook authority from the
    shell; a usage error for a bad one. Function output goes to ``log_path`` whole, the
    descriptors' too (none: to this terminal)."""
    from richdoc_tools.local.settings import DEFAULT_STACK_NAME, StackSettings

    return StackSettings(
        stack_name=stack_name or DEFAULT_STACK_NAME,
        parameters=stack_parameters(parameter_overrides),
        server_port=server_port,
        log_path=log_path,
        capture_process_output=log_path is not None,
        strict=not lenient,
        injected_faults=faults,
        lifecycle_day_s=lifecycle_day_s,
        webhook_ca_file=webhook_ca_file(),
    )


@click.group(short_help="the embedded stack as a local AWS endpoint")
def local() -> None:
    """The embedded stack as a local AWS endpoint."""


@local.command(
    short_help="serve the embedded stack on 127.0.0.1 for the AWS CLI and boto3",
    epilog=example(
        "richdoc local serve --port 4566, then",
        "aws --endpoint-url http://127.0.0.1:4566 s3 cp report.pdf s3://BUCKET/",
    ),
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=4566,
    metavar="PORT",
    help="default 4566; 0 picks a free port",
)
@click.option("--stack", default="richdoc", metavar="NAME", help="stack name (default: richdoc)")
@click.option("--log", metavar="FILE", help="function logs (default: this terminal)")
@click.option(
    "--lifecycle-day",
    type=click.FloatRange(min=1.0),
    default=86400.0,
    show_default=True,
    metavar="SECONDS",
    help="how long a day of S3 lifecycle rules (and stream record ages) lasts here: "
    "60 expires a 30-day noncurrent version after half an hour",
)
@embedded_stack_options
def serve(
    port: int,
    stack: str,
    log: str | None,
    lifecycle_day: float,
    lenient: bool,
    faults: FaultSettings | None,
    parameter_overrides: tuple[str, ...],
) -> int:
    """Deploy template.yaml into the AWS emulation and serve it on 127.0.0.1:PORT.
    Dropping a file into the ingest bucket starts a job. Ctrl-C stops."""
    import signal
    import time

    from richdoc_tools.local.stack import EmbeddedStack, PortInUse

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the stack like Ctrl-C, even while deploying

    signal.signal(signal.SIGTERM, terminate)
    log_path = Path(log) if log else None
    settings = stack_settings(
        lenient=lenient,
        faults=faults,
        parameter_overrides=parameter_overrides,
        log_path=log_path,
        stack_name=stack,
        server_port=port,
        lifecycle_day_s=lifecycle_day,
    )
    embedded = EmbeddedStack(settings)
    try:
        with embedded:
            print(_banner(embedded, log_path), flush=True)
            # Short naps, not one long sleep: a signal that lands just before a blocking
            # call starts is only acted on when the call returns.
            while True:
                time.sleep(SIGNAL_CHECK_S)
    except PortInUse as exc:
        raise UsageError(f"{exc}; choose another port with --port (0 picks a free one)") from exc
    except KeyboardInterrupt:
        if faults is not None:
            print(embedded.injector.report(), flush=True)
    print("stopped", flush=True)
    return 0


def _banner(stack: EmbeddedStack, log: Path | None) -> str:
    """What `local serve` prints once the stack is up: where, what, and how to use it."""
    from richdoc_tools.terminal import visible

    endpoint = stack.endpoint_url
    options = f"--endpoint-url {endpoint}"
    name = stack.settings.stack_name
    if name != "richdoc":
        options += f" --stack {name}"
    bucket = stack.outputs["IngestBucketName"]
    assert stack.template is not None
    prefix = stack.parameters.get(
        "ConsumerRulePrefix", stack.template.parameter_defaults()["ConsumerRulePrefix"]
    )
    lines = [f"richdoc embedded stack {name!r} listening on {endpoint}"]
    lines += [
        "enforced as on AWS: IAM per function, transaction conflicts, validations"
        if stack.settings.strict
        else "lenient: IAM, transaction conflicts and validations NOT enforced (--lenient)"
    ]
    if stack.injector.settings is not None:
        lines += [f"injecting faults: {stack.injector.settings} (rate,seed)"]
    lines += [""]
    lines += ["stack outputs:"]
    lines += [f"  {name:26} {value}" for name, value in sorted(stack.outputs.items())]
    if stack.not_emulated:
        lines += ["", "not emulated here (differences from AWS):"]
        grouped: dict[tuple[str, str], list[str]] = {}
        for note in stack.not_emulated:
            grouped.setdefault((note.item, note.why), []).append(note.resource)
        lines += [
            f"  {item} of {', '.join(resources)}: {why}"
            for (item, why), resources in grouped.items()
        ]
    lines += [
        "",
        f"function logs: {log if log else 'this terminal'}",
        "",
        "try (the AWS CLI needs some credentials to sign with; any will do, e.g.",
        "export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1):",
        f"  aws --endpoint-url {endpoint} s3 cp FILE s3://{bucket}/",
        f"  aws --endpoint-url {endpoint} s3 cp FILE s3://{bucket}/"
        " --metadata richdoc-clarify=true",
        f"  richdoc jobs list {options}",
        f"  richdoc jobs show JOB_ID {options}",
        f"  richdoc dlq list {options}",
        f"  richdoc dlq redrive {options}",
        f"  richdoc events tail --follow {options}",
        "completion events: subscribe a rule of your own, named with the stack's "
        f"ConsumerRulePrefix ({prefix}), to the bus EventBusName names",
        f"  aws --endpoint-url {endpoint} events put-rule --event-bus-name "
        f"{stack.outputs.get('EventBusName', '-')} --name {prefix}mine "
        """--event-pattern '{"source": ["richdoc"]}'""",
        "a consumer's code (boto3, richdoc-client's reader) reaches this stack with",
        f"  export AWS_ENDPOINT_URL={endpoint}",
        "(the AWS CLI v1 sends SQS commands to AWS whatever AWS_ENDPOINT_URL says: give "
        "each aws command --endpoint-url)",
        "Ctrl-C stops the stack.",
    ]
    return "\n".join(visible(line) for line in lines)
