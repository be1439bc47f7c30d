"""The command line: `richdoc run` contract (table, --json, --out, exit codes) and the
operator commands, against the embedded stack and, for the AWS-only calls, a stubbed SQS."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.cli import main

from tests.support.published_schemas import schema_errors

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def test_every_command_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    commands = [
        ["run"],
        ["parse"],
        ["project"],
        ["detect"],
        ["local", "serve"],
        ["jobs", "list"],
        ["jobs", "show"],
        ["jobs", "backlog"],
        ["jobs", "delete"],
        ["reprocess"],
        ["dlq", "list"],
        ["dlq", "redrive"],
        ["dlq", "discard"],
        ["console"],
        ["deploy", "check"],
        ["models", "synthesize"],
    ]
    for command in commands:
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--help"])
        assert exit_info.value.code == 0
        assert "example: richdoc" in capsys.readouterr().out, command


def test_the_command_modules_defer_what_their_commands_need() -> None:
    """Every invocation imports every command module (`--help` too): the libraries the
    commands use cost more start-up time than the whole command line."""
    listed = subprocess.run(
        [sys.executable, "-c", "import sys, richdoc_tools.cli; print(*sys.modules)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    deferred = {"rich", "boto3", "botocore", "pydantic", "richdoc", "moto", "docling"}
    assert {name.split(".")[0] for name in listed.stdout.split()} & deferred == set()


def test_models_synthesize_writes_the_weights_the_tests_use_byte_for_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model_weights: Path
) -> None:
    """The same seed gives the same bytes, in the folders docling's download creates."""
    assert main(["models", "synthesize", str(tmp_path / "weights"), "--seed", "0"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'weights'}\n"
    written = sorted(p.relative_to(tmp_path / "weights") for p in (tmp_path / "weights").rglob("*"))
    assert written == sorted(p.relative_to(model_weights) for p in model_weights.rglob("*"))
    for name in written:
        if (model_weights / name).is_file():
            assert (tmp_path / "weights" / name).read_bytes() == (model_weights / name).read_bytes()
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "synthesize", str(tmp_path / "other"), "--label", "tabel"])
    assert exit_info.value.code == 2
    assert "'tabel' is not one of" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run"])
    assert exit_info.value.code == 2
    assert main(["run", str(tmp_path / "missing.pdf")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["run", str(empty)]) == 2
    capsys.readouterr()
    assert main(["run", str(tmp_path / "\x1b[2Jgone.pdf")]) == 2
    err = capsys.readouterr().err
    assert "\\x1b[2Jgone.pdf" in err and "\x1b" not in err  # spelled out, never raw
    # Template parameters the template does not have, or values it refuses, before any start.
    notes = str(SAMPLES / "team-notes.md")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(["run", notes, "--parameter-overrides", "NoSuchParameter=1"]) == 2
    assert "NoSuchParameter is not a parameter of template.yaml" in capsys.readouterr().err
    assert main(["run", notes, "--parameter-overrides", "MaxRunningJobs=-1"]) == 2
    assert "MaxRunningJobs=-1: at least 0" in capsys.readouterr().err
    assert list(scratch.iterdir()) == []  # no folder left for a log never written
    assert main(["local", "serve", "--parameter-overrides", "MaxRunningJobs"]) == 2
    assert "not Key=Value" in capsys.readouterr().err


@pytest.mark.parametrize("seconds", ["0", "-5", "nan", "soon"])
def test_run_timeout_must_be_a_positive_number_of_seconds(
    seconds: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(SAMPLES / "team-notes.md"), "--timeout", seconds])
    assert exit_info.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_an_out_that_is_a_file_is_a_usage_error_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.txt"
    out.write_text("not a directory")
    assert main(["run", str(SAMPLES / "team-notes.md"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"richdoc run: --out {out}: not a directory\n"  # nothing was deployed
    folder_as_file = tmp_path / "out"
    folder_as_file.mkdir()
    (folder_as_file / "team-notes.md").write_text("a file where a folder would go")
    assert main(["run", str(SAMPLES / "team-notes.md"), "--out", str(folder_as_file)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"richdoc {version('richdoc')}\n"


@pytest.mark.parametrize("command", ["project", "detect"])
def test_step_commands_report_a_missing_input_as_a_usage_error_in_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    assert main([command, str(missing), "-o", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err == f"richdoc {command}: {missing}: no such file\n"


@pytest.mark.parametrize("command", ["project", "detect"])
@pytest.mark.parametrize("content", [b"not json at all", b'{"schema": "something else"}'])
def test_step_commands_report_an_invalid_input_as_corrupt_input(
    command: str, content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.json"
    source.write_bytes(content)
    assert main([command, str(source), "-o", str(tmp_path / "out.json")]) == 10
    [line] = capsys.readouterr().err.splitlines()
    failure = json.loads(line)
    assert failure["kind"] == "corrupt_input" and failure["reason"].startswith("not a valid ")
    assert not (tmp_path / "out.json").exists()


def test_each_input_gets_one_distinct_key_the_file_name_where_it_is_unique() -> None:
    from richdoc_tools.run import input_keys

    files = [
        Path("a/report.pdf"),
        Path("b/report.pdf"),
        Path("c/report~2.pdf"),  # a name the disambiguation would otherwise produce
        Path("notes.md"),
        Path("d/report.pdf"),
        Path("x/README"),
        Path("y/README"),
    ]
    assert input_keys(files) == [
        "report.pdf",
        "report~3.pdf",
        "report~2.pdf",
        "notes.md",
        "report~4.pdf",
        "README",
        "README~2",
    ]
    # The first input with a name keeps it: the order of the inputs decides.
    assert input_keys(list(reversed(files))) == [
        "README",
        "README~2",
        "report.pdf",
        "notes.md",
        "report~2.pdf",
        "report~3.pdf",
        "report~4.pdf",
    ]


# ---- richdoc run on the embedded stack -------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.docling
@pytest.mark.xdist_group("stack")
def test_run_json_has_the_design_fields_and_out_writes_every_artifact(
    stack: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from richdoc_tools.ops.job_document import JobDocument
    from richdoc_tools.run import run_files, write_outputs

    files = [SAMPLES / "contract.docx", SAMPLES / "team-notes.md", SAMPLES / "broken.docx"]
    results = run_files(stack, files, clarify=True, timeout_s=180)
    records = [r.model_dump(mode="json") for r in results]
    for record in records:
        assert {
            "source",
            "job_id",
            "status",
            "failure_kind",
            "feature",
            "attempts",
            "shards",
            "counts",
        } <= set(record)
        assert record["shards"] == 1  # none of these is a PDF long enough to shard
        # The design's counts, the chunks of chunks.jsonl and the CSVs under tables/.
        assert set(record["counts"]) == {
            "nodes",
            "edges",
            "spans",
            "ambiguities",
            "chunks",
            "tables",
        }
    contract, notes, broken = records
    assert (contract["status"], contract["failure_kind"], contract["feature"]) == (
        "SUCCEEDED",
        None,
        None,
    )
    assert contract["ambiguity_kinds"] == ["conflicting_dates"]
    assert notes["ambiguity_kinds"] == ["undated"]
    assert (broken["status"], broken["failure_kind"]) == ("DEAD_LETTERED", "corrupt_input")
    assert [(a["stage"], a["outcome"]) for a in broken["attempts"]] == [
        ("plan", "ok"),
        ("parse", "CorruptInput"),
    ]

    write_outputs(results, stack, tmp_path)
    assert sorted(p.name for p in (tmp_path / "contract.docx").iterdir()) == [
        "chunks.jsonl",
        "detection.json",
        "docling.json",
        "document.md",
        "job.json",
        "projection.json",
        "tables",
    ]
    assert sorted(p.name for p in (tmp_path / "broken.docx").iterdir()) == ["job.json"]
    for name in ("projection", "detection"):  # what the pipeline wrote meets its schema
        written = sorted(tmp_path.glob(f"*/{name}.json"))
        assert len(written) == 2
        assert [schema_errors(name, json.loads(p.read_bytes())) for p in written] == [[], []]
    job = json.loads((tmp_path / "broken.docx" / "job.json").read_text())
    assert job["status"] == "DEAD_LETTERED" and job["attempts"]
    assert job["input"] == str(SAMPLES / "broken.docx")
    # One public shape: job.json is the job as `richdoc jobs show --json` prints it (and
    # the input), read again here, and `richdoc run --json` summarises it.
    again = JobDocument(
        job=stack.jobs.get(broken["job_id"]), attempts=stack.jobs.attempts.of_job(broken["job_id"])
    )
    shown = again.model_dump(mode="json")
    assert {name: value for name, value in job.items() if name != "input"} == shown
    assert broken["attempts"] == shown["attempts"] and broken["job_id"] == shown["job_id"]
    assert broken["failure_kind"] == shown["failure"]["kind"]


@pytest.mark.e2e
@pytest.mark.docling
@pytest.mark.xdist_group("stack")
def test_out_keeps_inputs_with_one_name_apart_and_a_rerun_leaves_no_stale_file(
    stack: Any, tmp_path: Path
) -> None:
    from richdoc_tools.run import run_files, write_outputs

    first, second = tmp_path / "one" / "memo.md", tmp_path / "two" / "memo.md"
    for path, text in ((first, "Alpha"), (second, "Beta")):
        path.parent.mkdir()
        path.write_text(f"# Memo\n\n{text} text.\n")
    out = tmp_path / "out"
    results = run_files(stack, [first, second], clarify=False, timeout_s=180)
    assert [r.key for r in results] == ["memo.md", "memo~2.md"]
    write_outputs(results, stack, out)
    for folder, path, text in (("memo.md", first, "Alpha"), ("memo~2.md", second, "Beta")):
        projection = json.loads((out / folder / "projection.json").read_text())
        assert text in projection["canonical_text"]
        assert json.loads((out / folder / "job.json").read_text())["input"] == str(path)

    # The same folder, re-run with a file that now fails: only this run's files remain.
    (out / "memo.md" / "notes-of-mine.txt").write_text("the user's own file stays")
    first.write_bytes(b"\x00\x01 binary, not markdown")
    rerun = run_files(stack, [first], clarify=False, timeout_s=180)
    assert (rerun[0].status, rerun[0].failure_kind) == ("DEAD_LETTERED", "corrupt_input")
    write_outputs(rerun, stack, out)
    assert sorted(p.name for p in (out / "memo.md").iterdir()) == ["job.json", "notes-of-mine.txt"]


def test_run_end_to_end_in_a_fresh_process(tmp_path: Path) -> None:
    """The main job as a user runs it: a subprocess, real exit code, JSON on stdout."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("# Note\n\nEffective 1 March 2024, signed 2 February 2024.\n")
    (docs / "ignored.dwg").write_bytes(b"AC1032" + bytes(40))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "richdoc_tools",
            "run",
            str(docs),
            "--clarify",
            "--json",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 1, result.stderr  # the .dwg file is dead-lettered
    assert result.stdout.startswith("["), result.stderr[-3000:]
    records = {Path(r["source"]).name: r for r in json.loads(result.stdout)}
    assert records["note.md"]["status"] == "SUCCEEDED"
    assert records["note.md"]["counts"]["ambiguities"] == 1
    assert records["ignored.dwg"]["feature"] == "format:dwg"
    assert (tmp_path / "out" / "note.md" / "projection.json").is_file()


def test_run_in_a_pipe_prints_tab_separated_rows_with_every_value_whole(tmp_path: Path) -> None:
    """`richdoc run docs/ | tee log`: rich would fit its table into 80 columns and cut the
    file names and statuses; in a pipe the rows are whole."""
    from richdoc_tools.cli.render.run import RUN_COLUMNS

    docs = tmp_path / "docs"
    docs.mkdir()
    name = "quarterly-review-of-the-northern-region-supplier-agreements-final-v3.md"
    (docs / name).write_text("# Review\n\nThe new rota takes effect on 1 March 2024.\n")
    result = subprocess.run(
        [sys.executable, "-m", "richdoc_tools", "run", str(docs)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    header, row = result.stdout.splitlines()  # the progress and notes go to stderr
    assert header.split("\t") == list(RUN_COLUMNS)
    cells = dict(zip(RUN_COLUMNS, row.split("\t"), strict=True))
    assert (cells["file"], cells["status"], cells["failure kind"]) == (name, "SUCCEEDED", "-")
    assert len(cells["job id"]) == 12 and "…" not in result.stdout


# ---- operator commands -------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.docling
@pytest.mark.xdist_group("stack")
def test_jobs_and_dlq_commands_against_the_embedded_stack(
    stack: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from richdoc_tools.local.runtime.loops import wait_until
    from richdoc_tools.ops.dead_letter_queue.reading import peek

    upload = stack.upload(tmp_path / "ops.dwg", key="ops/ops.dwg", body=b"AC1032" + bytes(9))
    stack.wait_for_jobs([upload.job_id], 60)
    # The job is recorded dead-lettered before the state machine sends the message: wait
    # for the execution to end, not just for the record.
    sfn = stack.client("stepfunctions")
    execution_arn = (
        stack.outputs["StateMachineArn"].replace(":stateMachine:", ":execution:")
        + f":{upload.job_id}-r1"
    )
    assert wait_until(
        lambda: sfn.describe_execution(executionArn=execution_arn)["status"] != "RUNNING", 60
    )
    capsys.readouterr()

    assert main(["jobs", "list", "--status", "DEAD_LETTERED", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert upload.job_id in {j["job_id"] for j in listed}
    assert {j["status"] for j in listed} == {"DEAD_LETTERED"}

    assert main(["jobs", "show", upload.job_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["failure"]["feature"] == "format:dwg"
    # The plan refuses the format once, before any parse.
    assert [(a["stage"], a["tier"], a["outcome"]) for a in shown["attempts"]] == [
        ("plan", None, "UnsupportedFeature")
    ]

    assert main(["jobs", "show", "no-such-job"]) == 1

    assert main(["dlq", "list", "--json"]) == 0
    letters = json.loads(capsys.readouterr().out)
    assert upload.job_id in {d["job_id"] for d in letters}

    assert main(["dlq", "redrive"]) == 0
    assert "started SQS message move task" in capsys.readouterr().out
    # The redriven message starts run 2 of the same job (which fails the same way).
    assert wait_until(
        lambda: (
            stack.jobs.get(upload.job_id).run == 2 and stack.jobs.get(upload.job_id).status.terminal
        ),
        60,
    )

    # Run 2's dead letter discarded for good: the reason on the job, the message gone. The
    # redrive moved every message, other tests' too, and their jobs' functions print to
    # stdout as they run again: read the records and the queue, and the exit code.
    def run_2_dead_lettered() -> bool:  # marked so once its own message is on the queue
        job = stack.jobs.get(upload.job_id)
        return job.run == 2 and job.status == "DEAD_LETTERED"

    assert wait_until(run_2_dead_lettered, 60)
    message_id = stack.jobs.get(upload.job_id).dead_letter.message_id
    assert main(["dlq", "discard", message_id, "--reason", "a drawing"]) == 0
    discarded = stack.jobs.get(upload.job_id)
    assert discarded.status == "DEAD_LETTERED" and discarded.run == 2
    assert discarded.dead_letter.discard_reason == "a drawing"
    dlq_url = stack.outputs["DeadLetterQueueUrl"]
    assert message_id not in {d.message_id for d in peek(stack.client("sqs"), dlq_url)}
    assert main(["dlq", "discard", message_id, "--reason", "again"]) == 1  # gone already
