"""The console's application against AWS-shaped resources in moto, for tests of its pages:
the stack's table, buckets and queues, job records and artifacts written by hand, and a
test client that speaks to it as a browser on 127.0.0.1 would (Host, cookie, CSRF)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3
from flask import Flask
from flask.testing import FlaskClient
from richdoc_tools.console.app import create_app
from richdoc_tools.console.settings import ConsoleSettings
from richdoc_tools.ops.operator import Operator, StackResources
from werkzeug.test import TestResponse

from richdoc.admission.settings import AdmissionSettings
from richdoc.contracts import JobOutputs, SourceObject
from richdoc.jobs import Attempt, Job, JobStatus, attempt_key, job_key
from tests.support.paths import DATA, DEFINITION_PATH

PORT = 8023
BASE_URL = f"http://127.0.0.1:{PORT}"
HISTORIES = DATA / "console"


@dataclass
class Console:
    """The application, its client (signed in) and the stack behind it."""

    app: Flask
    client: FlaskClient
    settings: ConsoleSettings
    operator: Operator

    @property
    def resources(self) -> StackResources:
        return self.operator.resources

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        return self.client.get(path, base_url=BASE_URL, **kwargs)

    def post(
        self,
        path: str,
        *,
        csrf: bool = True,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> TestResponse:
        sent = dict(headers or {})
        if csrf:
            sent.setdefault("X-CSRF-Token", self.settings.csrf_token)
        return self.client.post(path, base_url=BASE_URL, headers=sent, **kwargs)

    def json(self, path: str) -> Any:
        response = self.get(path)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "application/json"
        return response.get_json()

    # ---- records and objects, written as the pipeline would --------------------------------

    def put_job(self, job: Job) -> Job:
        self.operator.jobs.table.put_item(Item={**job_key(job.job_id), **job.to_item()})
        return job

    def put_attempt(self, attempt: Attempt) -> None:
        item = {**attempt_key(attempt.job_id, attempt.run, attempt.seq), **attempt.to_item()}
        self.operator.jobs.table.put_item(Item=item)

    def put_source(self, key: str, body: bytes) -> SourceObject:
        put = self.operator.s3.put_object(Bucket=self.resources.ingest_bucket, Key=key, Body=body)
        return SourceObject(
            bucket=self.resources.ingest_bucket,
            key=key,
            version_id=put.get("VersionId"),
            size=len(body),
        )

    def put_artifact(self, key: str, body: bytes) -> None:
        self.operator.s3.put_object(Bucket=self.resources.artifact_bucket, Key=key, Body=body)


def job(
    n: int,
    source: SourceObject,
    *,
    status: JobStatus = JobStatus.SUCCEEDED,
    updated_at: str | None = None,
    **fields: Any,
) -> Job:
    stamp = updated_at or f"2026-01-01T00:00:{n:02d}.000+00:00"
    return Job(
        job_id=f"{n:032x}",
        status=status,
        run=fields.pop("run", 1),
        source=source,
        created_at=stamp,
        updated_at=stamp,
        **fields,
    )


def outputs_for(job_id: str) -> JobOutputs:
    return JobOutputs(
        docling_key=f"docling/{job_id}/contract.json",
        projection_key=f"jobs/{job_id}/run-001/projection.json",
        detection_key=f"jobs/{job_id}/run-001/detection.json",
    )


def history(name: str) -> list[dict[str, Any]]:
    """A recorded GetExecutionHistory (tests/data/console/history-<name>.json)."""
    events: list[dict[str, Any]] = json.loads((HISTORIES / f"history-{name}.json").read_text())
    return events


def make_console(template: Any) -> Console:
    """The stack's resources in the running moto mock, and a signed-in console over them."""
    from tests.support.aws import provision_one

    session = boto3.Session(region_name="us-east-1")
    table = provision_one(template, "JobsTable")
    s3 = session.client("s3")
    s3.create_bucket(Bucket="ingest")
    s3.put_bucket_versioning(Bucket="ingest", VersioningConfiguration={"Status": "Enabled"})
    s3.create_bucket(Bucket="artifacts")
    sqs = session.client("sqs")
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    ingest = sqs.create_queue(QueueName="ingest")["QueueUrl"]
    arn = "arn:aws:sqs:us-east-1:123456789012:"
    state_machine = session.client("stepfunctions").create_state_machine(
        name="pipeline",
        definition=DEFINITION_PATH.read_text(),
        roleArn="arn:aws:iam::123456789012:role/pipeline",
    )["stateMachineArn"]
    resources = StackResources(
        stack_name="richdoc",
        ingest_bucket="ingest",
        artifact_bucket="artifacts",
        ingest_queue_url=ingest,
        ingest_queue_arn=arn + "ingest",
        dead_letter_queue_url=dlq,
        dead_letter_queue_arn=arn + "dlq",
        jobs_table=table,
        state_machine_arn=state_machine,
        admission=AdmissionSettings.of(2),
    )
    operator = Operator(session, resources)
    settings = ConsoleSettings(operator=operator, port=PORT, stack_label="stack 'richdoc'")
    app = create_app(settings)
    client = app.test_client()
    entered = client.get(f"/?token={settings.token}", base_url=BASE_URL)
    assert entered.status_code == 303
    return Console(app=app, client=client, settings=settings, operator=operator)
