"""`richdoc local serve` from another process, driven with boto3 only: put an object, see the
job succeed, read its outputs; a consumer's own rule on the bus receives its completion
event and the reader reads the run; an operator's raw calls (redrive-execution,
get-execution-history by pages, start-message-move-task) are answered as AWS answers them
or refused with what to do instead; Ctrl-C stops the server cleanly."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from richdoc.jobs import JobStatus, job_id_for, job_key
from richdoc_client.events import CompletionEvent
from richdoc_client.reader import ResultsReader
from tests.support.consumer_docs import subscribe

pytestmark = [pytest.mark.e2e, pytest.mark.docling]

ROOT = Path(__file__).resolve().parents[2]


def _status(sfn: Any, execution_arn: str) -> str | None:
    try:
        status: str = sfn.describe_execution(executionArn=execution_arn)["status"]
    except sfn.exceptions.ExecutionDoesNotExist:
        return None
    return status


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_local_serve_runs_the_pipeline_for_a_boto3_client(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "richdoc_tools",
            "local",
            "serve",
            "--port",
            str(port),
            "--log",
            str(tmp_path / "functions.log"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 120
        for line in server.stdout:
            if "listening on" in line:
                break
            assert time.monotonic() < deadline, "server did not start"
        session = boto3.Session(
            aws_access_key_id="any", aws_secret_access_key="any", region_name="us-east-1"
        )
        endpoint = f"http://127.0.0.1:{port}"
        cfn = session.client("cloudformation", endpoint_url=endpoint)
        outputs = {
            o["OutputKey"]: o["OutputValue"]
            for o in cfn.describe_stacks(StackName="richdoc")["Stacks"][0]["Outputs"]
        }
        s3 = session.client("s3", endpoint_url=endpoint)
        # A consumer subscribes a queue of its own to the completion events' bus.
        sqs = session.client("sqs", endpoint_url=endpoint)
        events = session.client("events", endpoint_url=endpoint)
        inbox = subscribe(
            sqs,
            events,
            outputs["EventBusName"],
            "consumer-inbox",
            '{"source": ["richdoc"], "detail": {"status": ["SUCCEEDED"]}}',
        )
        put = s3.put_object(
            Bucket=outputs["IngestBucketName"],
            Key="inbox/memo.md",
            Body=b"# Memo\n\nThe new rota takes effect the following month.\n",
            Metadata={"richdoc-clarify": "true"},
        )
        job_id = job_id_for(outputs["IngestBucketName"], "inbox/memo.md", put["VersionId"])

        table = session.resource("dynamodb", endpoint_url=endpoint).Table(outputs["JobsTableName"])
        job: dict = {}
        deadline = time.monotonic() + 180
        while job.get("job_status") not in ("SUCCEEDED", "DEAD_LETTERED"):
            assert time.monotonic() < deadline, f"job not finished: {job}"
            time.sleep(0.5)
            job = table.get_item(Key=job_key(job_id)).get("Item", {})
        assert job["job_status"] == "SUCCEEDED", job.get("failure")

        projection = json.loads(
            s3.get_object(
                Bucket=outputs["ArtifactBucketName"], Key=job["outputs"]["projection_key"]
            )["Body"].read()
        )
        assert "following month" in projection["canonical_text"]
        detection = json.loads(
            s3.get_object(
                Bucket=outputs["ArtifactBucketName"], Key=job["outputs"]["detection_key"]
            )["Body"].read()
        )
        [ambiguity] = detection["ambiguities"]
        assert ambiguity["kind"] == "relative_date"

        # Its event arrives (after the manifest it announces), and the reader reads the run.
        received: list[dict[str, Any]] = []
        deadline = time.monotonic() + 60
        while not received:
            assert time.monotonic() < deadline, "no completion event"
            answer = sqs.receive_message(QueueUrl=inbox, WaitTimeSeconds=1)
            received += [json.loads(m["Body"]) for m in answer.get("Messages", [])]
        [event] = [CompletionEvent.model_validate(body) for body in received]
        assert (event.detail.job_id, event.detail.source.key) == (job_id, "inbox/memo.md")
        reader = ResultsReader.s3(outputs["ArtifactBucketName"], client=s3)
        manifest = reader.manifest_of(outputs["IngestBucketName"], "inbox/memo.md")
        assert manifest.result is not None and manifest.result.outputs == event.detail.outputs
        assert any("following month" in chunk.text for chunk in reader.chunks(manifest))

        sfn = session.client("stepfunctions", endpoint_url=endpoint)
        [execution] = sfn.list_executions(stateMachineArn=outputs["StateMachineArn"])["executions"]
        assert (execution["name"], execution["status"]) == (f"{job_id}-r1", "SUCCEEDED")

        # The console's Redrive (`aws stepfunctions redrive-execution`) is answered as AWS
        # answers an execution it will not redrive: HTTP 400 and AWS's JSON error body.
        answers: list[Any] = []
        sfn.meta.events.register(
            "after-call.sfn.RedriveExecution",
            lambda http_response, **_: answers.append(http_response),
        )
        with pytest.raises(ClientError) as succeeded:
            sfn.redrive_execution(executionArn=execution["executionArn"])
        assert succeeded.value.response["Error"] == {
            "Code": "ExecutionNotRedrivable",
            "Message": "Execution is SUCCEEDED and cannot be redriven.",
        }
        put = s3.put_object(
            Bucket=outputs["IngestBucketName"], Key="inbox/broken.docx", Body=b"not a zip"
        )
        broken = job_id_for(outputs["IngestBucketName"], "inbox/broken.docx", put["VersionId"])
        failed_arn = execution["executionArn"].replace(job_id, broken)
        deadline = time.monotonic() + 180
        while _status(sfn, failed_arn) in (None, "RUNNING"):
            assert time.monotonic() < deadline, "the broken upload's execution did not end"
            time.sleep(0.5)
        with pytest.raises(ClientError) as failed:
            sfn.redrive_execution(executionArn=failed_arn)
        assert failed.value.response["Error"]["Code"] == "ExecutionNotRedrivable"
        assert failed.value.response["Error"]["Message"].endswith(f"richdoc jobs redrive {broken}")
        assert [a.status_code for a in answers] == [400, 400]
        body = json.loads(answers[-1].content)
        assert (body["__type"], body["message"]) == (
            "ExecutionNotRedrivable",
            failed.value.response["Error"]["Message"],
        )

        # The operator's raw calls: the history newest first, a page at a time ...
        newest = sfn.get_execution_history(
            executionArn=execution["executionArn"], reverseOrder=True, maxResults=1
        )
        assert [e["type"] for e in newest["events"]] == ["ExecutionSucceeded"]
        assert newest.get("nextToken")
        # ... and a message move task, which moves the broken upload's dead letter back.
        dlq = outputs["DeadLetterQueueArn"]
        sqs.start_message_move_task(SourceArn=dlq, DestinationArn=outputs["IngestQueueArn"])
        deadline = time.monotonic() + 60
        while (task := sqs.list_message_move_tasks(SourceArn=dlq)["Results"][0])[
            "Status"
        ] == "RUNNING":
            assert time.monotonic() < deadline, "the move task did not end"
            time.sleep(0.2)
        assert task["Status"] == "COMPLETED" and task["ApproximateNumberOfMessagesMoved"] >= 1
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0
    assert "stopped" in output


def test_local_serve_with_one_slot_runs_thirty_uploads_one_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--parameter-overrides MaxRunningJobs=1``: thirty uploads wait QUEUED with their
    places in the backlog, never more than one runs at a time (the jobs' admitted and
    released times say so, not a sampling), and all of them succeed."""
    from richdoc_tools.cli import main

    from richdoc.jobs import Job
    from tests.support.admission import most_at_once

    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "richdoc_tools",
            "local",
            "serve",
            "--port",
            str(port),
            "--log",
            str(tmp_path / "functions.log"),
            "--parameter-overrides",
            "MaxRunningJobs=1",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 120
        for line in server.stdout:
            if "listening on" in line:
                break
            assert time.monotonic() < deadline, "server did not start"
        session = boto3.Session(
            aws_access_key_id="any", aws_secret_access_key="any", region_name="us-east-1"
        )
        endpoint = f"http://127.0.0.1:{port}"
        cfn = session.client("cloudformation", endpoint_url=endpoint)
        outputs = {
            o["OutputKey"]: o["OutputValue"]
            for o in cfn.describe_stacks(StackName="richdoc")["Stacks"][0]["Outputs"]
        }
        assert outputs["MaxRunningJobs"] == "1"
        s3 = session.client("s3", endpoint_url=endpoint)
        bucket = outputs["IngestBucketName"]
        job_ids = []
        for n in range(30):
            put = s3.put_object(
                Bucket=bucket, Key=f"thirty/{n:02d}.md", Body=f"# Note {n}\n\nText.\n".encode()
            )
            job_ids.append(job_id_for(bucket, f"thirty/{n:02d}.md", put["VersionId"]))
        table = session.resource("dynamodb", endpoint_url=endpoint).Table(outputs["JobsTableName"])

        def records() -> list[Job]:
            items = [
                table.get_item(Key=job_key(j), ConsistentRead=True).get("Item") for j in job_ids
            ]
            return [Job.from_item(item) for item in items if item]

        # The others wait, and `richdoc jobs list` shows their places.
        deadline = time.monotonic() + 180
        while sum(job.waiting for job in records()) < 20:
            assert time.monotonic() < deadline, "the uploads did not queue"
            time.sleep(0.5)
        capsys.readouterr()
        assert (
            main(["jobs", "list", "--status", "QUEUED", "--endpoint-url", endpoint, "--json"]) == 0
        )
        listed = json.loads(capsys.readouterr().out)
        positions = sorted(
            j["admission"]["position"] for j in listed if j["admission"]["position"] is not None
        )
        assert positions == list(range(1, len(positions) + 1)) and len(positions) >= 20

        deadline = time.monotonic() + 1200
        while not all(job.status.terminal and job.released_at for job in records()):
            assert time.monotonic() < deadline, "the thirty jobs did not finish"
            time.sleep(1)
        finished = records()
        assert {job.status for job in finished} == {JobStatus.SUCCEEDED}
        assert most_at_once(finished) == 1
        started = sorted(finished, key=lambda job: job.admitted_at or "")
        assert [job.job_id for job in started] == job_ids  # one tenant: upload order
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0
    assert "stopped" in output
