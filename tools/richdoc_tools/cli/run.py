"""``richdoc run``: the main job, the whole pipeline on files, on the embedded stack.

The terminal shows progress and the table (or ``--json``) and the functions' logs go to a
file; exit 0 when every job succeeded, 1 when any failed or is still open at ``--timeout``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import EXIT_FAILED, Failed, UsageError
from richdoc_tools.cli.local import stack_parameters, webhook_ca_file
from richdoc_tools.cli.options import (
    PositiveSeconds,
    embedded_stack_options,
    example,
    json_option,
)

if TYPE_CHECKING:
    from rich.console import Console

    from richdoc.jobs import Job
    from richdoc.jobs import Progress as JobProgress
    from richdoc_tools.local.faults.injected import FaultSettings
    from richdoc_tools.run import RunResult


@click.command(
    short_help="run the whole pipeline on files, locally (embedded AWS stack)",
    epilog=example("richdoc run samples/ --clarify --out out/"),
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--clarify", is_flag=True, help="emit temporal ambiguities")
@click.option(
    "--out",
    metavar="DIR",
    help="write DIR/<file>/{docling,projection,detection,job}.json; a file name several "
    "inputs share becomes <stem>~2<suffix>, ~3, ... for the later ones",
)
@json_option("print a JSON array instead of a table")
@click.option(
    "--timeout",
    type=PositiveSeconds(),
    default=1800.0,
    metavar="S",
    help="give up waiting after S seconds (default 1800); jobs still open then are "
    "listed and the exit code is 1",
)
@click.option("--log", metavar="FILE", help="function logs (default: a temporary file)")
@embedded_stack_options
def run(
    paths: tuple[str, ...],
    clarify: bool,
    out: str | None,
    as_json: bool,
    timeout: float,
    log: str | None,
    lenient: bool,
    faults: FaultSettings | None,
    parameter_overrides: tuple[str, ...],
) -> int:
    """Start the embedded stack (template.yaml deployed into an in-process AWS emulation
    with the real state machine), upload each file (PATH: files or directories) to the
    ingest bucket, wait for every job to reach a terminal state and print a table. Exit 0
    when every job succeeded, 1 when any failed, 2 on usage errors."""
    import tempfile

    from rich.console import Console

    from richdoc_tools.cli.render import run as render
    from richdoc_tools.terminal import markup

    files, out_dir = _checked_inputs(paths, out)
    parameters = stack_parameters(parameter_overrides)
    log_path = Path(log) if log else Path(tempfile.mkdtemp(prefix="richdoc-")) / "functions.log"
    err = Console(stderr=True, quiet=as_json)
    results, injected = _run_on_stack(
        files,
        clarify=clarify,
        timeout_s=timeout,
        out_dir=out_dir,
        parameters=parameters,
        log_path=log_path,
        err=err,
        strict=not lenient,
        faults=faults,
    )
    render.run_results(results, as_json=as_json)
    for note in render.unread_notes(results):
        err.print(f"[yellow]{markup(note)}[/]")
    if injected is not None:
        err.print(f"[dim]{markup(injected)}[/]")
    err.print(f"[dim]function logs: {markup(log_path)}[/]")
    if out_dir:
        written = "{docling,projection,detection,job}.json, chunks.jsonl, document.md, tables/"
        err.print(f"[dim]outputs: {markup(out_dir)}/<file>/{written}[/]")
    _report_still_open(results, timeout)
    return 0 if all(r.succeeded for r in results) else EXIT_FAILED


def _checked_inputs(paths: Sequence[str], out: str | None) -> tuple[list[Path], Path | None]:
    """The files to run and the --out folder; a usage error before anything starts."""
    from richdoc_tools.run import expand_inputs, out_problem
    from richdoc_tools.terminal import visible

    try:
        files = expand_inputs(paths)
    except FileNotFoundError as exc:
        raise UsageError(visible(exc)) from exc
    if not files:
        raise UsageError("no files to process")
    out_dir = Path(out) if out else None
    problem = out_problem(out_dir, files) if out_dir else None
    if problem:
        raise UsageError(visible(problem))
    return files, out_dir


def _run_on_stack(
    files: list[Path],
    *,
    clarify: bool,
    timeout_s: float,
    out_dir: Path | None,
    parameters: dict[str, str],
    log_path: Path,
    err: Console,
    strict: bool = True,
    faults: FaultSettings | None = None,
) -> tuple[list[RunResult], str | None]:
    """Deploy the stack, run the files through it, write --out, stop the stack; the
    results, and what was injected (with ``faults``)."""
    from richdoc_tools.local.stack import EmbeddedStack, EventLoopFailed, StackError
    from richdoc_tools.run import run_files, write_outputs
    from richdoc_tools.terminal import markup, visible

    mode = "" if strict else " (lenient: AWS's rules not enforced)"
    err.print(f"[dim]deploying template.yaml into the embedded AWS stack{mode} ...[/]")
    try:
        # Function output (JSON logs, metrics, the parse worker's diagnostics) goes to the
        # log file, as it would go to CloudWatch: the terminal shows progress and results.
        with EmbeddedStack(
            parameters=parameters,
            log_path=log_path,
            capture_process_output=True,
            strict=strict,
            injected_faults=faults,
            webhook_ca_file=webhook_ca_file(),
        ) as stack:
            bucket = stack.outputs["IngestBucketName"]
            err.print(f"[dim]uploading {len(files)} file(s) to s3://{markup(bucket)}/ ...[/]")
            with _progress(err, len(files)) as (finished, still_open):
                results = run_files(
                    stack,
                    files,
                    clarify=clarify,
                    timeout_s=timeout_s,
                    on_finished=finished,
                    on_open=still_open,
                )
            if out_dir:
                write_outputs(results, stack, out_dir)
            injected = stack.injector.report() if faults is not None else None
    except EventLoopFailed as exc:
        details = "".join(f"\n  {type(e).__name__}: {visible(e)}" for e in exc.errors)
        raise Failed(
            f"the embedded stack stopped delivering events:{details}\n"
            f"function logs: {visible(log_path)}"
        ) from exc
    except StackError as exc:
        raise Failed(visible(exc)) from exc
    return results, injected


@contextmanager
def _progress(
    err: Console, total: int
) -> Iterator[tuple[Callable[[Job], None], Callable[[list[JobProgress]], None]]]:
    """A progress bar on stderr; yields the callbacks that advance it by a finished job
    and show what the open jobs are doing (their phases: queued, parsing (tier 1),
    parsing shards: 3 of 8 done, ...)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from richdoc_tools.cli.render import run as render
    from richdoc_tools.terminal import markup

    with Progress(
        TextColumn("[bold]jobs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        TextColumn("[dim]{task.description}"),
        console=err,
        transient=True,
        redirect_stdout=False,  # the stack routes function output itself
        redirect_stderr=False,
    ) as progress:
        task = progress.add_task("", total=total, last="")

        def finished(job: Job) -> None:
            progress.update(task, advance=1, last=render.progress_label(job))

        def still_open(seen: list[JobProgress]) -> None:
            progress.update(task, description=markup(render.open_jobs_label(seen)))

        yield finished, still_open


def _report_still_open(results: Sequence[RunResult], timeout_s: float) -> None:
    from richdoc.jobs import JobStatus
    from richdoc_tools.terminal import visible

    finished = (JobStatus.SUCCEEDED, JobStatus.DEAD_LETTERED)
    still_open = [r for r in results if r.status not in finished]
    if not still_open:
        return
    print(
        f"richdoc run: timed out after {timeout_s:g} s; {len(still_open)} job(s) still open:",
        file=sys.stderr,
    )
    for r in still_open:
        print(f"  {visible(r.key)}  {r.job_id}  {r.status}", file=sys.stderr)
