"""What a consumer copies from docs/consumers.md and README.md, run as printed against
`richdoc local serve` with the AWS CLI (awscli, its own parameter parsing; `make pytest`
installs it), in a shell pointed at the server as the page says: the subscription hears
every upload, a failed one too; the handler beside it, in a process that knows only
RESULTS_BUCKET and AWS_ENDPOINT_URL, keeps an index equal to the manifests; the tenant
variant hears only its tenant's uploads; the replay starts; the metadata and tags of the
uploads travel with their jobs; the README's upload and subscription work; and the AWS CLI
commands local serve's banner prints run.

Waits are on observable conditions: jobs' records, and a witness subscription of every
event (whatever it has received, a filtered queue has been offered too)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from richdoc.jobs import job_id_for
from richdoc_client.events import CompletionEvent
from richdoc_client.reader import ResultsReader
from tests.support.cli_process import ROOT
from tests.support.consumer_docs import README, DocumentedShell, documented, subscribe
from tests.support.local_serve import CREDENTIALS, Served, serving
from tests.support.paths import SAMPLES

pytestmark = [pytest.mark.e2e, pytest.mark.docling, pytest.mark.xdist_group("documented")]

TIMEOUT_S = 300
EVERYTHING = '{"source": ["richdoc"]}'

# The page's handler and its index, fed events on stdin; prints the index.
HANDLER = """
import json, sys
app = {"__name__": "consumer_handler"}
for source in sys.argv[1:]:
    exec(open(source).read(), app)
for event in json.load(sys.stdin):
    app["handler"](event, None)
print(json.dumps({
    document: [result.model_dump(mode="json"), sorted(chunks)]
    for document, (result, chunks) in app["index"].documents.items()
}))
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("serve") / "functions.log") as running:
        yield running


@pytest.fixture
def shell(served: Served, tmp_path: Path) -> DocumentedShell:
    """A reader's terminal in a folder holding the files the pages upload."""
    shutil.copy(SAMPLES / "field-report.pdf", tmp_path / "lease.pdf")
    shutil.copy(SAMPLES / "contract.docx", tmp_path / "contract.docx")
    return DocumentedShell(tmp_path, served.port)


class Inbox:
    """A queue's completion events, by job id, received as they arrive."""

    def __init__(self, served: Served, url: str) -> None:
        self.served, self.url = served, url
        self.events: dict[str, list[dict[str, Any]]] = {}

    def drain(self) -> None:
        sqs = self.served.client("sqs")
        while batch := sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10).get(
            "Messages"
        ):
            for message in batch:
                event = json.loads(message["Body"])
                job_id = CompletionEvent.model_validate(event).detail.job_id
                self.events.setdefault(job_id, []).append(event)
                sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])

    def wait_for(self, job_ids: list[str]) -> list[dict[str, Any]]:
        from richdoc_tools.local.runtime.events import wait_until

        def arrived() -> bool:
            self.drain()
            return all(job_id in self.events for job_id in job_ids)

        assert wait_until(arrived, timeout_s=TIMEOUT_S, interval_s=0.5), (job_ids, self.events)
        return [event for job_id in job_ids for event in self.events[job_id]]


def upload(served: Served, key: str, body: bytes, **metadata: str) -> str:
    bucket = served.outputs["IngestBucketName"]
    put = served.client("s3").put_object(Bucket=bucket, Key=key, Body=body, Metadata=metadata)
    return job_id_for(bucket, key, put["VersionId"])


def handled(served: Served, events: list[dict[str, Any]], folder: Path) -> dict[str, Any]:
    """The documented handler's index after these events, run as a consumer runs it: its
    own process, told the results bucket and the endpoint (AWS_ENDPOINT_URL) only."""
    sources = []
    for name in ("index", "handler"):
        (folder / f"{name}.py").write_text(documented(name))
        sources.append(str(folder / f"{name}.py"))
    done = subprocess.run(
        [sys.executable, "-c", HANDLER, *sources],
        input=json.dumps(events),
        env={
            **CREDENTIALS,
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT / "layers" / "docling"),  # richdoc-client, as installed
            "HOME": str(folder),
            "RESULTS_BUCKET": served.outputs["ArtifactBucketName"],
            "AWS_ENDPOINT_URL": served.endpoint,
        },
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    index: dict[str, Any] = json.loads(done.stdout)
    return index


def manifests_of(served: Served, events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the index must hold for these events' documents: each current result's
    reference and chunk ids."""
    reader = ResultsReader.s3(served.outputs["ArtifactBucketName"], client=served.client("s3"))
    expected = {}
    for document_id in {CompletionEvent.model_validate(e).detail.document_id for e in events}:
        manifest = reader.current(document_id)
        if manifest is not None and manifest.result_ref is not None:
            chunks = sorted(chunk.id for chunk in reader.chunks(manifest))
            expected[document_id] = [manifest.result_ref.model_dump(mode="json"), chunks]
    return expected


def test_the_consumer_page_runs_as_printed_and_its_subscription_hears_every_upload(
    served: Served, shell: DocumentedShell, tmp_path: Path
) -> None:
    witness = Inbox(
        served,
        subscribe(
            served.client("sqs"),
            served.client("events"),
            served.outputs["EventBusName"],
            "consumer-witness",
            EVERYTHING,
        ),
    )
    shell.run(documented("subscribe"))
    inbox = Inbox(served, shell.variable("QUEUE_URL"))

    # Every event of the stack: an upload without a tenant, a failed one.
    plain = upload(served, "documented/plain.md", b"# Plain\n\nNo tenant named here.\n")
    broken = upload(served, "documented/broken.docx", b"not a Word document")
    events = inbox.wait_for([plain, broken])
    statuses = {CompletionEvent.model_validate(e).detail.status for e in events}
    assert statuses == {"SUCCEEDED", "DEAD_LETTERED"}
    # The page's handler keeps its index equal to the manifests from those events alone.
    index = handled(served, events, tmp_path)
    assert index == manifests_of(served, events) and len(index) == 1

    # The variant that filters by tenant hears only that tenant's uploads.
    shell.run(documented("subscribe-tenant"))
    tenant = {"richdoc-tenant": "acme"}
    acme = upload(served, "documented/acme.md", b"# Acme\n\nTenant acme.\n", **tenant)
    untagged = upload(served, "documented/other.md", b"# Other\n\nNo tenant.\n")
    witness.wait_for([acme, untagged])  # both were published
    assert [CompletionEvent.model_validate(e).detail.job_id for e in inbox.wait_for([acme])] == [
        acme
    ]
    inbox.drain()
    assert untagged not in inbox.events

    shell.run(documented("replay"))
    replay = served.client("events").describe_replay(ReplayName="consumer-my-app-catch-up")
    assert replay["ReplayArn"].endswith("replay/consumer-my-app-catch-up")
    assert replay["State"] in ("STARTING", "RUNNING", "COMPLETED")

    # The uploads with metadata and tags: both travel with their jobs.
    shell.run(documented("metadata"))
    bucket = served.outputs["IngestBucketName"]
    versions = served.client("s3").list_object_versions(Bucket=bucket, Prefix="contracts/lease.pdf")
    jobs = served.wait_for(
        [job_id_for(bucket, v["Key"], v["VersionId"]) for v in versions["Versions"]]
    )
    assert sorted((job.metadata for job in jobs.values()), key=json.dumps) == [
        {"richdoc-team": "legal"},
        {"richdoc-tenant": "acme"},
    ]


def test_the_readmes_upload_and_subscription_run_as_printed(
    served: Served, shell: DocumentedShell
) -> None:
    shell.run(documented("subscribe", README))
    inbox = Inbox(served, shell.variable("QUEUE_URL"))
    shell.run(documented("upload", README))
    bucket = served.outputs["IngestBucketName"]
    [version] = served.client("s3").list_object_versions(Bucket=bucket, Prefix="contract.docx")[
        "Versions"
    ]
    job_id = job_id_for(bucket, "contract.docx", version["VersionId"])
    [event] = inbox.wait_for([job_id])
    detail = CompletionEvent.model_validate(event).detail
    assert (detail.status, detail.metadata) == ("SUCCEEDED", {"richdoc-clarify": "true"})
    assert detail.counts is not None and detail.counts.ambiguities == 1  # clarified


def test_the_aws_cli_commands_local_serve_prints_run_as_printed(
    served: Served, shell: DocumentedShell
) -> None:
    commands = [
        line.strip().replace("FILE", "lease.pdf")
        for line in served.banner.splitlines()
        if line.strip().startswith("aws ")
    ]
    assert len(commands) == 3  # two uploads and a subscription
    for command in commands:
        shell.run(command)
    rule = served.client("events").describe_rule(
        Name="consumer-mine", EventBusName=served.outputs["EventBusName"]
    )
    assert json.loads(rule["EventPattern"]) == {"source": ["richdoc"]}
