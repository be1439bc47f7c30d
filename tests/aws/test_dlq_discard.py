"""Discarding dead letters for good (``dead_letter_queue.acting.discard``) and its command,
``richdoc dlq discard``, which the console's Discard shares: each message goes only once its
job records why; a message whose job has moved on stays; the command's usage errors, dry
run, JSON and exit codes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from richdoc_tools.cli import main
from richdoc_tools.ops.dead_letter_queue.acting import discard
from richdoc_tools.ops.dead_letter_queue.reading import peek, queue_depth
from richdoc_tools.ops.operator import Operator

from richdoc.deadletter import failure_attributes
from richdoc.jobs import DeadLetterMark, JobStatus
from richdoc.taxonomy import Failure, FailureKind
from tests.support.console import Console, job, make_console


@pytest.fixture
def console(aws: None, template: Any, monkeypatch: pytest.MonkeyPatch) -> Console:
    """The stack's resources in moto; ``richdoc`` commands connect to them."""
    made = make_console(template)
    monkeypatch.setattr(Operator, "connect", classmethod(lambda cls, *a, **k: made.operator))
    return made


def _send(console: Console, body: str = '{"Records": []}', **attributes: Any) -> str:
    sent = console.operator.sqs.send_message(
        QueueUrl=console.resources.dead_letter_queue_url,
        MessageBody=body,
        **({"MessageAttributes": attributes["attributes"]} if attributes else {}),
    )
    message_id: str = sent["MessageId"]
    return message_id


def _dead_lettered(
    console: Console, n: int, kind: FailureKind, *, recorded_message: str | None = None
) -> str:
    """A dead-lettered run: its message on the queue and its job record naming it (or,
    ``recorded_message``, naming another: the job has moved on)."""
    failure = Failure(kind, f"reason {n}")
    message_id = _send(console, attributes=failure_attributes(f"{n:032x}", 1, failure))
    mark = DeadLetterMark(message_id=recorded_message or message_id, sent_by="state-machine")
    source = console.put_source(f"file-{n}.pdf", b"%PDF-")
    console.put_job(
        job(n, source, status=JobStatus.DEAD_LETTERED, failure=failure, dead_letter=mark)
    )
    return message_id


def _waiting(console: Console) -> list[str]:
    return sorted(letter.message_id for letter in peek(console.operator.sqs, _dlq(console)))


def _dlq(console: Console) -> str:
    return console.resources.dead_letter_queue_url


def _reason(console: Console, n: int) -> str | None:
    record = console.operator.jobs.get(f"{n:032x}")
    assert record is not None and record.dead_letter is not None
    assert record.status is JobStatus.DEAD_LETTERED  # a discard never changes the status
    return record.dead_letter.discard_reason


def test_a_discard_records_the_reason_on_each_job_and_deletes_only_its_messages(
    console: Console,
) -> None:
    first, second, kept = (_dead_lettered(console, n, FailureKind.CORRUPT_INPUT) for n in (1, 2, 3))
    taken = discard(console.operator, [first, second], "scans of a fax")
    assert sorted(taken.done) == sorted([first, second])
    assert taken.declined == [] and taken.missing == []
    assert (_reason(console, 1), _reason(console, 2), _reason(console, 3)) == (
        "scans of a fax",
        "scans of a fax",
        None,
    )
    assert _waiting(console) == [kept]
    assert queue_depth(console.operator.sqs, _dlq(console)).waiting == 1  # released at once


def test_a_message_whose_job_moved_on_stays_and_one_of_no_recorded_run_goes(
    console: Console,
) -> None:
    moved_on = _dead_lettered(console, 1, FailureKind.TRANSIENT, recorded_message="run-2's")
    undelivered = _send(console)  # SQS moved it: no job recorded a run for it
    taken = discard(console.operator, [moved_on, undelivered, "not-on-the-queue"], "cleanup")
    assert taken.done == [undelivered]
    assert taken.declined == [moved_on] and taken.missing == ["not-on-the-queue"]
    assert _reason(console, 1) is None
    assert _waiting(console) == [moved_on]


def test_a_discard_without_a_reason_is_refused_before_any_message_is_received(
    console: Console,
) -> None:
    message_id = _dead_lettered(console, 1, FailureKind.CORRUPT_INPUT)
    with pytest.raises(ValueError, match="say why"):
        discard(console.operator, [message_id], "  ")
    [letter] = peek(console.operator.sqs, _dlq(console))
    assert letter.receive_count == 1  # this peek was its first receive


# ---- richdoc dlq discard ----------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> Any:
    assert main(["dlq", "discard", *args, "--json"]) == code
    return json.loads(capsys.readouterr().out)


def test_dlq_discard_deletes_the_named_messages_and_prints_what_became_of_each(
    console: Console, capsys: pytest.CaptureFixture[str]
) -> None:
    first, kept = (_dead_lettered(console, n, FailureKind.CORRUPT_INPUT) for n in (1, 2))
    printed = _cli(capsys, first, first, "--reason", "  a scan of a fax ")
    assert printed == {
        "reason": "a scan of a fax",
        "dry_run": False,
        "chosen": [first],  # named twice, chosen once
        "discarded": [first],
        "declined": [],
        "missing": [],
    }
    assert _reason(console, 1) == "a scan of a fax" and _waiting(console) == [kept]
    assert main(["dlq", "discard", kept, "--reason", "duplicate"]) == 0
    out = capsys.readouterr().out
    assert f"{kept}  discarded" in out
    assert "1 message(s): 1 discarded, 0 declined, 0 missing" in out


def test_dlq_discard_all_of_a_kind_counts_first_with_dry_run(
    console: Console, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt = [_dead_lettered(console, n, FailureKind.CORRUPT_INPUT) for n in (1, 2)]
    transient = _dead_lettered(console, 3, FailureKind.TRANSIENT)
    args = ("--all", "--kind", "corrupt_input", "--reason", "re-uploaded")
    dry = _cli(capsys, *args, "--dry-run")
    assert dry["dry_run"] is True and sorted(dry["chosen"]) == sorted(corrupt)
    assert dry["discarded"] == [] and len(_waiting(console)) == 3
    assert main(["dlq", "discard", *args, "--dry-run"]) == 0
    assert "dry run: 2 message(s) would be discarded" in capsys.readouterr().out
    done = _cli(capsys, *args)
    assert sorted(done["discarded"]) == sorted(corrupt)
    assert _waiting(console) == [transient]
    # The records say they are discarded: --all no longer chooses them.
    assert _cli(capsys, *args)["chosen"] == []


def test_dlq_discard_exits_1_for_a_message_not_on_the_queue_and_3_for_one_not_its_to_discard(
    console: Console, capsys: pytest.CaptureFixture[str]
) -> None:
    moved_on = _dead_lettered(console, 1, FailureKind.TRANSIENT, recorded_message="run-2's")
    assert _cli(capsys, moved_on, "--reason", "r", code=3)["declined"] == [moved_on]
    missing = _cli(capsys, moved_on, "gone", "--reason", "r", code=1)
    assert missing["missing"] == ["gone"] and missing["declined"] == [moved_on]
    assert _waiting(console) == [moved_on]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--reason", "r"], "name the messages, or --all"),
        (["m-1", "--all", "--reason", "r"], "not both"),
        (["m-1", "--kind", "transient", "--reason", "r"], "--kind and --feature choose among"),
        (["m-1", "--reason", " "], "--reason: say why"),
    ],
)
def test_dlq_discard_usage_errors_exit_2_and_touch_nothing(
    console: Console, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    message_id = _dead_lettered(console, 1, FailureKind.CORRUPT_INPUT)
    assert main(["dlq", "discard", *args]) == 2
    assert says in capsys.readouterr().err
    assert _waiting(console) == [message_id] and _reason(console, 1) is None


def test_dlq_discard_without_a_reason_is_clicks_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["dlq", "discard", "m-1"])
    assert exit_info.value.code == 2
    assert "Missing option '--reason'" in capsys.readouterr().err
