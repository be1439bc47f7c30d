"""The ``richdoc`` command line.

``richdoc run`` is the main job: the whole pipeline on the embedded stack. The step
commands (parse, project, detect) run exactly the code the Lambda handlers run; failures
print one JSON line on stderr (``kind``, ``reason``, ``feature``) and exit with the
taxonomy's code (10 corrupt_input, 20 unsupported_feature, 30 resource_limit, 70 internal,
other transient). The operator commands (jobs, dlq) work against a deployed stack or against
``richdoc local serve``. Usage errors exit 2 (argparse's convention); Ctrl-C exits 130
and a closed output pipe (``richdoc jobs list | head -1``) 141, both without a traceback.
Everything user-controlled is shown through ``richdoc_tools.terminal`` (never as markup or
raw control characters).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from richdoc.taxonomy import CorruptInput, PipelineError
from richdoc_tools.terminal import cell, markup, visible

Command = Callable[[argparse.Namespace], int]
# Exit codes besides 0/1/2 and the taxonomy's: a shell's for SIGINT and SIGPIPE.
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
# How long `local serve` may take to notice Ctrl-C or SIGTERM (see its wait loop).
SIGNAL_CHECK_S = 0.2


class UsageError(Exception):
    """A bad argument found after parsing (a missing file, an unusable --out): exit 2.
    The message is printed as it is: user-controlled parts go in through ``visible``."""


def _input_file(name: str) -> Path:
    path = Path(name)
    if not path.is_file():
        raise UsageError(f"{visible(path)}: no such file")
    return path


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _cmd_parse(args: argparse.Namespace) -> int:
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file

    source = _input_file(args.file)
    try:
        limits = ParseLimits.resolve(
            max_pages=args.max_pages, timeout_s=args.timeout_s, mem_ceiling_mb=args.mem_ceiling_mb
        )
    except ValueError as exc:  # a usage error, not a failure of the document
        raise UsageError(str(exc)) from exc
    report = parse_file(source, Path(args.output), limits)
    print(report.model_dump_json(), file=sys.stderr)
    return 0


def _cmd_project(args: argparse.Namespace) -> int:
    from richdoc.contracts import SourceInfo
    from richdoc.projection import load_docling, project

    doc = load_docling(_input_file(args.docling).read_bytes())  # CorruptInput if not one
    source = SourceInfo.for_document(
        doc, name=args.source_name, sha256=args.source_sha256, pipeline=args.pipeline
    )
    _write_bytes(Path(args.output), project(doc, source).to_json_bytes())
    return 0


def _cmd_detect(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from richdoc.detection import detect
    from richdoc.graph import Projection

    data = _input_file(args.projection).read_bytes()
    try:
        projection = Projection.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "document"
        raise CorruptInput(
            f"not a valid richdoc.projection/v1 JSON ({exc.error_count()} errors; "
            f"first at {where}: {first['msg']})"
        ) from exc
    _write_bytes(Path(args.output), detect(projection, clarify=args.clarify).to_json_bytes())
    return 0


# ---- the main job ------------------------------------------------------------------------

RUN_COLUMNS = (
    "file",
    "job id",
    "status",
    "failure kind",
    "feature",
    "attempts",
    "tier",
    "shards",
    "nodes",
    "edges",
    "spans",
    "ambiguities",
    "seconds",
)


# The template parameters the embedded stack takes from the shell's environment: they
# become the plan function's variables of the same names (the template sets every
# function's environment, so a shell variable alone would not reach it).
STACK_PARAMETERS_FROM_ENV = {
    "RICHDOC_SHARD_PAGES": "ShardPages",
    "RICHDOC_SHARD_CONCURRENCY": "ShardMaxConcurrency",
}


def _stack_parameters() -> dict[str, str]:
    """Template parameters from ``STACK_PARAMETERS_FROM_ENV``; a bad value is a usage error."""
    from richdoc.parse.settings import shard_concurrency_setting, shard_pages_setting

    try:
        shard_pages_setting()
        shard_concurrency_setting()
    except ValueError as exc:
        raise UsageError(visible(exc)) from exc
    return {
        parameter: os.environ[variable].strip()
        for variable, parameter in STACK_PARAMETERS_FROM_ENV.items()
        if os.environ.get(variable, "").strip()
    }


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not seconds > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {value!r}")
    return seconds


def _cmd_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from richdoc.jobs import JobStatus
    from richdoc_tools.local.stack import EmbeddedStack, EventLoopFailed, StackError
    from richdoc_tools.run import expand_inputs, out_problem, run_files, write_outputs

    try:
        files = expand_inputs(args.paths)
    except FileNotFoundError as exc:
        raise UsageError(visible(exc)) from exc
    if not files:
        raise UsageError("no files to process")
    out_dir = Path(args.out) if args.out else None
    problem = out_problem(out_dir, files) if out_dir else None
    if problem:
        raise UsageError(visible(problem))
    parameters = _stack_parameters()
    log_path = (
        Path(args.log) if args.log else Path(tempfile.mkdtemp(prefix="richdoc-")) / "functions.log"
    )
    err = Console(stderr=True, quiet=args.json)
    err.print("[dim]deploying template.yaml into the embedded AWS stack ...[/]")
    try:
        # Function output (JSON logs, metrics, the parse worker's diagnostics) goes to the
        # log file, as it would go to CloudWatch: the terminal shows progress and results.
        with EmbeddedStack(
            parameters=parameters, log_path=log_path, capture_process_output=True
        ) as stack:
            bucket = stack.outputs["IngestBucketName"]
            err.print(f"[dim]uploading {len(files)} file(s) to s3://{markup(bucket)}/ ...[/]")
            with Progress(
                TextColumn("[bold]jobs"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=err,
                transient=True,
                redirect_stdout=False,  # the stack routes function output itself
                redirect_stderr=False,
            ) as progress:
                task = progress.add_task("", total=len(files))
                results = run_files(
                    stack,
                    files,
                    clarify=args.clarify,
                    timeout_s=args.timeout,
                    on_finished=lambda job: progress.update(
                        task,
                        advance=1,
                        description=f"{markup(job.source.key)} {job.status}",
                    ),
                )
            if out_dir:
                write_outputs(results, stack, out_dir)
    except EventLoopFailed as exc:
        print("richdoc run: the embedded stack stopped delivering events:", file=sys.stderr)
        for error in exc.errors:
            print(f"  {type(error).__name__}: {visible(error)}", file=sys.stderr)
        print(f"richdoc run: function logs: {visible(log_path)}", file=sys.stderr)
        return 1
    except StackError as exc:
        print(f"richdoc run: {visible(exc)}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        table = Table(*RUN_COLUMNS)
        for r in results:
            c = r.counts
            table.add_row(
                cell(r.key),
                cell(r.job_id[:12]),  # a prefix `richdoc jobs show` accepts
                cell(r.status),
                cell(r.failure_kind),
                cell(r.feature),
                cell(len(r.attempts)),
                cell(r.tier),
                cell(r.shards),
                cell(c.nodes),
                cell(c.edges),
                cell(c.spans),
                cell(" ".join([_count(c.ambiguities), *r.ambiguity_kinds])),
                cell(r.seconds),
            )
        out = Console()
        # Piped or in CI logs: wide enough that no column is cut.
        (out if out.is_terminal else Console(width=220)).print(table)
        err.print(f"[dim]function logs: {markup(log_path)}[/]")
        if out_dir:
            written = "{docling,projection,detection,job}.json"
            err.print(f"[dim]outputs: {markup(out_dir)}/<file>/{written}[/]")
    still_open = [
        r for r in results if r.status not in (JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED)
    ]
    if still_open:
        print(
            f"richdoc run: timed out after {args.timeout:g} s; {len(still_open)} job(s) "
            "still open:",
            file=sys.stderr,
        )
        for r in still_open:
            print(f"  {visible(r.key)}  {r.job_id}  {r.status}", file=sys.stderr)
    return 0 if all(r.succeeded for r in results) else 1


# ---- the embedded stack as a server --------------------------------------------------------


def _serve_banner(stack: Any, log: Path | None) -> str:
    endpoint = stack.endpoint_url
    options = f"--endpoint-url {endpoint}"
    if stack.stack_name != "richdoc":
        options += f" --stack {stack.stack_name}"
    bucket = stack.outputs["IngestBucketName"]
    lines = [f"richdoc embedded stack {stack.stack_name!r} listening on {endpoint}", ""]
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
        "Ctrl-C stops the stack.",
    ]
    return "\n".join(visible(line) for line in lines)


def _cmd_local_serve(args: argparse.Namespace) -> int:
    import signal
    import time

    from richdoc_tools.local.stack import EmbeddedStack, PortInUse

    def terminate(*_: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the stack like Ctrl-C, even while deploying

    signal.signal(signal.SIGTERM, terminate)
    log = Path(args.log) if args.log else None
    parameters = _stack_parameters()
    try:
        with EmbeddedStack(
            stack_name=args.stack,
            parameters=parameters,
            server_port=args.port,
            log_path=log,
            capture_process_output=log is not None,
        ) as stack:
            print(_serve_banner(stack, log), flush=True)
            # Short naps, not one long sleep: a signal that lands just before a blocking
            # call starts is only acted on when the call returns.
            while True:
                time.sleep(SIGNAL_CHECK_S)
    except PortInUse as exc:
        raise UsageError(f"{exc}; choose another port with --port (0 picks a free one)") from exc
    except KeyboardInterrupt:
        pass
    print("stopped", flush=True)
    return 0


# ---- operator commands -----------------------------------------------------------------------


def _operator(args: argparse.Namespace) -> Any:
    from richdoc_tools.operator import Operator

    return Operator.connect(
        args.stack, endpoint_url=args.endpoint_url, region=args.region, profile=args.profile
    )


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


def _cmd_jobs_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Column, Table

    from richdoc.jobs import JobStatus

    jobs = _operator(args).list_jobs(JobStatus(args.status) if args.status else None)
    if args.json:
        _print_json([j.to_dict() for j in jobs])
        return 0
    # Whole job ids, never cut: they are what `richdoc jobs show` takes.
    table = Table(
        Column("job id", no_wrap=True, min_width=32),
        "status",
        "run",
        "stage",
        "tier",
        "key",
        "failure",
        "updated",
    )
    for j in jobs:
        failure = j.failure
        kind = failure.kind if failure else None
        label = f"{kind} [{failure.feature}]" if failure and failure.feature else kind
        table.add_row(
            cell(j.job_id),
            cell(j.status),
            cell(j.run),
            cell(j.stage),
            cell(j.tier),
            cell(j.source.key),
            cell(label),
            cell(j.updated_at),
        )
    Console().print(table)
    return 0


def _cmd_jobs_show(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from richdoc_tools.operator import AmbiguousJobId, shard_parses

    operator = _operator(args)
    try:
        found = operator.show_job(args.job_id)
    except AmbiguousJobId as exc:
        shown = exc.candidates[:10]
        lines = [f"{j.job_id}  {j.status}  {visible(j.source.key)}" for j in shown]
        more = len(exc.candidates) - len(shown)
        raise UsageError(
            f"job id prefix {visible(args.job_id)!r} matches {len(exc.candidates)} jobs:\n  "
            + "\n  ".join(lines)
            + (f"\n  ... and {more} more" if more else "")
            + "\ngive more characters of the job id"
        ) from exc
    if found is None:
        print(f"richdoc jobs show: no job {visible(args.job_id)}", file=sys.stderr)
        return 1
    job, attempts = found
    if args.json:
        _print_json({**job.to_dict(), "attempts": [a.to_dict() for a in attempts]})
        return 0
    console = Console()
    # JSON-encoded, so control characters in keys or reasons arrive escaped.
    console.print_json(json.dumps(job.to_dict(), default=str))
    shards = shard_parses(attempts)
    if shards:
        shard_table = Table("run", "shard pages", "attempts", "tier", "outcome", "cached")
        for shard in shards:
            shard_table.add_row(
                cell(shard.run),
                cell(shard.pages),
                cell(shard.attempts),
                cell(shard.tier),
                cell(shard.outcome),
                cell(shard.cached),
            )
        console.print(shard_table)
    table = Table(
        "run",
        "#",
        "stage",
        "attempt",
        "tier",
        "pages",
        "memory",
        "outcome",
        "cached",
        "ms",
        "started",
        "reason",
    )
    for a in attempts:
        table.add_row(
            cell(a.run),
            cell(a.seq),
            cell(a.stage),
            cell(a.attempt),
            cell(a.tier),
            cell(a.pages),
            cell(a.memory_mb),
            cell(a.outcome),
            cell(a.cached),
            cell(a.duration_ms),
            cell(a.started_at),
            cell(a.reason, limit=80),
        )
    console.print(table)
    return 0


def _cmd_dlq_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Column, Table

    letters = _operator(args).dead_letters()
    if args.json:
        _print_json(
            [
                {
                    "message_id": d.message_id,
                    "job_id": d.job_id,
                    "run": d.run,
                    "kind": d.kind,
                    "feature": d.feature,
                    "reason": d.reason,
                    "receive_count": d.receive_count,
                    "body": d.body,
                }
                for d in letters
            ]
        )
        return 0
    table = Table(
        "message id",
        Column("job id", no_wrap=True, min_width=32),
        "run",
        "kind",
        "feature",
        "reason",
    )
    for d in letters:
        table.add_row(
            cell(d.message_id),
            cell(d.job_id),
            cell(d.run),
            cell(d.kind),
            cell(d.feature),
            cell(d.reason, limit=100),
        )
    Console().print(table)
    print(f"{len(letters)} message(s) on the dead-letter queue")
    return 0


def _cmd_dlq_redrive(args: argparse.Namespace) -> int:
    from richdoc_tools.dlq import redrive_outlook

    operator = _operator(args)
    outlook = redrive_outlook(operator.dead_letters())
    result = operator.redrive()
    if result.mode == "message-move-task":
        print(
            f"started SQS message move task {result.task_handle}: every message on the "
            "dead-letter queue goes back to the ingest queue"
        )
        print(f"of the {outlook.total} message(s) seen on the queue:")
    else:
        print(f"moved {result.moved} message(s) back to the ingest queue")
        print(f"of the {outlook.total} message(s) seen before moving:")
    for line in outlook.lines():
        print(f"  {line}")
    return 0


def _stack_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stack", default="richdoc", help="CloudFormation stack name (default: richdoc)"
    )
    parser.add_argument(
        "--endpoint-url",
        default=None,
        help="AWS endpoint, e.g. http://127.0.0.1:4566 for richdoc local serve",
    )
    parser.add_argument("--region", default=None, help="defaults to the usual AWS settings")
    parser.add_argument("--profile", default=None, help="AWS profile")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="richdoc",
        description="Rich-document ingestion: parse with docling, project to a graph, "
        "detect temporal ambiguities; locally on an embedded AWS stack or on AWS.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('richdoc')}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = commands.add_parser(
        "run",
        help="run the whole pipeline on files, locally (embedded AWS stack)",
        description="Start the embedded stack (template.yaml deployed into an in-process AWS "
        "emulation with the real state machine), upload each file to the ingest bucket, wait "
        "for every job to reach a terminal state and print a table. Exit 0 when every job "
        "succeeded, 1 when any failed, 2 on usage errors.",
        epilog="example: richdoc run samples/ --clarify --out out/",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    p.add_argument("--clarify", action="store_true", help="emit temporal ambiguities")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write DIR/<file>/{docling,projection,detection,job}.json; a file name several "
        "inputs share becomes <stem>~2<suffix>, ~3, ... for the later ones",
    )
    p.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    p.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=1800.0,
        metavar="S",
        help="give up waiting after S seconds (default 1800); jobs still open then are "
        "listed and the exit code is 1",
    )
    p.add_argument("--log", metavar="FILE", help="function logs (default: a temporary file)")
    p.set_defaults(func=_cmd_run)

    p = commands.add_parser(
        "parse",
        help="convert one file to DoclingDocument JSON in the isolated worker",
        description="The parse step alone, isolated exactly as in Lambda. Exit codes: 0 ok, "
        "10 corrupt_input, 20 unsupported_feature, 30 resource_limit, 70 internal, "
        "other transient.",
        epilog="example: richdoc parse contract.docx -o contract.docling.json --timeout-s 120",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT.json")
    p.add_argument("--max-pages", type=int, default=None, metavar="N")
    p.add_argument("--timeout-s", type=float, default=None, metavar="S")
    p.add_argument("--mem-ceiling-mb", type=int, default=None, metavar="M")
    p.set_defaults(func=_cmd_parse)

    p = commands.add_parser(
        "project",
        help="project a DoclingDocument JSON to projection.json",
        description="The projection step alone: DoclingDocument JSON in, "
        "richdoc.projection/v1 out (byte-stable for identical input).",
        epilog="example: richdoc project contract.docling.json -o projection.json",
    )
    p.add_argument("docling", metavar="DOCLING.json")
    p.add_argument("-o", "--output", required=True, metavar="PROJECTION.json")
    p.add_argument("--source-name", default=None, help="defaults to the document's origin")
    p.add_argument("--source-sha256", default=None, help="SHA-256 of the original file")
    p.add_argument("--pipeline", default=None, help="docling pipeline that produced the input")
    p.set_defaults(func=_cmd_project)

    p = commands.add_parser(
        "detect",
        help="scan a projection for temporal ambiguities",
        description="The detection step alone (spec section 15). Without --clarify nothing "
        "is emitted; the stats are still computed.",
        epilog="example: richdoc detect projection.json --clarify -o detection.json",
    )
    p.add_argument("projection", metavar="PROJECTION.json")
    p.add_argument("--clarify", action="store_true", help="emit ambiguities (options.clarify)")
    p.add_argument("-o", "--output", required=True, metavar="DETECTION.json")
    p.set_defaults(func=_cmd_detect)

    p = commands.add_parser("local", help="the embedded stack as a local AWS endpoint")
    local = p.add_subparsers(dest="local_command", required=True, metavar="COMMAND")
    p = local.add_parser(
        "serve",
        help="serve the embedded stack on 127.0.0.1 for the AWS CLI and boto3",
        description="Deploy template.yaml into the AWS emulation and serve it on "
        "127.0.0.1:PORT. Dropping a file into the ingest bucket starts a job. Ctrl-C stops.",
        epilog="example: richdoc local serve --port 4566, then "
        "aws --endpoint-url http://127.0.0.1:4566 s3 cp report.pdf s3://BUCKET/",
    )
    p.add_argument("--port", type=_port, default=4566, help="default 4566; 0 picks a free port")
    p.add_argument("--stack", default="richdoc", help="stack name (default: richdoc)")
    p.add_argument("--log", metavar="FILE", help="function logs (default: this terminal)")
    p.set_defaults(func=_cmd_local_serve)

    p = commands.add_parser("jobs", help="job records of a stack")
    jobs = p.add_subparsers(dest="jobs_command", required=True, metavar="COMMAND")
    p = jobs.add_parser(
        "list",
        help="list jobs, optionally by status (uses the status index, no scan)",
        epilog="example: richdoc jobs list --status DEAD_LETTERED --stack richdoc",
    )
    p.add_argument(
        "--status", choices=["QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "DEAD_LETTERED"]
    )
    p.add_argument("--json", action="store_true")
    _stack_options(p)
    p.set_defaults(func=_cmd_jobs_list)
    p = jobs.add_parser(
        "show",
        help="one job with its attempts (tier, error, duration) and output keys",
        description="Show one job. JOB_ID may be any unique prefix of the 32-character id "
        "(e.g. the 12 characters `richdoc run` prints); a prefix several jobs share is a "
        "usage error (exit 2) that lists them; no such job exits 1.",
        epilog="example: richdoc jobs show 4c7b41c722e6",
    )
    p.add_argument("job_id", metavar="JOB_ID")
    p.add_argument("--json", action="store_true")
    _stack_options(p)
    p.set_defaults(func=_cmd_jobs_show)

    p = commands.add_parser("dlq", help="the dead-letter queue of a stack")
    dlq = p.add_subparsers(dest="dlq_command", required=True, metavar="COMMAND")
    p = dlq.add_parser(
        "list",
        help="show dead-lettered messages without consuming them",
        epilog="example: richdoc dlq list --stack richdoc",
    )
    p.add_argument("--json", action="store_true")
    _stack_options(p)
    p.set_defaults(func=_cmd_dlq_list)
    p = dlq.add_parser(
        "redrive",
        help="move dead-lettered messages back to the ingest queue (next run)",
        description="On AWS: an SQS StartMessageMoveTask from the dead-letter queue to the "
        "ingest queue. On the embedded stack (which lacks that API): the same move done "
        "message by message.",
        epilog="example: richdoc dlq redrive --stack richdoc",
    )
    _stack_options(p)
    p.set_defaults(func=_cmd_dlq_redrive)

    return parser


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}")
    return port


def _stdout_closed() -> int:
    """The reader of our output went away (``| head``): stop quietly, as Unix tools do.
    stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        func: Command = args.func
        try:
            return func(args)
        except UsageError as exc:
            print(f"richdoc {args.command}: {exc}", file=sys.stderr)
            return 2
        except PipelineError as exc:
            print(exc.failure().to_json_line(), file=sys.stderr)
            return exc.exit_code
        except (BotoCoreError, ClientError, LookupError) as exc:
            # No credentials, no such stack, endpoint down: one line, not a traceback.
            print(f"richdoc {args.command}: {visible(exc)}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _stdout_closed()


if __name__ == "__main__":
    sys.exit(main())
