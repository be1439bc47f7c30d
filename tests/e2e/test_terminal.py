"""The operator's terminal: `richdoc run`, `richdoc local serve` and the operator commands
as a new user meets them, each in its own process, on a pseudo-terminal where what a real
terminal receives matters.

Every test here starts processes; the stack for the operator commands is one
`richdoc local serve` shared by the module."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.terminal import visible

from richdoc.jobs import JobStatus, job_id_for
from tests.support.cli_process import RICHDOC, ROOT, environment, in_terminal, readable
from tests.support.local_serve import Served, serving

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("terminal")]

ESCAPE_KEY = "\x1b[31mred\x1b[0m.md"  # an object key carrying a colour escape
MARKUP_KEYS = ("oops[/x].md", "[draft] plan.md")
# Longer than rich makes a column when it fits a table into 80 columns.
LONG_KEY = "reports/2024/quarterly-review-of-the-northern-region-supplier-agreements-v3.md"
# C1 control sequences (CSI is U+009B): SQS refuses C0 controls such as ESC in a message,
# but takes these, which a terminal may still act on.
MALFORMED_BODY = "\x9b2J\x9b31mnot [bold]a notification[/bold]"


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# ---- richdoc run on a terminal -----------------------------------------------------------------


def test_run_shows_progress_and_the_table_and_function_logs_go_to_the_file(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.md").write_text("# Note\n\nEffective 1 March 2024, signed 2 February 2024.\n")
    (docs / "[draft] plan.md").write_text("# Plan\n\nThe rota changes next month.\n")
    (docs / ESCAPE_KEY).write_text("# Red\n\nA plain paragraph.\n")
    (docs / "drawing.dwg").write_bytes(b"AC1032" + bytes(40))
    log = tmp_path / "functions.log"

    code, raw = in_terminal(
        [*RICHDOC, "run", str(docs), "--clarify", "--log", str(log)], columns=240
    )
    text = readable(raw)

    assert code == 1, text  # the drawing is dead-lettered
    # The terminal shows the table, with every name as it is ...
    for name in ("note.md", "[draft] plan.md", "drawing.dwg"):
        assert name in text
    assert "unsupported_feature" in text and "format:dwg" in text
    # ... control characters spelled out, never sent to the terminal raw ...
    assert "\\x1b[31mred\\x1b[0m.md" in text
    assert ESCAPE_KEY not in raw
    # ... and no function output: that is all in the log file.
    assert '"level"' not in raw and '"_aws"' not in raw and "correlation_id" not in raw
    logged = _json_lines(log.read_text())
    finished = {line["service"] for line in logged if line.get("message") == "stage finished"}
    assert finished == {"plan", "parse", "project", "detect"}
    assert any("_aws" in line for line in logged)  # the EMF metric lines
    assert f"function logs: {log}" in text


FUNCTION_OUTPUT_SCRIPT = """
import contextlib, logging, subprocess, sys, threading
from pathlib import Path

from aws_lambda_powertools import Logger
from richdoc_tools.local.runtime.output import FunctionLog

# Both bound to the standard streams before the function log exists.
bound_early = Logger(service="bound-early")
stdlib = logging.getLogger("stdlib-stderr")
stdlib.addHandler(logging.StreamHandler())
stdlib.setLevel(logging.INFO)

with contextlib.ExitStack() as stack:
    FunctionLog(Path(sys.argv[1]), capture_descriptors=True).open(stack)

    def function():
        bound_early.info("function powertools line")
        print("function printed line")
        stdlib.info("function stdlib line")
        print("function stderr line", file=sys.stderr)
        # like the parse worker's zygote: a child process writing to fds 1 and 2
        subprocess.run(["sh", "-c", "echo function child stdout; echo function child stderr >&2"])

    thread = threading.Thread(target=function, name="lambda-SomeFunction")
    thread.start()
    thread.join()
    print("tool printed line")
    print("tool stderr line", file=sys.stderr)
    stdlib.info("tool stdlib line")
print("after the stack")
"""


def test_every_route_of_function_output_leads_to_the_log_and_the_tools_own_to_the_terminal(
    tmp_path: Path,
) -> None:
    log = tmp_path / "functions.log"
    code, raw = in_terminal([sys.executable, "-c", FUNCTION_OUTPUT_SCRIPT, str(log)])
    assert code == 0, raw
    logged = log.read_text()
    for line in (
        "function powertools line",
        "function printed line",
        "function stdlib line",
        "function stderr line",
        "function child stdout",
        "function child stderr",
    ):
        assert line in logged and line not in raw, line
    for line in ("tool printed line", "tool stderr line", "tool stdlib line", "after the stack"):
        assert line in raw and line not in logged, line


# ---- richdoc run: failures the user must see at once --------------------------------------------

# The real command line with one piece of the pipeline replaced by work that cannot finish
# or a delivery that fails, so the outcome never depends on timing.
PATCHED_RUN_SCRIPT = """
import sys, threading
patch = sys.argv[1]
if patch == "parse-blocks":
    import richdoc.parse.step
    from richdoc_tools.local.stack import EmbeddedStack
    parsing = threading.Event()
    def parse_request(*args, **kwargs):
        parsing.set()
        threading.Event().wait()
    assert callable(richdoc.parse.step.parse_request)  # what the parse handler calls
    richdoc.parse.step.parse_request = parse_request
    wait_for_jobs = EmbeddedStack.wait_for_jobs
    def wait_from_the_blocked_parse_on(self, *args, **kwargs):
        # --timeout counts once the job is in its parse (RUNNING), however slow the machine.
        if not parsing.wait(timeout=240):
            sys.exit("the parse was never called")
        return wait_for_jobs(self, *args, **kwargs)
    EmbeddedStack.wait_for_jobs = wait_from_the_blocked_parse_on
elif patch == "poller-fails":
    from richdoc_tools.local.runtime.events import SqsPoller
    def tick(self):
        raise RuntimeError("receive failed: injected")
    SqsPoller.tick = tick
elif patch == "waits-forever":
    import richdoc_tools.run
    def run_files(*args, **kwargs):
        print("waiting for jobs", file=sys.stderr, flush=True)
        while True:  # timed waits: Ctrl-C landing just before an untimed one is never seen
            threading.Event().wait(0.05)
    richdoc_tools.run.run_files = run_files
from richdoc_tools.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _patched_run(patch: str, *argv: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", PATCHED_RUN_SCRIPT, patch, "run", *argv],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "note.md"
    path.write_text("# Note\n\nSome text.\n")
    return path


def test_a_run_that_times_out_says_which_jobs_are_still_open_and_exits_1(note: Path) -> None:
    run = _patched_run("parse-blocks", str(note), "--timeout", "3")
    _, err = run.communicate(timeout=300)
    assert run.returncode == 1, err
    assert "richdoc run: timed out after 3 s; 1 job(s) still open:" in err
    [still_open] = [line for line in err.splitlines() if line.startswith("  note.md ")]
    assert still_open.split()[-1] == JobStatus.RUNNING
    assert "Traceback" not in err


def test_a_failing_event_loop_stops_the_run_at_once_with_its_error(note: Path) -> None:
    run = _patched_run("poller-fails", str(note), "--timeout", "1800")
    _, err = run.communicate(timeout=300)  # far less than --timeout: it does not wait
    assert run.returncode == 1, err
    assert "the embedded stack stopped delivering events" in err
    assert "RuntimeError: receive failed: injected" in err
    assert "Traceback" not in err


def test_ctrl_c_stops_a_run_quietly_with_exit_130(note: Path) -> None:
    run = _patched_run("waits-forever", str(note))
    assert run.stderr is not None
    for line in run.stderr:
        if "waiting for jobs" in line:
            break
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


# ---- richdoc local serve and the operator commands ----------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("serve") / "functions.log") as running:
        yield running
    assert running.process.returncode == 0, running.stopped
    assert running.stopped.strip().endswith("stopped")
    # Neither the idle polling nor the tests' requests print werkzeug's access log.
    assert "HTTP/1.1" not in running.banner + running.stopped


@pytest.fixture(scope="module")
def uploaded(served: Served) -> dict[str, str]:
    """Object key -> job id for files whose keys look like markup or carry escapes, one
    unsupported file, and a malformed message on the ingest queue."""
    bucket = served.outputs["IngestBucketName"]
    s3 = served.client("s3")
    jobs = {}
    for key in (*MARKUP_KEYS, ESCAPE_KEY, LONG_KEY, "drawing.dwg"):
        body = b"AC1032" + bytes(40) if key.endswith(".dwg") else b"# Title\n\nText.\n"
        put = s3.put_object(Bucket=bucket, Key=key, Body=body)
        jobs[key] = job_id_for(bucket, key, put["VersionId"])
    served.client("sqs").send_message(
        QueueUrl=served.outputs["IngestQueueUrl"], MessageBody=MALFORMED_BODY
    )
    served.wait_for(list(jobs.values()))
    return jobs


def test_serve_prints_every_output_and_the_commands_the_docs_promise(served: Served) -> None:
    for name, value in served.outputs.items():
        assert f"  {name} " in served.banner and value in served.banner, name
    bucket = served.outputs["IngestBucketName"]
    for command in (
        f"aws --endpoint-url {served.endpoint} s3 cp FILE s3://{bucket}/",
        f"richdoc jobs list --endpoint-url {served.endpoint}",
        f"richdoc jobs show JOB_ID --endpoint-url {served.endpoint}",
        f"richdoc dlq list --endpoint-url {served.endpoint}",
        f"richdoc dlq redrive --endpoint-url {served.endpoint}",
    ):
        assert command in served.banner, command
    # The subscription it suggests is one the consumer policy allows (ConsumerRulePrefix),
    # and a consumer's code is told how to reach the stack.
    assert "events put-rule --event-bus-name richdoc-richdoc --name consumer-mine " in (
        served.banner
    )
    assert f"export AWS_ENDPOINT_URL={served.endpoint}" in served.banner
    assert "not emulated here" in served.banner
    assert "statement DenyInsecureTransport of " in served.banner
    assert f"function logs: {served.log}" in served.banner


def test_a_second_server_on_a_port_in_use_exits_2_at_once(served: Served) -> None:
    second = subprocess.run(
        [*RICHDOC, "local", "serve", "--port", str(served.port)],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert second.returncode == 2
    assert f"cannot listen on 127.0.0.1:{served.port}" in second.stderr
    assert "choose another port with --port" in second.stderr
    assert "Traceback" not in second.stderr


def test_jobs_list_shows_keys_literally_and_whole_job_ids_even_in_80_columns(
    served: Served, uploaded: dict[str, str]
) -> None:
    code, raw = in_terminal(
        [*RICHDOC, "jobs", "list", "--endpoint-url", served.endpoint], columns=80
    )
    text = readable(raw)
    assert code == 0, text
    for job_id in uploaded.values():
        assert job_id in text  # all 32 characters, on one line
    assert ESCAPE_KEY not in raw
    wide_code, wide = in_terminal(
        [*RICHDOC, "jobs", "list", "--endpoint-url", served.endpoint], columns=220
    )
    wide_text = readable(wide)
    assert wide_code == 0
    assert ESCAPE_KEY not in wide
    assert "\\x1b[31mred\\x1b[0m.md" in wide_text
    for key in MARKUP_KEYS:
        assert key in wide_text
    assert "unsupported_feature [format:dwg]" in wide_text, wide_text


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    """A table printed in a pipe: its header and rows, split at the tabs."""
    header, *rows = text.splitlines()
    return header.split("\t"), [row.split("\t") for row in rows]


def test_in_a_pipe_jobs_list_prints_every_value_whole_as_tab_separated_rows(
    served: Served, uploaded: dict[str, str]
) -> None:
    listed = served.richdoc("jobs", "list")  # stdout is a pipe, as in `| less`
    assert listed.returncode == 0, listed.stderr
    header, rows = _rows(listed.stdout)
    assert header == [
        "job id",
        "status",
        "run",
        "stage",
        "tier",
        "key",
        "failure",
        "queue",
        "updated",
    ]
    by_key = {row[5]: row for row in rows}
    for key, job_id in uploaded.items():
        row = by_key[visible(key)]  # control characters spelled out, never raw
        assert row[0] == job_id and len(row) == 9
    assert by_key[LONG_KEY][1] == "SUCCEEDED"
    assert by_key["drawing.dwg"][1] == "DEAD_LETTERED"
    assert by_key["drawing.dwg"][6] == "unsupported_feature [format:dwg]"
    assert "\x1b" not in listed.stdout and "…" not in listed.stdout


def test_in_a_pipe_jobs_show_prints_the_record_and_every_attempt_as_tab_separated_rows(
    served: Served, uploaded: dict[str, str]
) -> None:
    shown = served.richdoc("jobs", "show", uploaded["drawing.dwg"])
    assert shown.returncode == 0, shown.stderr
    record, attempts = shown.stdout.split("\n\n")
    header, fields = _rows(record)  # one format in a pipe: rows, not JSON and rows
    assert header == ["field", "value"] and all(len(row) == 2 for row in fields)
    values = dict(fields)
    assert values["job_id"] == uploaded["drawing.dwg"]
    assert values["status"] == "DEAD_LETTERED"
    assert (values["failure.kind"], values["failure.feature"]) == (
        "unsupported_feature",
        "format:dwg",
    )
    header, rows = _rows(attempts)
    assert header[:3] == ["run", "#", "stage"] and header[-1] == "reason"
    [plan] = [row for row in rows if row[2] == "plan"]
    # The reason lists every supported extension: far longer than the terminal's cut.
    assert "'drawing.dwg': supported formats are " in plan[-1]
    assert plan[-1].endswith("xltx") and len(plan[-1]) > 100


def test_in_a_pipe_dlq_list_prints_every_message_whole(
    served: Served, uploaded: dict[str, str]
) -> None:
    from richdoc_tools.local.runtime.events import wait_until

    def listed() -> subprocess.CompletedProcess[str]:
        return served.richdoc("dlq", "list", "--peek")  # the malformed one has no job record

    # The malformed message reaches the DLQ after the queue's maxReceiveCount deliveries.
    assert wait_until(lambda: "\tmalformed\t" in listed().stdout, timeout_s=120, interval_s=1)
    out = listed()
    assert out.returncode == 0, out.stderr
    *table, count = out.stdout.splitlines()
    header, rows = _rows("\n".join(table))
    assert header == ["message id", "job id", "run", "kind", "feature", "reason"]
    assert count == f"{len(rows)} message(s) on the dead-letter queue"
    [dwg] = [row for row in rows if row[1] == uploaded["drawing.dwg"]]
    assert dwg[3:5] == ["unsupported_feature", "format:dwg"]
    assert dwg[5].endswith("xltx")  # whole, where a terminal cuts it at 100 characters
    [malformed] = [row for row in rows if row[3] == "malformed"]
    assert "\\x9b2J" in malformed[5] and "\x9b" not in out.stdout


def test_jobs_show_takes_the_prefix_run_prints_and_lists_an_ambiguous_prefixs_jobs(
    served: Served, uploaded: dict[str, str]
) -> None:
    job_id = uploaded["drawing.dwg"]
    shown = served.richdoc("jobs", "show", job_id[:12], "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["job_id"] == job_id

    first, second = uploaded[MARKUP_KEYS[0]], uploaded[MARKUP_KEYS[1]]
    shared = ""  # the longest prefix the two job ids share (possibly none)
    while len(shared) < len(first) and first[: len(shared) + 1] == second[: len(shared) + 1]:
        shared = first[: len(shared) + 1]
    ambiguous = served.richdoc("jobs", "show", shared)
    assert ambiguous.returncode == 2
    assert "matches" in ambiguous.stderr and first in ambiguous.stderr
    assert second in ambiguous.stderr

    missing = served.richdoc("jobs", "show", "f" * 32)
    assert missing.returncode == 1
    assert f"no job {'f' * 32}" in missing.stderr


def test_dlq_list_names_malformed_messages_and_redrive_says_what_each_kind_will_do(
    served: Served, uploaded: dict[str, str]
) -> None:
    from richdoc_tools.local.runtime.events import wait_until

    def kinds() -> list[str]:
        listed = served.richdoc("dlq", "list", "--peek", "--json")
        return sorted(letter["kind"] for letter in json.loads(listed.stdout))

    # The malformed message reaches the DLQ after the queue's maxReceiveCount deliveries.
    assert wait_until(lambda: "malformed" in kinds(), timeout_s=120, interval_s=1), kinds()
    assert kinds() == ["malformed", "unsupported_feature"]

    # Without --peek: the job records' dead letters, the malformed one only counted.
    recorded = served.richdoc("dlq", "list", "--json")
    assert recorded.returncode == 0, recorded.stderr
    [letter] = json.loads(recorded.stdout)
    assert letter["job_id"] == uploaded["drawing.dwg"] and letter["kind"] == "unsupported_feature"
    assert letter["received"] is False and letter["receive_count"] is None
    assert "1 other message(s) wait on the dead-letter queue" in recorded.stderr
    peeked = served.richdoc("dlq", "list", "--peek")
    assert "warning: --peek receives every message" in peeked.stderr
    assert "DeadLetterAgeAlarm" in peeked.stderr

    code, raw = in_terminal([*RICHDOC, "dlq", "list", "--peek", "--endpoint-url", served.endpoint])
    text = readable(raw)
    assert code == 0, text
    assert "malformed" in text and "message body is not JSON" in text
    assert "\x9b2J" not in raw  # the body's screen-clearing control is spelled out
    assert "\\x9b2J" in text
    assert uploaded["drawing.dwg"] in text

    log = served.log.read_text()
    [warning] = {
        line["body"]
        for line in _json_lines(log)
        if line.get("message") == "malformed ingest message"
    }
    assert warning == repr(MALFORMED_BODY)

    redrive = served.richdoc("dlq", "redrive")
    assert redrive.returncode == 0, redrive.stderr
    assert "moved 2 message(s) back to the ingest queue" in redrive.stdout
    assert "1 dead-lettered run(s): each starts the next run of its job" in redrive.stdout
    assert "1 malformed message(s), not S3 notifications: they start nothing" in redrive.stdout
    assert "0 S3 notification(s)" in redrive.stdout


def test_a_closed_output_pipe_ends_quietly(served: Served, uploaded: dict[str, str]) -> None:
    reader = subprocess.Popen(
        [*RICHDOC, "jobs", "list", "--json", "--endpoint-url", served.endpoint],
        cwd=ROOT,
        env=environment(drop=("AWS_PROFILE",)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None
    reader.stdout.close()  # like `| head -1` exiting before the listing is written
    _, err = reader.communicate(timeout=120)
    assert reader.returncode == 141
    assert err == ""


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not installed")
def test_the_aws_cli_drops_a_file_that_becomes_a_job(served: Served, tmp_path: Path) -> None:
    memo = tmp_path / "memo.md"
    memo.write_text("# Memo\n\nThe new rota takes effect the following month.\n")
    bucket = served.outputs["IngestBucketName"]
    env = environment(
        {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
        },
        drop=("AWS_PROFILE", "AWS_SESSION_TOKEN"),
    )
    copied = subprocess.run(
        ["aws", "--endpoint-url", served.endpoint, "s3", "cp", str(memo), f"s3://{bucket}/"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert copied.returncode == 0, copied.stderr
    version = served.client("s3").head_object(Bucket=bucket, Key="memo.md")["VersionId"]
    job_id = job_id_for(bucket, "memo.md", version)
    assert served.wait_for([job_id])[job_id].status is JobStatus.SUCCEEDED
    listed = served.richdoc("jobs", "list", "--json")
    assert job_id in {job["job_id"] for job in json.loads(listed.stdout)}


def test_run_keeps_to_its_own_stack_whatever_the_shell_points_aws_at(
    served: Served, note: Path
) -> None:
    """A shell still set up for `richdoc local serve` (or any AWS account) must not
    redirect `richdoc run`'s embedded stack there."""
    run = subprocess.run(
        [*RICHDOC, "run", str(note), "--json"],
        cwd=ROOT,
        env=environment({"AWS_ENDPOINT_URL": served.endpoint, "AWS_PROFILE": "not-a-profile"}),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    [result] = json.loads(run.stdout)
    assert result["status"] == "SUCCEEDED"
    assert served.jobs.get(result["job_id"]) is None  # nothing reached the served stack
