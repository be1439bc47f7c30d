"""The ``richdoc`` command line.

``richdoc run`` is the main job: the whole pipeline on the embedded stack. The step
commands (parse, project, detect) run exactly the code the Lambda handlers run; failures
print one JSON line on stderr (``kind``, ``reason``, ``feature``) and exit with the
taxonomy's code (10 corrupt_input, 20 unsupported_feature, 30 resource_limit, other
transient). The operator commands (jobs, dlq) work against a deployed stack or against
``richdoc local serve``. Usage errors exit 2 (argparse's convention).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from richdoc.taxonomy import PipelineError

Command = Callable[[argparse.Namespace], int]


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _cmd_parse(args: argparse.Namespace) -> int:
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file

    source = Path(args.file)
    try:
        if not source.is_file():
            raise ValueError(f"{source}: no such file")
        limits = ParseLimits.resolve(
            max_pages=args.max_pages, timeout_s=args.timeout_s, mem_ceiling_mb=args.mem_ceiling_mb
        )
    except ValueError as exc:  # a usage error, not a failure of the document
        print(f"richdoc parse: {exc}", file=sys.stderr)
        return 2
    report = parse_file(source, Path(args.output), limits)
    print(report.model_dump_json(), file=sys.stderr)
    return 0


def _cmd_project(args: argparse.Namespace) -> int:
    from richdoc.projection import SourceInfo, load_docling, project

    doc = load_docling(Path(args.docling).read_bytes())
    source = SourceInfo.for_document(
        doc, name=args.source_name, sha256=args.source_sha256, pipeline=args.pipeline
    )
    _write_bytes(Path(args.output), project(doc, source).to_json_bytes())
    return 0


def _cmd_detect(args: argparse.Namespace) -> int:
    from richdoc.detection import detect
    from richdoc.projection import Projection

    projection = Projection.model_validate_json(Path(args.projection).read_bytes())
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
    "nodes",
    "edges",
    "spans",
    "ambiguities",
    "seconds",
)


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def _cmd_run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from richdoc_tools.local.stack import EmbeddedStack
    from richdoc_tools.run import expand_inputs, run_files, write_outputs

    try:
        files = expand_inputs(args.paths)
    except FileNotFoundError as exc:
        print(f"richdoc run: {exc}", file=sys.stderr)
        return 2
    if not files:
        print("richdoc run: no files to process", file=sys.stderr)
        return 2
    log_path = (
        Path(args.log)
        if args.log
        else Path(tempfile.mkdtemp(prefix="richdoc-")) / ("functions.log")
    )
    err = Console(stderr=True, quiet=args.json)
    err.print("[dim]deploying template.yaml into the embedded AWS stack ...[/]")
    with EmbeddedStack(log_path=log_path) as stack:
        bucket = stack.outputs["IngestBucketName"]
        err.print(f"[dim]uploading {len(files)} file(s) to s3://{bucket}/ ...[/]")
        with Progress(
            TextColumn("[bold]jobs"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("", total=len(files))
            results = run_files(
                stack,
                files,
                clarify=args.clarify,
                timeout_s=args.timeout,
                on_finished=lambda job: progress.update(
                    task, advance=1, description=f"{job.source.key} {job.status}"
                ),
            )
        if args.out:
            write_outputs(results, stack, Path(args.out))
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        table = Table(*RUN_COLUMNS)
        for r in results:
            c = r.counts
            table.add_row(
                Path(r.source).name,
                r.job_id[:12],
                r.status,
                _cell(r.failure_kind),
                _cell(r.feature),
                str(len(r.attempts)),
                _cell(r.tier),
                _cell(c.nodes),
                _cell(c.edges),
                _cell(c.spans),
                " ".join([_cell(c.ambiguities), *r.ambiguity_kinds]),
                _cell(r.seconds),
            )
        out = Console()
        # Piped or in CI logs: wide enough that no column is cut.
        (out if out.is_terminal else Console(width=220)).print(table)
        err.print(f"[dim]function logs: {log_path}[/]")
        if args.out:
            err.print(
                f"[dim]outputs: {args.out}/<file>/{{docling,projection,detection,job}}.json[/]"
            )
    return 0 if all(r.succeeded for r in results) else 1


# ---- the embedded stack as a server --------------------------------------------------------


def _cmd_local_serve(args: argparse.Namespace) -> int:
    import signal
    import threading

    from richdoc_tools.local.stack import EmbeddedStack

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with EmbeddedStack(
        stack_name=args.stack, server_port=args.port, log_path=Path(args.log) if args.log else None
    ) as stack:
        endpoint = stack.endpoint_url
        print(f"richdoc embedded stack {args.stack!r} listening on {endpoint}", flush=True)
        for name, value in sorted(stack.outputs.items()):
            print(f"  {name:24} {value}")
        bucket = stack.outputs["IngestBucketName"]
        print(
            "\ntry:\n"
            f"  aws --endpoint-url {endpoint} s3 cp FILE s3://{bucket}/\n"
            f"  richdoc jobs list --endpoint-url {endpoint}\n"
            "Ctrl-C stops the stack.",
            flush=True,
        )
        try:
            while not stop.wait(0.5):
                pass
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
    from rich.table import Table

    from richdoc.jobs import JobStatus

    jobs = _operator(args).list_jobs(JobStatus(args.status) if args.status else None)
    if args.json:
        _print_json([j.to_dict() for j in jobs])
        return 0
    table = Table("job id", "status", "run", "stage", "tier", "key", "failure", "updated")
    for j in jobs:
        failure = j.failure or {}
        kind = failure.get("kind")
        label = f"{kind} [{failure['feature']}]" if failure.get("feature") else kind
        table.add_row(
            j.job_id,
            str(j.status),
            str(j.run),
            _cell(j.stage),
            _cell(j.tier),
            _cell(j.source.key),
            _cell(label),
            _cell(j.updated_at),
        )
    Console().print(table)
    return 0


def _cmd_jobs_show(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    found = _operator(args).show_job(args.job_id)
    if found is None:
        print(f"richdoc jobs show: no job {args.job_id}", file=sys.stderr)
        return 1
    job, attempts = found
    if args.json:
        _print_json({**job.to_dict(), "attempts": [a.__dict__ for a in attempts]})
        return 0
    console = Console()
    console.print_json(json.dumps(job.to_dict(), default=str))
    table = Table(
        "run", "#", "stage", "attempt", "tier", "memory", "outcome", "ms", "started", "reason"
    )
    for a in attempts:
        table.add_row(
            str(a.run),
            str(a.seq),
            a.stage,
            str(a.attempt),
            _cell(a.tier),
            _cell(a.memory_mb),
            a.outcome,
            _cell(a.duration_ms),
            a.started_at,
            _cell(a.reason and a.reason[:80]),
        )
    console.print(table)
    return 0


def _cmd_dlq_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

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
    table = Table("message id", "job id", "run", "kind", "feature", "reason")
    for d in letters:
        table.add_row(
            d.message_id,
            _cell(d.job_id),
            _cell(d.run),
            _cell(d.kind),
            _cell(d.feature),
            _cell(d.reason and d.reason[:80]),
        )
    Console().print(table)
    print(f"{len(letters)} message(s) on the dead-letter queue")
    return 0


def _cmd_dlq_redrive(args: argparse.Namespace) -> int:
    result = _operator(args).redrive()
    if result.mode == "message-move-task":
        print(
            f"started SQS message move task {result.task_handle}: dead-letter queue -> "
            "ingest queue; each message starts the next run of its job"
        )
    else:
        print(
            f"moved {result.moved} message(s) back to the ingest queue; each starts the next "
            "run of its job"
        )
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
        "--out", metavar="DIR", help="write DIR/<file>/{docling,projection,detection,job}.json"
    )
    p.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    p.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="give up waiting after S seconds (default 1800)",
    )
    p.add_argument("--log", metavar="FILE", help="function logs (default: a temporary file)")
    p.set_defaults(func=_cmd_run)

    p = commands.add_parser(
        "parse",
        help="convert one file to DoclingDocument JSON in the isolated worker",
        description="The parse step alone, isolated exactly as in Lambda. Exit codes: 0 ok, "
        "10 corrupt_input, 20 unsupported_feature, 30 resource_limit, other transient.",
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
    p.add_argument("--port", type=int, default=4566)
    p.add_argument("--stack", default="richdoc", help="stack name (default: richdoc)")
    p.add_argument("--log", metavar="FILE", help="function logs (default: stdout)")
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
        epilog="example: richdoc jobs show 4c7b41c722e617a78bfe242128996941",
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Command = args.func
    try:
        return func(args)
    except PipelineError as exc:
        print(exc.failure().to_json_line(), file=sys.stderr)
        return exc.exit_code
    except (BotoCoreError, ClientError, LookupError) as exc:
        # No credentials, no such stack, endpoint down: one line, not a traceback.
        print(f"richdoc {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
