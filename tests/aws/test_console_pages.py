"""Every page of the console and its JSON twin, through Flask's test client, over AWS-shaped
resources in moto with job records, artifacts and messages written as the pipeline would
write them (execution histories are recorded ones: tests/data/console)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from richdoc_tools.ops import executions as step_functions
from richdoc_tools.ops.jobs import show_job

from richdoc.deadletter import failure_attributes
from richdoc.detection import (
    Ambiguity,
    AmbiguityKind,
    Candidate,
    Detection,
    DetectionStats,
    detect,
)
from richdoc.graph import Projection
from richdoc.jobs import (
    Attempt,
    DeadLetterMark,
    JobPhase,
    JobStatus,
    job_id_for,
    job_key,
)
from richdoc.taxonomy import Failure, FailureKind
from tests.support.console import (
    HISTORIES,
    Console,
    history,
    job,
    make_console,
    outputs_for,
)
from tests.support.detection_layout import layout
from tests.support.outline_projection import Heading, Paragraph, outline
from tests.support.paths import DEFINITION_PATH, SAMPLES

EXECUTION_ARN = "arn:aws:states:us-east-1:123456789012:execution:pipeline:{job}-r{run}"


@pytest.fixture
def console(aws: None, template: Any) -> Console:
    return make_console(template)


@pytest.fixture
def executions(console: Console, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Executions answered from recorded histories: execution ARN -> history name."""
    recorded: dict[str, str] = {}
    definition = json.loads(DEFINITION_PATH.read_text())

    def describe(arn: str) -> dict[str, Any]:
        events = history(recorded[arn])
        last = events[-1]["type"]
        status = {"ExecutionSucceeded": "SUCCEEDED", "ExecutionFailed": "FAILED"}.get(
            last, "RUNNING"
        )
        return {"status": status, "startDate": datetime(2026, 1, 1, tzinfo=UTC)}

    monkeypatch.setattr(step_functions, "describe", lambda operator, arn: describe(arn))
    monkeypatch.setattr(step_functions, "history", lambda operator, arn: history(recorded[arn]))
    monkeypatch.setattr(step_functions, "definition", lambda operator, arn=None: definition)
    return recorded


def _succeeded_pdf(console: Console, executions: dict[str, str], n: int = 1) -> str:
    """The field report PDF, succeeded, with its artifacts and attempts."""
    source = console.put_source("field-report.pdf", (SAMPLES / "field-report.pdf").read_bytes())
    job_id = f"{n:032x}"
    outputs = outputs_for(job_id)
    arn = EXECUTION_ARN.format(job=job_id, run=1)
    executions[arn] = "succeeded"
    console.put_job(job(n, source, outputs=outputs, execution_arn=arn, shards=1))
    console.put_artifact(
        outputs.projection_key, (HISTORIES / "field-report.projection.json").read_bytes()
    )
    detection = Detection(
        ambiguities=[
            Ambiguity(
                kind=AmbiguityKind.UNDATED,
                detectorConfidence=0.7,
                appliedCandidateConfidence=0.5,
                candidates=[Candidate(label="12 June 2025 (prepared)", spanRef=1)],
            )
        ],
        stats=DetectionStats(ambiguities=1, ambiguities_suppressed=0),
    )
    console.put_artifact(outputs.detection_key, detection.to_json_bytes())
    console.put_artifact(outputs.docling_key, b'{"schema_name": "DoclingDocument"}')
    for seq, (stage, tier) in enumerate(
        [("plan", None), ("parse", 1), ("project", None), ("detect", None)], start=1
    ):
        console.put_attempt(
            Attempt(
                job_id=job_id,
                run=1,
                seq=seq,
                stage=stage,  # type: ignore[arg-type]
                attempt=1,
                outcome="ok",
                tier=tier,
                memory_mb=3008,
                started_at=f"2026-01-01T00:00:0{seq}.000+00:00",
                duration_ms=100 * seq,
            )
        )
    return job_id


# ---- the task center --------------------------------------------------------------------------


def test_the_jobs_page_and_its_twin_list_jobs_newest_first(console: Console) -> None:
    source = console.put_source("a.md", b"# a\n")
    for n in range(1, 6):
        console.put_job(job(n, source, status=JobStatus.RUNNING if n == 5 else JobStatus.SUCCEEDED))
    page = console.get("/jobs")
    assert page.status_code == 200 and page.mimetype == "text/html"
    body = page.get_data(as_text=True)
    assert 'id="drop-zone"' in body and f"{5:032x}" in body
    for twin in ("/jobs.json", "/jobs?format=json"):
        data = console.json(twin)
        assert [j["job_id"] for j in data["jobs"]] == [f"{n:032x}" for n in (5, 4, 3, 2, 1)]
        assert data["active"] == 1 and data["live"] is True
        assert (
            data["jobs"][0]["progress_text"] == "starting"
            and data["jobs"][0]["url"] == f"/jobs/{5:032x}"
        )
    assert console.get("/").headers["Location"] == "/jobs"


def test_the_jobs_list_pages_with_an_opaque_cursor_and_keeps_its_filters(
    console: Console,
) -> None:
    console.settings.__dict__["page_size"] = 2  # frozen for the application, not for tests
    source = console.put_source("a.md", b"# a\n")
    failure = Failure(FailureKind.CORRUPT_INPUT, "bad", error="CorruptInput")
    for n in range(1, 6):
        console.put_job(job(n, source, status=JobStatus.DEAD_LETTERED, failure=failure))
    console.put_job(job(6, source))
    seen, url = [], "/jobs.json?status=DEAD_LETTERED&kind=corrupt_input"
    while url:
        data = console.json(url)
        seen += [j["job_id"] for j in data["jobs"]]
        assert data["filters"]["status"] == "DEAD_LETTERED"
        url = data["next_url"] and data["next_url"].replace("/jobs?", "/jobs.json?")
    assert seen == [f"{n:032x}" for n in (5, 4, 3, 2, 1)]
    assert console.get("/jobs?after=garbage").status_code == 400
    assert console.get("/jobs?status=LOST").status_code == 400
    assert console.get("/jobs?tier=two").status_code == 400
    assert console.get("/jobs?since=yesterday").status_code == 400
    assert console.json("/jobs.json?since=2026-01-01T00:00:04")["jobs"][0]["job_id"] == f"{6:032x}"


def test_failures_since_the_last_look(console: Console) -> None:
    source = console.put_source("a.md", b"# a\n")
    failure = Failure(FailureKind.TRANSIENT, "throttled")
    console.put_job(job(1, source, status=JobStatus.DEAD_LETTERED, failure=failure))
    assert console.json("/jobs.json")["failures_since_last_look"] == 1
    looked = console.get("/jobs?status=DEAD_LETTERED")
    cookie = looked.headers["Set-Cookie"]
    assert "richdoc_console_last_look=" in cookie and "HttpOnly" in cookie
    assert console.json("/jobs.json")["failures_since_last_look"] == 0
    console.put_job(
        job(
            2,
            source,
            status=JobStatus.DEAD_LETTERED,
            failure=failure,
            updated_at="2999-01-01T00:00:00.000+00:00",
        )
    )
    assert console.json("/jobs.json")["failures_since_last_look"] == 1


def test_the_drop_zone_uploads_each_file_under_its_name_as_given(console: Console) -> None:
    name = "<img src=x onerror=alert(1)> \u202enotes.md"
    response = console.post(
        "/uploads",
        data={
            "files": [(io.BytesIO(b"# hello\n"), name), (io.BytesIO(b"# two\n"), "two.md")],
            "clarify": "on",
        },
        content_type="multipart/form-data",
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    uploads = response.get_json()["uploads"]
    assert [u["key"] for u in uploads] == [name, "two.md"]
    head = console.operator.s3.head_object(Bucket="ingest", Key=name)
    assert head["Metadata"] == {"richdoc-clarify": "true"}
    assert uploads[0]["job_id"] == job_id_for("ingest", name, head["VersionId"])
    # Without a script, the form posts and comes back to the list.
    plain = console.post(
        "/uploads",
        data={"files": [(io.BytesIO(b"x"), "three.md")], "csrf_token": console.settings.csrf_token},
        content_type="multipart/form-data",
        csrf=False,
    )
    assert plain.status_code == 303 and plain.headers["Location"] == "/jobs"
    assert console.post("/uploads", data={}, content_type="multipart/form-data").status_code == 400


# ---- one job ------------------------------------------------------------------------------------


def test_the_job_page_colours_the_graph_from_the_history(
    console: Console, executions: dict[str, str]
) -> None:
    job_id = _succeeded_pdf(console, executions)
    page = console.get(f"/jobs/{job_id}").get_data(as_text=True)
    assert 'data-state="RecordSuccess" data-status="succeeded"' in page
    assert 'data-state="ParseShards/ParseShardTier1" data-status="not-run"' in page
    assert 'class="edge edge-next taken"' in page
    data = console.json(f"/jobs/{job_id}.json")
    assert data["job"]["status"] == "SUCCEEDED" and data["execution"]["status"] == "SUCCEEDED"
    assert data["states"]["Detect"]["status"] == "succeeded"
    assert json.loads(data["states"]["Plan"]["input"])["job_id"]
    assert [a["stage"] for a in data["attempts"]] == ["plan", "parse", "project", "detect"]
    assert data["attempts"][1]["tier"] == 1 and data["attempts"][1]["memory_mb"] == 3008
    # The job as `richdoc jobs show --json` prints it, with what the page adds.
    record = show_job(console.operator, job_id)
    assert record is not None
    shown = record.model_dump(mode="json")
    assert {name: data["job"][name] for name in shown if name != "attempts"} == {
        name: value for name, value in shown.items() if name != "attempts"
    }
    assert set(data["job"]) - set(shown) == {"terminal", "progress_text", "url"}
    assert [{k: a[k] for k in a if k != "kind"} for a in data["attempts"]] == shown["attempts"]
    # What this run wrote (it is recorded as a run before chunks, Markdown and CSVs).
    assert [d["name"] for d in data["downloads"]] == [
        "source",
        "docling.json",
        "projection.json",
        "detection.json",
    ]
    assert data["document_url"] == f"/jobs/{job_id}/document"
    assert [(a["name"], a["available"]) for a in data["actions"]] == [
        ("cancel", False),
        ("redrive", False),
    ]
    assert "had already finished: SUCCEEDED" in data["actions"][0]["why"]
    assert "nothing to run again" in data["actions"][1]["why"]
    assert "diagram" not in data
    assert console.json(f"/jobs/{job_id[:12]}.json")["job"]["job_id"] == job_id  # a prefix


def test_a_caught_failure_and_retries_and_map_iterations_show(
    console: Console, executions: dict[str, str]
) -> None:
    source = console.put_source("broken.docx", b"not a docx")
    failure = Failure(FailureKind.CORRUPT_INPUT, "not a docx", error="CorruptInput")
    dead = f"{1:032x}"
    executions[EXECUTION_ARN.format(job=dead, run=1)] = "dead-lettered"
    console.put_job(
        job(
            1,
            source,
            status=JobStatus.DEAD_LETTERED,
            failure=failure,
            execution_arn=EXECUTION_ARN.format(job=dead, run=1),
        )
    )
    states = console.json(f"/jobs/{dead}.json")["states"]
    assert states["ParseTier1"]["status"] == "caught"
    assert states["ParseTier1"]["error"] == "CorruptInput"
    assert states["CorruptInput"]["status"] == "failed"
    assert states["Project"]["status"] == "not-run"

    sharded = f"{2:032x}"
    executions[EXECUTION_ARN.format(job=sharded, run=1)] = "sharded-retried"
    console.put_job(job(2, source, execution_arn=EXECUTION_ARN.format(job=sharded, run=1)))
    states = console.json(f"/jobs/{sharded}.json")["states"]
    assert states["Project"]["retries"] == 1 and states["Project"]["status"] == "succeeded"
    assert states["ParseShards/ParseShardTier1"]["iterations"] == [0, 1]
    assert states["ParseShards/ParseShardTier1"]["status"] == "caught"
    page = console.get(f"/jobs/{sharded}").get_data(as_text=True)
    assert 'data-retries-of="Project"' in page and "↻1" in page


def test_earlier_runs_and_unknown_jobs(console: Console, executions: dict[str, str]) -> None:
    source = console.put_source("a.md", b"# a\n")
    job_id = f"{1:032x}"
    executions[EXECUTION_ARN.format(job=job_id, run=1)] = "dead-lettered"
    executions[EXECUTION_ARN.format(job=job_id, run=2)] = "succeeded"
    console.put_job(job(1, source, run=2, execution_arn=EXECUTION_ARN.format(job=job_id, run=2)))
    assert console.json(f"/jobs/{job_id}.json")["execution"]["run"] == 2
    first = console.json(f"/jobs/{job_id}.json?run=1")
    assert first["execution"]["run"] == 1 and first["states"]["CorruptInput"]["status"] == "failed"
    assert console.get(f"/jobs/{job_id}?run=3").status_code == 400
    missing = console.get(f"/jobs/{'f' * 32}.json")
    assert missing.status_code == 404 and missing.get_json()["error"] == 404


def test_a_queued_job_without_an_execution_is_drawn_uncoloured(
    console: Console, executions: dict[str, str]
) -> None:
    source = console.put_source("a.md", b"# a\n")
    console.put_job(job(1, source, status=JobStatus.QUEUED))
    data = console.json(f"/jobs/{1:032x}.json")
    assert data["execution"] is None and data["job"]["progress_text"] == "queued"
    assert {s["status"] for s in data["states"].values()} == {"not-run"}


def test_artifacts_and_the_source_are_downloads(
    console: Console, executions: dict[str, str]
) -> None:
    job_id = _succeeded_pdf(console, executions)
    projection = console.get(f"/jobs/{job_id}/artifacts/projection.json")
    assert projection.status_code == 200
    assert projection.headers["Content-Disposition"].startswith("attachment;")
    assert Projection.model_validate_json(projection.get_data()).nodes
    source = console.get(f"/jobs/{job_id}/source")
    assert source.get_data() == (SAMPLES / "field-report.pdf").read_bytes()
    assert console.get(f"/jobs/{job_id}/artifacts/secrets.json").status_code == 404


def test_the_markdown_and_each_table_csv_are_downloads(
    console: Console, executions: dict[str, str]
) -> None:
    source = console.put_source("prices.md", b"# Prices\n\n| Item | Price |\n|---|---|\n")
    job_id = f"{7:032x}"
    prefix = f"jobs/{job_id}/run-001/"
    outputs = outputs_for(job_id).model_copy(
        update={"markdown_key": prefix + "document.md", "tables_prefix": prefix + "tables/"}
    )
    console.put_job(job(7, source, outputs=outputs, shards=1))
    console.put_artifact(prefix + "document.md", b"# Prices <b>\n")
    for node in (12, 5):
        console.put_artifact(f"{prefix}tables/table-{node}.csv", b"Item,Price\r\nTea,3.50\r\n")
    console.put_artifact(prefix + "tables/notes.txt", b"not a table")
    data = console.json(f"/jobs/{job_id}.json")
    assert [d["name"] for d in data["downloads"]][-3:] == [
        "document.md",
        "tables/table-5.csv",
        "tables/table-12.csv",
    ]
    markdown = console.get(f"/jobs/{job_id}/artifacts/document.md")
    assert markdown.mimetype == "text/markdown" and markdown.get_data() == b"# Prices <b>\n"
    assert markdown.headers["Content-Disposition"].startswith("attachment;")
    table = console.get(f"/jobs/{job_id}/tables/table-5.csv")
    assert table.status_code == 200 and table.mimetype == "text/csv"
    assert table.headers["Content-Disposition"].startswith("attachment;")
    assert table.get_data() == b"Item,Price\r\nTea,3.50\r\n"
    for missing in ("table-6.csv", "notes.txt", "..%2Fdocument.md"):
        assert console.get(f"/jobs/{job_id}/tables/{missing}").status_code == 404


def test_cancel_then_redrive_a_job_from_its_page(console: Console) -> None:
    source = console.put_source("<b>queued</b>.md", b"# a\n")
    job_id = f"{1:032x}"
    console.put_job(job(1, source, status=JobStatus.QUEUED, message='{"Records": []}'))
    before = console.json(f"/jobs/{job_id}.json")
    assert [(a["name"], a["available"]) for a in before["actions"]] == [
        ("cancel", True),
        ("redrive", False),
    ]
    assert "running already" in before["actions"][1]["why"]

    accept = {"Accept": "application/json"}
    cancelled = console.post(
        f"/jobs/{job_id}/cancel", data={"reason": "<script>x</script> by mistake"}, headers=accept
    )
    assert cancelled.status_code == 200, cancelled.get_data(as_text=True)
    data = cancelled.get_json()
    assert data["result"]["action"] == "cancel" and data["result"]["outcome"] == "cancelled"
    assert "had not started" in data["result"]["detail"]
    assert data["job"]["status"] == "CANCELLED" and data["twin"] == f"/jobs/{job_id}.json"
    record = console.operator.jobs.get(job_id)
    assert record is not None and record.cancel is not None
    assert record.cancel.reason == "<script>x</script> by mistake"
    assert [(a["name"], a["available"]) for a in data["actions"]] == [
        ("cancel", False),
        ("redrive", True),
    ]
    # The page shows the result, as text.
    again = console.post(f"/jobs/{job_id}/cancel", data={})
    html = again.get_data(as_text=True)
    assert 'id="action-result"' in html and 'data-outcome="already_cancelled"' in html
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<b>queued</b>" not in html

    redriven = console.post(f"/jobs/{job_id}/redrive", headers=accept).get_json()
    assert redriven["result"]["outcome"] == "sent" and "run 2" in redriven["result"]["detail"]
    [sent] = console.operator.sqs.receive_message(
        QueueUrl=console.resources.ingest_queue_url, MessageAttributeNames=["All"]
    )["Messages"]
    assert sent["MessageAttributes"]["richdoc.job_id"]["StringValue"] == job_id
    second = console.post(f"/jobs/{job_id}/redrive", headers=accept).get_json()
    assert second["result"]["outcome"] == "skipped"  # the first one is on its way
    for action in ("cancel", "redrive"):
        assert console.get(f"/jobs/{job_id}/{action}").status_code == 405  # POST only
        refused = console.post(f"/jobs/{job_id}/{action}", csrf=False, headers=accept)
        assert refused.status_code == 403


def test_a_finished_job_is_not_cancelled_and_says_how_it_ended(console: Console) -> None:
    source = console.put_source("a.md", b"# a\n")
    console.put_job(job(1, source, status=JobStatus.SUCCEEDED, ended_at="2026-01-01T00:01:00Z"))
    data = console.post(f"/jobs/{1:032x}/cancel", headers={"Accept": "application/json"}).get_json()
    assert data["result"]["outcome"] == "finished"
    assert "had already finished: SUCCEEDED" in data["result"]["detail"]
    assert data["job"]["status"] == "SUCCEEDED"
    assert console.post(f"/jobs/{'f' * 32}/cancel").status_code == 404


def test_shard_progress_and_the_phase_come_from_the_record(console: Console) -> None:
    source = console.put_source("big.pdf", b"%PDF-1.7")
    console.put_job(
        job(
            1,
            source,
            status=JobStatus.RUNNING,
            stage="parse",
            shards=4,
            phase=JobPhase.PARSING_SHARDS,
            shards_done=frozenset({"1-50", "51-100"}),
        )
    )
    table = console.operator.jobs.table  # the finished shards are only ever added
    table.update_item(
        Key=job_key(f"{1:032x}"),
        UpdateExpression="ADD shards_done :r",
        ExpressionAttributeValues={":r": {"1-50", "51-100"}},
    )
    [listed] = console.json("/jobs.json")["jobs"]
    assert listed["progress_text"] == "parsing shards: 2 of 4 done (100 pages)"
    assert listed["progress"] == {
        "phase": "parsing_shards",
        "tier": None,
        "shards": 4,
        "shards_done": 2,
        "pages_done": 100,
    }
    shown = console.json(f"/jobs/{1:032x}.json")["job"]
    assert shown["progress"] == listed["progress"]
    assert '<progress max="4" value="2"' in console.get("/jobs").get_data(as_text=True)


# ---- the document -------------------------------------------------------------------------------


def test_the_document_page_draws_the_graph_over_the_rendered_pages(
    console: Console, executions: dict[str, str]
) -> None:
    job_id = _succeeded_pdf(console, executions)
    data = console.json(f"/jobs/{job_id}/document.json")
    assert data["rendered"] is True and data["format"] == "pdf"
    pages = data["graph"]["pages"]
    assert [p["number"] for p in pages] == [1, 2]
    assert round(pages[0]["width"]) == 595 and round(pages[0]["height"]) == 842  # A4, points
    [box] = [b for b in pages[0]["boxes"] if b["node"] == 6]
    assert (box["x"], box["y"]) == (78.0, 234.102) and box["label"] == "PARAGRAPH"
    node = data["graph"]["nodes"][6]
    assert node["text"] == (
        "All 14 loading bays were inspected; two need new seals before the summer peak, "
        "and the dock levellers passed their load test without remarks."
    )
    assert node["span"]["start_byte"] == 331 and node["span"]["end_char"] == 472
    assert [n["id"] for n in data["graph"]["nodes"] if n["ambiguous"]] == [2]
    html = console.get(f"/jobs/{job_id}/document").get_data(as_text=True)
    assert 'data-node-id="6"' in html and 'class="box label-paragraph ambiguous"' in html
    image = console.get(pages[0]["image_url"])
    assert image.status_code == 200 and image.mimetype == "image/png"
    assert image.get_data().startswith(b"\x89PNG")
    assert console.get(f"/jobs/{job_id}/document/pages/3.png").status_code == 404


def test_other_formats_get_the_structure_tree(console: Console) -> None:
    source = console.put_source("memo.md", "# Mémo\n\nÜber 2024-01-01.\n".encode())
    job_id = f"{1:032x}"
    outputs = outputs_for(job_id)
    console.put_job(job(1, source, outputs=outputs))
    projection = outline(Heading(1, "Mémo"), Paragraph("Über 2024-01-01."), name="memo.md")
    console.put_artifact(outputs.projection_key, projection.to_json_bytes())
    console.put_artifact(
        outputs.detection_key,
        Detection(
            ambiguities=[], stats=DetectionStats(ambiguities=0, ambiguities_suppressed=0)
        ).to_json_bytes(),
    )
    data = console.json(f"/jobs/{job_id}/document.json")
    assert data["rendered"] is False and data["graph"]["pages"] == []
    assert data["graph"]["nodes"][2]["span"] == {
        "kind": "paragraph",
        "start_byte": 7,
        "end_byte": 24,
        "start_char": 6,
        "end_char": 22,
    }
    html = console.get(f"/jobs/{job_id}/document").get_data(as_text=True)
    assert 'class="tree"' in html and "Über 2024-01-01." in html
    assert console.get(f"/jobs/{job_id}/document/pages/1.png").status_code == 404
    console.put_job(job(2, source))
    assert console.get(f"/jobs/{2:032x}/document").status_code == 404  # no graph yet


def test_the_document_page_explains_the_ambiguity_beside_it(console: Console) -> None:
    source = console.put_source("lease.md", b"# Lease\n")
    job_id = f"{3:032x}"
    outputs = outputs_for(job_id)
    console.put_job(job(3, source, outputs=outputs))
    projection = layout(
        "LEASE AGREEMENT",
        "This Lease is made this 5th day of May, 2004 by <b>Landlord</b> and Tenant.",
        "The Term commences upon the <img src=x onerror=alert(1)> Closing.",
        "Source: ACME, 10-Q, 11/14/2019",
    )
    console.put_artifact(outputs.projection_key, projection.to_json_bytes())
    console.put_artifact(outputs.detection_key, detect(projection, clarify=True).to_json_bytes())
    data = console.json(f"/jobs/{job_id}/document.json")
    why = data["explanation"]
    assert (why["rules"], why["fired"]) == ("contracts-v2", ["relative_date"])
    assert [(row["node"], row["mention"]["role"]) for row in why["mentions"]] == [
        (2, "agreement date"),
        (4, "none"),  # the filing stamp's date: no date of the document's
    ]
    [event] = why["events"]
    assert event["node"] == 3 and "Closing" in event["event"]["clause"]
    html = console.get(f"/jobs/{job_id}/document").get_data(as_text=True)
    assert 'id="explanation"' in html and "contracts-v2" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'data-role="agreement date" data-kept="no"' in html


# ---- the dead-letter queue -----------------------------------------------------------------------


def _dead_lettered(console: Console, n: int, kind: FailureKind) -> str:
    source = console.put_source(f"file-{n}.pdf", b"%PDF-")
    failure = Failure(kind, f"reason {n}")
    attributes = failure_attributes(f"{n:032x}", 1, failure)
    sent = console.operator.sqs.send_message(
        QueueUrl=console.resources.dead_letter_queue_url,
        MessageBody='{"Records": []}',
        MessageAttributes=attributes,
    )
    message_id: str = sent["MessageId"]
    console.put_job(
        job(
            n,
            source,
            status=JobStatus.DEAD_LETTERED,
            failure=failure,
            dead_letter=DeadLetterMark(message_id=message_id, sent_by="state-machine"),
        )
    )
    return message_id


def _receive_counts(console: Console) -> dict[str, int]:
    attributes = console.operator.sqs.get_queue_attributes(
        QueueUrl=console.resources.dead_letter_queue_url, AttributeNames=["All"]
    )["Attributes"]
    return {k: int(v) for k, v in attributes.items() if k.startswith("ApproximateNumberOf")}


def test_the_dead_letter_workbench_lists_from_the_records_without_receiving(
    console: Console,
) -> None:
    ids = [_dead_lettered(console, n, FailureKind.TRANSIENT) for n in (1, 2)]
    console.operator.sqs.send_message(
        QueueUrl=console.resources.dead_letter_queue_url, MessageBody="not json"
    )
    data = console.json("/dead-letters.json")
    assert sorted(r["dead_letter"]["message_id"] for r in data["rows"]) == sorted(ids)
    assert data["depth"]["waiting"] == 3 and data["depth"]["unrecorded"] == 1
    assert _receive_counts(console)["ApproximateNumberOfMessagesNotVisible"] == 0
    html = console.get("/dead-letters").get_data(as_text=True)
    assert 'name="message_id"' in html and "Peek at every message" in html
    peeked = console.post("/dead-letters/peek", headers={"Accept": "application/json"})
    kinds = sorted(m["kind"] for m in peeked.get_json()["peeked"])
    assert kinds == ["malformed", "transient", "transient"]


def test_redrive_counts_first_then_moves_only_the_chosen(console: Console) -> None:
    first, second = (_dead_lettered(console, n, FailureKind.TRANSIENT) for n in (1, 2))
    accept = {"Accept": "application/json"}
    dry = console.post("/dead-letters/redrive", data={"message_id": [first]}, headers=accept)
    outcome = dry.get_json()["outcome"]
    assert outcome["dry_run"] is True and outcome["count"] == 1 and outcome["done"] == []
    assert console.json("/dead-letters.json")["depth"]["waiting"] == 2
    done = console.post(
        "/dead-letters/redrive", data={"message_id": [first], "dry_run": "0"}, headers=accept
    ).get_json()["outcome"]
    assert done["done"] == [first] and done["missing"] == []
    assert console.json("/dead-letters.json")["depth"]["waiting"] == 1
    moved = console.operator.sqs.receive_message(
        QueueUrl=console.resources.ingest_queue_url, MessageAttributeNames=["All"]
    )["Messages"]
    assert [m["MessageAttributes"]["richdoc.job_id"]["StringValue"] for m in moved] == [f"{1:032x}"]
    everything = console.post(
        "/dead-letters/redrive", data={"everything": "1", "kind": "transient"}, headers=accept
    ).get_json()["outcome"]
    # The records still say run 1 is dead-lettered until the starter runs it again.
    assert everything["count"] == 2 and everything["dry_run"] is True
    assert second in everything["choice"]["message_ids"] or everything["choice"]["everything"]


def test_discard_needs_a_reason_and_records_it_on_the_job(console: Console) -> None:
    message_id = _dead_lettered(console, 1, FailureKind.CORRUPT_INPUT)
    accept = {"Accept": "application/json"}
    refused = console.post(
        "/dead-letters/discard", data={"message_id": [message_id]}, headers=accept
    )
    assert refused.status_code == 400
    done = console.post(
        "/dead-letters/discard",
        data={"message_id": [message_id], "dry_run": "0", "reason": "a scan of a fax"},
        headers=accept,
    ).get_json()["outcome"]
    assert done["done"] == [message_id]
    record = console.operator.jobs.get(f"{1:032x}")
    assert record is not None and record.dead_letter is not None
    assert record.dead_letter.discard_reason == "a scan of a fax"
    assert console.json("/dead-letters.json")["depth"]["waiting"] == 0
    html = console.get("/dead-letters").get_data(as_text=True)
    assert "discarded" in html and "a scan of a fax" in html
    assert console.post("/dead-letters/redrive", data={}, headers=accept).status_code == 400


# ---- the fleet ----------------------------------------------------------------------------------


def _failed(console: Console, n: int, reason: str, key: str = "scan.pdf") -> str:
    source = console.put_source(key, b"%PDF-1.7")
    failure = Failure(FailureKind.CORRUPT_INPUT, reason, error="CorruptInput")
    console.put_job(
        job(
            n,
            source,
            status=JobStatus.DEAD_LETTERED,
            failure=failure,
            ended_at=f"2026-01-01T00:01:{n:02d}.000+00:00",
            message='{"Records": []}',
        )
    )
    return f"{n:032x}"


def test_failure_groups_and_redriving_one_after_a_dry_run(console: Console) -> None:
    first = _failed(console, 1, "page 3 of '<img src=x onerror=alert(1)>.pdf' is unreadable")
    second = _failed(console, 2, "page 17 of 'other.pdf' is unreadable")
    other = _failed(console, 3, "not a PDF at all")
    groups = console.json("/failures.json")["groups"]
    assert [g["count"] for g in groups] == [2, 1]
    big = groups[0]
    assert set(big["examples"]) == {first, second} and big["kind"] == "corrupt_input"
    html = console.get("/failures").get_data(as_text=True)
    assert f'data-signature="{big["signature"]}"' in html
    assert "<img src=x" not in html

    accept = {"Accept": "application/json"}
    later = {"signature": big["signature"], "since": "2026-01-01T00:00:02"}
    narrowed = console.post("/failures/redrive", data=later, headers=accept).get_json()
    assert [r["job_id"] for r in narrowed["redrive"]["results"]] == [second]  # as listed
    dry = console.post(
        "/failures/redrive", data={"signature": big["signature"]}, headers=accept
    ).get_json()["redrive"]
    assert dry["dry_run"] is True and dry["matched"] == 2 and dry["sent"] == 0
    assert {r["outcome"] for r in dry["results"]} == {"would_send"}
    page = console.post("/failures/redrive", data={"signature": big["signature"]})
    assert 'id="confirm"' in page.get_data(as_text=True)

    done = console.post(
        "/failures/redrive",
        data={"signature": big["signature"], "dry_run": "0"},
        headers=accept,
    ).get_json()["redrive"]
    assert done["sent"] == 2 and {r["job_id"] for r in done["results"]} == {first, second}
    sent = console.operator.sqs.receive_message(
        QueueUrl=console.resources.ingest_queue_url,
        MaxNumberOfMessages=10,
        MessageAttributeNames=["All"],
    )["Messages"]
    assert sorted(m["MessageAttributes"]["richdoc.job_id"]["StringValue"] for m in sent) == [
        first,
        second,
    ]
    untouched = console.operator.jobs.get(other)
    assert untouched is not None and untouched.redrive is None
    assert console.post("/failures/redrive", data={}, headers=accept).status_code == 400
    assert console.json("/failures.json?since=2026-01-02")["groups"] == []
    assert console.get("/failures?since=yesterday-ish").status_code == 400


def test_the_tier_ladder_and_its_chart(console: Console, executions: dict[str, str]) -> None:
    _succeeded_pdf(console, executions)
    data = console.json("/tiers.json")
    [row] = data["report"]["tiers"]
    assert row["tier"] == 1 and row["succeeded"] == 1 and row["attempts"] == 1
    assert row["mem_ceiling_mb"] == [] or all(isinstance(m, int) for m in row["mem_ceiling_mb"])
    assert data["bars"] == [{"tier": 1, "succeeded": 1, "width": 240.0, "escalation_width": 0.0}]
    html = console.get("/tiers").get_data(as_text=True)
    assert '<g class="tier-bar" data-tier="1">' in html and "1 succeeded" in html
    assert console.json("/tiers.json?since=2027-01-01")["report"]["tiers"] == []


def test_the_task_center_shows_the_backlog_and_a_waiting_jobs_place(console: Console) -> None:
    from richdoc.admission.backlog import Backlog
    from richdoc.contracts import JobOptions
    from richdoc.jobs import JobStore

    store: JobStore = console.operator.jobs
    backlog = Backlog(store.table, store.clock)
    for n in range(3):
        source = console.put_source(f"<b>acme</b>/{n}.md", b"# Note")
        store.create(f"{n:032x}", source, JobOptions(), message="{}", tenant="<b>acme</b>")
    backlog.mark("<b>acme</b>")
    data = console.json("/jobs.json")
    assert data["backlog"]["capacity"] == 2 and data["backlog"]["waiting"] == 3
    [tenant] = data["backlog"]["tenants"]
    assert (tenant["tenant"], tenant["waiting"], tenant["slots"]) == ("<b>acme</b>", 3, 0)
    places = {j["job_id"]: j["admission"]["position"] for j in data["jobs"]}
    assert sorted(places.values()) == [1, 2, 3]
    assert all(j["progress_text"].startswith("waiting: #") for j in data["jobs"])
    page = console.get("/jobs").get_data(as_text=True)
    assert "0 of 2 slots held; 3 jobs waiting" in page
    assert "&lt;b&gt;acme&lt;/b&gt;" in page and "<b>acme</b>" not in page  # data, escaped
