"""Webhooks end to end: a stack deployed with ``WebhookUrl`` delivers every completion event
through its EventBridge API destination to a real HTTPS receiver on 127.0.0.1, with the
connection's authorization: exactly one delivery per terminal change; a receiver that is
down for a while gets the events once it is back (EventBridge's retries, compressed); an
answer EventBridge does not retry, and retries running out, put the event on the
webhook's dead-letter queue with EventBridge's attributes. The secret never shows. The
receiver docs/consumers.md prints, run as printed, answers before its work and marks an
event handled only after it.

Waits are on observable conditions: a job's terminal record, the notifier having handled
every change (``notifications_delivered``), the webhook delivery having nothing left in
flight (``webhooks_delivered``)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from richdoc_tools.local.cloudformation.deploy import NO_ECHO_MASK
from richdoc_tools.local.runtime.events import wait_until

from richdoc.jobs import JobStatus
from richdoc_client.events import CompletionEvent, TerminalStatus
from tests.support.consumer_docs import documented
from tests.support.gates import Gate
from tests.support.stack_runs import job_of, upload
from tests.support.webhook_receiver import Authority, Receiver, Request, receiving

pytestmark = [pytest.mark.e2e, pytest.mark.docling]

TIMEOUT_S = 120
HEADER = "x-richdoc-webhook-key"
SECRET = "s3cr3t-for-the-webhook"
# Few retries, fast: the dead-letter test runs them all out (AWS's default is 185).
RETRIES = 3


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    """The authority that issues every receiver's certificate; the stack trusts it."""
    return Authority.made_in(tmp_path_factory.mktemp("webhook-ca"))


@pytest.fixture(scope="module")
def receiver(authority: Authority) -> Iterator[Receiver]:
    with receiving(HEADER, SECRET, authority) as receiver:
        yield receiver


@pytest.fixture(scope="module")
def webhook_stack(receiver: Receiver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from richdoc_tools.local.stack import EmbeddedStack

    log_path = tmp_path_factory.mktemp("lambda-logs") / "functions.log"
    parameters = {
        "WebhookUrl": receiver.url,
        "WebhookAuthorization": "API_KEY",
        "WebhookAuthName": HEADER,
        "WebhookAuthSecret": SECRET,
        "WebhookRateLimitPerSecond": "300",
        "WebhookMaximumRetryAttempts": str(RETRIES),
    }
    with EmbeddedStack(
        parameters=parameters,
        retry_delay_scale=0.0,
        retry_visibility_s=0,
        log_path=log_path,
        schedules=False,
        webhook_ca_file=receiver.ca_file,
    ) as stack:
        yield stack


@pytest.fixture
def stack(webhook_stack: Any, receiver: Receiver) -> Iterator[Any]:
    receiver.refuse_with(None)
    yield webhook_stack
    assert webhook_stack.loop_errors == []


def settled(stack: Any) -> None:
    """The notifier has published every change so far, and the webhook has answered."""
    assert wait_until(
        lambda: stack.notifications_delivered() and stack.webhooks_delivered(), TIMEOUT_S
    )


def ended(stack: Any, job_id: str) -> Any:
    job = stack.wait_for_jobs([job_id], TIMEOUT_S)[job_id]
    assert job is not None and job.status.terminal, job
    return job


def dead_letters(stack: Any) -> list[dict[str, Any]]:
    sqs = stack.client("sqs")
    url = stack.outputs["WebhookDeadLetterQueueUrl"]
    found = []
    while messages := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages"):
        for message in messages:
            attributes = {
                name: value["StringValue"]
                for name, value in message.get("MessageAttributes", {}).items()
            }
            found.append({"event": json.loads(message["Body"]), "attributes": attributes})
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return found


def requests_of(receiver: Receiver, job_id: str) -> list[Request]:
    """Every request the receiver got for the job's events, accepted or not."""
    return [r for r in receiver.requests if json.loads(r.body)["detail"]["job_id"] == job_id]


def of_job(receiver: Receiver, job_id: str) -> list[dict[str, Any]]:
    return [d for d in receiver.deliveries() if d["detail"]["job_id"] == job_id]


def test_each_terminal_change_is_delivered_once_with_the_connection_authorization(
    stack: Any, receiver: Receiver
) -> None:
    bucket = stack.outputs["IngestBucketName"]
    kept = upload(stack, "webhooks/kept.md", b"# Kept\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    broken = upload(stack, "webhooks/broken.docx", b"not a zip archive")
    assert ended(stack, kept).status is JobStatus.SUCCEEDED
    assert ended(stack, broken).status is JobStatus.DEAD_LETTERED
    stack.client("s3").delete_object(Bucket=bucket, Key="webhooks/kept.md")
    assert wait_until(lambda: job_of(stack, kept).status is JobStatus.DELETED, TIMEOUT_S)
    settled(stack)

    kept_events = [CompletionEvent.model_validate(d) for d in of_job(receiver, kept)]
    assert [e.detail.status for e in kept_events] == [
        TerminalStatus.SUCCEEDED,
        TerminalStatus.DELETED,
    ]
    succeeded = kept_events[0].detail
    assert succeeded.outputs is not None and succeeded.outputs.markdown_key is not None
    assert succeeded.counts is not None and succeeded.counts.tables == 1
    [dead] = [CompletionEvent.model_validate(d) for d in of_job(receiver, broken)]
    assert dead.detail.failure is not None and dead.detail.failure.kind == "corrupt_input"
    # Exactly one delivery per terminal change, each with the authorization and as JSON.
    changes = Counter(d["detail"]["event_id"] for d in receiver.deliveries())
    assert set(changes.values()) == {1}
    accepted = [r for r in receiver.requests if r.status == 200]
    assert {r.headers[HEADER] for r in accepted} == {SECRET}
    assert {r.headers["content-type"] for r in accepted} == {"application/json; charset=utf-8"}
    assert dead_letters(stack) == []


def test_a_receiver_down_for_a_while_gets_the_events_once_it_is_back(
    stack: Any, receiver: Receiver
) -> None:
    receiver.fail_next(RETRIES, status=503)  # every retry but the last is refused
    job_id = upload(stack, "webhooks/while-down.md", b"# Down\n\nThe receiver was down.\n")
    assert ended(stack, job_id).status is JobStatus.SUCCEEDED
    settled(stack)
    refused = [
        r
        for r in receiver.requests
        if r.status == 503 and json.loads(r.body)["detail"]["job_id"] == job_id
    ]
    assert len(refused) == RETRIES
    [event] = of_job(receiver, job_id)
    assert event["detail"]["status"] == "SUCCEEDED"
    assert json.loads(refused[0].body) == event  # the same event, retried
    assert dead_letters(stack) == []


def test_a_refusal_eventbridge_does_not_retry_goes_to_the_dead_letter_queue_at_once(
    stack: Any, receiver: Receiver
) -> None:
    receiver.refuse_with(400)
    job_id = upload(stack, "webhooks/refused.md", b"# Refused\n")
    assert ended(stack, job_id).status is JobStatus.SUCCEEDED
    settled(stack)
    tried = requests_of(receiver, job_id)
    assert [r.status for r in tried] == [400]
    [letter] = dead_letters(stack)
    assert letter["event"]["detail"]["job_id"] == job_id
    attributes = letter["attributes"]
    assert (attributes["ERROR_CODE"], attributes["RETRY_ATTEMPTS"]) == ("400", "0")
    assert attributes["TARGET_ARN"] == stack.outputs["WebhookDestinationArn"]
    assert "EXHAUSTED_RETRY_CONDITION" not in attributes


def test_retries_running_out_put_the_event_on_the_dead_letter_queue(
    stack: Any, receiver: Receiver
) -> None:
    receiver.refuse_with(503)
    job_id = upload(stack, "webhooks/never.md", b"# Never\n")
    assert ended(stack, job_id).status is JobStatus.SUCCEEDED
    settled(stack)
    tried = requests_of(receiver, job_id)
    assert [r.status for r in tried] == [503] * (1 + RETRIES)
    [letter] = dead_letters(stack)
    assert letter["attributes"]["EXHAUSTED_RETRY_CONDITION"] == "MaximumRetryAttempts"
    assert letter["attributes"]["RETRY_ATTEMPTS"] == str(RETRIES)
    receiver.refuse_with(None)
    # `richdoc events republish` sends it again; the receiver takes it then.
    from richdoc_tools.cli import main

    assert main(["events", "republish", job_id]) == 0
    settled(stack)
    assert [d["detail"]["status"] for d in of_job(receiver, job_id)] == ["SUCCEEDED"]


def test_the_secret_never_shows(stack: Any) -> None:
    events = stack.client("events")
    [connection] = events.list_connections()["Connections"]
    described = events.describe_connection(Name=connection["Name"])
    assert described["AuthParameters"]["ApiKeyAuthParameters"] == {"ApiKeyName": HEADER}
    assert SECRET not in json.dumps(described, default=str)
    cfn = stack.client("cloudformation")
    [deployed] = cfn.describe_stacks(StackName=stack.stack_name)["Stacks"]
    shown = {p["ParameterKey"]: p["ParameterValue"] for p in deployed["Parameters"]}
    assert shown["WebhookAuthSecret"] == NO_ECHO_MASK
    assert SECRET not in json.dumps(deployed, default=str)


@contextmanager
def documented_receiver(
    stack: Any, authority: Authority, directory: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, Any]]:
    """docs/consumers.md's receiver as printed, beside the page's index and handler,
    serving on 127.0.0.1 with a certificate of the stack's trusted authority; the
    stack's API destination points at it while the block runs. Its namespace."""
    certificate, key = authority.certificate_files(directory)
    for name, value in {
        "RICHDOC_WEBHOOK_KEY": SECRET,
        "RICHDOC_WEBHOOK_INBOX": str(directory / "inbox.sqlite3"),
        "RICHDOC_WEBHOOK_CERT": str(certificate),
        "RICHDOC_WEBHOOK_CERT_KEY": str(key),
        "RESULTS_BUCKET": stack.outputs["ArtifactBucketName"],
    }.items():
        monkeypatch.setenv(name, value)
    app: dict[str, Any] = {"__name__": "webhook_receiver"}
    for block in ("index", "handler", "webhook-receiver"):
        exec(documented(block), app)
    server = app["start"]("127.0.0.1", 0)
    serving = threading.Thread(target=server.serve_forever, name="documented-receiver")
    serving.start()
    events = stack.client("events")
    name = stack.outputs["WebhookDestinationArn"].split(":api-destination/")[1].split("/")[0]
    before = events.describe_api_destination(Name=name)["InvocationEndpoint"]
    url = f"https://127.0.0.1:{server.server_address[1]}/richdoc"
    events.update_api_destination(Name=name, InvocationEndpoint=url)
    try:
        yield app
    finally:
        events.update_api_destination(Name=name, InvocationEndpoint=before)
        server.shutdown()
        server.server_close()
        serving.join(timeout=10)


def test_the_documented_receiver_answers_before_the_work_and_marks_an_event_handled_after_it(
    stack: Any, authority: Authority, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The receiver docs/consumers.md prints: EventBridge's request is answered as soon as
    the event is in the inbox, while the work is still held back (a slow work never runs
    into the 5-second timeout); the event is marked handled only once its work succeeded,
    a work that failed is tried again, and a repeat is answered without being handled
    twice. Its index then equals the manifest."""
    with documented_receiver(stack, authority, tmp_path, monkeypatch) as app:
        handle, gate, failures, calls = app["handler"], Gate(), [RuntimeError("down")], []

        def held_then_failing_once(event: Any, context: Any) -> Any:
            calls.append(event["detail"]["event_id"])
            gate.wait_here()
            if failures:
                raise failures.pop()
            return handle(event, context)

        app["handler"] = held_then_failing_once
        job_id = upload(stack, "webhooks/documented.md", b"# Documented\n\nReceived.\n")
        assert ended(stack, job_id).status is JobStatus.SUCCEEDED
        settled(stack)  # EventBridge has its 200 while the work waits at the gate
        assert gate.reached()
        [(event_id, handled)] = app["inbox"]("SELECT event_id, handled FROM inbox")
        assert handled == 0 and calls == [event_id]

        gate.open()  # the work goes on, and fails once: the event stays unhandled
        assert wait_until(lambda: not failures and len(calls) == 1, TIMEOUT_S)
        assert app["inbox"]("SELECT handled FROM inbox") == [(0,)]
        # A repeat of the event (a republish): answered, not stored twice; the pass it
        # wakes tries the failed work again, which succeeds.
        from richdoc_tools.cli import main

        assert main(["events", "republish", job_id]) == 0
        settled(stack)
        assert wait_until(lambda: app["inbox"]("SELECT handled FROM inbox") == [(1,)], TIMEOUT_S)
        assert calls == [event_id, event_id]
        index = app["index"].documents
        [document] = index
        assert index[document][0].job_id == job_id
        assert dead_letters(stack) == []
