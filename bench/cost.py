"""Item 7, the cost model: measured work per document, times AWS prices, per 1,000 documents.

Nothing is measured here. The inputs come from the other items of the same run (or, for
``--only cost``, from the last committed report):

* ``parse``: warm stage durations of the typical documents on this machine (parse in
  the isolated worker, project and detect as their handlers run them), parse peak RSS;
* ``e2e``: per successful job, the Lambda invocations, the AWS calls each function makes
  (S3, DynamoDB, Step Functions), the DynamoDB writes per item kind and the item sizes, the
  state transitions of an execution and the function log volume;
* ``coldstart``: handler import time (init duration, billed since August 2025).

Every price and every assumption is a named constant below, with its source; docs/cost.md
explains the model. Billed duration of a function = compute measured here + one
in-region round trip per AWS call it makes + artifact transfer at an assumed S3
throughput; the local emulation's own call latency is not used (it is nothing like
AWS's).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from bench.common import ItemResult, Table


@dataclass(frozen=True)
class Price:
    name: str
    usd: float
    per: str
    source: str
    status: str  # "verified" (read on the cited page), "secondary" (a third-party page
    #             quoting it), "assumed" (not found in the pages searched; value from the
    #             provider's published list as last known)


PRICES: dict[str, Price] = {
    p.name: p
    for p in (
        Price(
            "lambda_gb_s",
            0.0000166667,
            "GB-second (x86, first 6 billion GB-s/month)",
            "https://docs.aws.amazon.com/whitepapers/latest/how-aws-pricing-works/lambda.html",
            "verified",
        ),
        Price(
            "lambda_request",
            0.20 / 1e6,
            "request",
            "https://docs.aws.amazon.com/whitepapers/latest/how-aws-pricing-works/lambda.html",
            "verified",
        ),
        Price(
            "sfn_transition",
            0.025 / 1000,
            "state transition (Standard, us-east-1)",
            "https://aws.amazon.com/step-functions/pricing/",
            "verified",
        ),
        Price(
            "dynamodb_wru",
            0.625 / 1e6,
            "write request unit (on-demand, us-east-1)",
            "https://aws.amazon.com/dynamodb/pricing/on-demand/ (quoted by "
            "https://airbyte.com/data-engineering-resources/dynamodb-pricing)",
            "secondary",
        ),
        Price(
            "dynamodb_rru",
            0.125 / 1e6,
            "read request unit (on-demand, us-east-1)",
            "https://aws.amazon.com/dynamodb/pricing/on-demand/ (quoted by "
            "https://airbyte.com/data-engineering-resources/dynamodb-pricing)",
            "secondary",
        ),
        Price(
            "s3_put",
            0.005 / 1000,
            "PUT, COPY, POST, LIST request (S3 Standard)",
            "https://aws.amazon.com/s3/pricing/ (quoted by "
            "https://c3x.dev/blog/s3-request-fees-explained)",
            "secondary",
        ),
        Price(
            "s3_get",
            0.0004 / 1000,
            "GET, HEAD, SELECT request (S3 Standard)",
            "https://aws.amazon.com/s3/pricing/ (quoted by "
            "https://c3x.dev/blog/s3-request-fees-explained)",
            "secondary",
        ),
        Price(
            "s3_gb_month",
            0.023,
            "GB-month (S3 Standard, first 50 TB)",
            "https://aws.amazon.com/s3/pricing/",
            "assumed",
        ),
        Price(
            "sqs_request",
            0.40 / 1e6,
            "request, per 64 KB chunk (standard queue)",
            "https://aws.amazon.com/sqs/pricing/ (quoted by "
            "https://cloudburn.io/blog/amazon-sqs-pricing)",
            "secondary",
        ),
        Price(
            "logs_gb",
            0.50,
            "GB of CloudWatch Logs ingested (standard class)",
            "https://aws.amazon.com/cloudwatch/pricing/",
            "assumed",
        ),
        Price(
            "xray_trace",
            5.00 / 1e6,
            "trace recorded",
            "https://aws.amazon.com/xray/pricing/",
            "assumed",
        ),
    )
}

# Managed document services, USD per 1,000 pages (first volume tier).
MANAGED: list[Price] = [
    Price(
        "Amazon Textract, DetectDocumentText (text only)",
        1.50,
        "1,000 pages",
        "https://aws.amazon.com/textract/pricing/",
        "assumed",
    ),
    Price(
        "Amazon Textract, AnalyzeDocument Layout",
        4.00,
        "1,000 pages",
        "https://aws.amazon.com/textract/pricing/",
        "assumed",
    ),
    Price(
        "Amazon Textract, AnalyzeDocument Tables",
        15.00,
        "1,000 pages",
        "https://aws.amazon.com/textract/pricing/",
        "assumed",
    ),
    Price(
        "Azure Document Intelligence, Read",
        1.50,
        "1,000 pages",
        "https://azure.microsoft.com/pricing/details/ai-document-intelligence/",
        "assumed",
    ),
    Price(
        "Azure Document Intelligence, Layout",
        10.00,
        "1,000 pages",
        "https://azure.microsoft.com/pricing/details/ai-document-intelligence/",
        "assumed",
    ),
    Price(
        "Google Document AI, Enterprise Document OCR",
        1.50,
        "1,000 pages",
        "https://cloud.google.com/document-ai/pricing (quoted by "
        "https://www.gogoai.xin/article/build-ai-document-pipelines-with-cloud-document-ai)",
        "secondary",
    ),
    Price(
        "Google Document AI, Layout Parser",
        10.00,
        "1,000 pages",
        "https://cloud.google.com/document-ai/pricing",
        "assumed",
    ),
]


@dataclass(frozen=True)
class Assumptions:
    api_round_trip_s: float = 0.015  # one in-region S3/DynamoDB/Step Functions call
    s3_mb_per_s: float = 80.0  # single-stream GET/PUT throughput from Lambda
    handler_compute_s: float = 0.005  # starter and records: Python around their calls
    invocations_per_environment: int = 100  # documents served per cold start
    parse_init_s: float = 10.0  # container start + docling import in the zygote
    # Standard PDF pipeline (layout model + TableFormer), measured here on synthesised
    # weights with the real architectures (docs/parse.md, "Sizing"): CPU seconds a text
    # page at one torch thread; two threads spend 1.74 times the CPU of one on the same
    # pages, so a function with 2 vCPUs or more converts a page in 2.15 x 1.74 / 2 s.
    # Lambda gives 1 vCPU per 1,769 MB; its cores are taken as fast as this machine's.
    standard_cpu_s_per_page: float = 2.15
    standard_two_thread_cpu: float = 1.74
    mb_per_vcpu: int = 1769
    # A child's peak RSS on text pages: base + per page (1, 10, 50, 200 pages measured),
    # against the ceiling a tier leaves beside the measured warm zygote.
    standard_child_base_mb: float = 1900.0
    standard_child_mb_per_page: float = 15.0
    standard_zygote_anon_mb: float = 599.0
    standard_zygote_file_mb: float = 164.0
    # Light PDF pipeline (CDLA layout, SLANet-plus tables), measured here through the
    # worker at two threads (docs/parse.md, "The light pipeline"): the child's CPU seconds
    # a text page (50 pages: 11.2 s) and per document (its models' sessions, built in each
    # child: a one-page document took 0.56 s). Billed as if it ran on one core (no credit
    # for the second thread): an upper bound. Its child peaks at about 590 MB + 17 MB a
    # page, so a 50-page shard is far inside tier 1.
    light_cpu_s_per_page: float = 0.223
    light_cpu_s_per_document: float = 0.33
    parse_timeout_s: float = 600.0  # RICHDOC_TIMEOUT_S default; docling stops at 80 %
    # The merge of a sharded document: bench item 8 merged 1,000 native-pipeline pages
    # (67 items a page) in 2.6 s; the standard pipeline has fewer items a page.
    merge_s_per_page: float = 0.0026
    log_retention_note: str = "log storage after ingestion is not included"


TIERS_MB = (4096, 6144, 10240)  # template.yaml ParseTier{1,2,3}MemoryMB defaults
SHARD_PAGES = 50  # template.yaml ShardPages default: longer PDFs are parsed as shards
PLAN_MB = 2048  # template.yaml PlanFunction
MERGE_MB = 1769  # template.yaml MergeFunction


@dataclass(frozen=True)
class Line:
    what: str
    usd: float


def _usd(value: float) -> str:
    """A price as written on pricing pages: no exponent, no trailing zeros."""
    return f"{value:.10f}".rstrip("0").rstrip(".")


def _gb_s(memory_mb: int, seconds: float) -> float:
    return memory_mb / 1024 * seconds


def _calls(per_job: dict[str, Any], logical_id: str) -> dict[str, float]:
    calls: dict[str, float] = per_job["aws_calls"].get(f"function:{logical_id}", {})
    return calls


def _count(calls: dict[str, float], prefix: str) -> float:
    return sum(v for k, v in calls.items() if k.startswith(prefix))


def document_cost(
    doc: dict[str, Any],
    per_job: dict[str, Any],
    coldstart: dict[str, Any] | None,
    a: Assumptions,
    *,
    parse_seconds: float | None = None,
    parse_attempts: list[tuple[int, float]] | None = None,
    shards: int = 1,
) -> list[Line]:
    """Cost lines of one document. ``parse_attempts`` [(tier MB, seconds)] overrides the
    single tier-1 parse (used for the standard-pipeline estimate and escalations); with
    ``shards`` > 1 they are every shard's attempts, and the merge is added.

    Reports measured before the plan step existed have no ``PlanFunction`` invocation and
    two transitions fewer (``Plan``, ``Sharded``); they are added here from the template
    (one short invocation, the download of a PDF it inspects)."""
    handlers = per_job["handlers"]
    lines: list[Line] = []
    p = PRICES

    def function(logical_id: str, compute_s: float, transfer_mb: float = 0.0) -> float:
        calls = _calls(per_job, logical_id)
        invocations = handlers.get(logical_id, {}).get("invocations", 1.0) or 1.0
        n_calls = sum(calls.values()) / invocations
        return compute_s + n_calls * a.api_round_trip_s + transfer_mb / a.s3_mb_per_s

    memory = {lid: int(v["memory_mb"]) for lid, v in handlers.items()}
    memory.setdefault("PlanFunction", PLAN_MB)
    plan_measured = "PlanFunction" in handlers
    sharded = shards > 1
    records_inv = handlers.get("RecordsFunction", {}).get("invocations", 2.0)
    starter_inv = handlers.get("StarterFunction", {}).get("invocations", 1.0)
    durations = {
        "StarterFunction": (starter_inv, function("StarterFunction", a.handler_compute_s)),
        "RecordsFunction": (records_inv, function("RecordsFunction", a.handler_compute_s)),
        "ProjectFunction": (
            1.0,
            function(
                "ProjectFunction",
                doc["project_s"],
                doc["docling_json_mb"] + doc["projection_json_mb"],
            ),
        ),
        "DetectFunction": (
            1.0,
            function("DetectFunction", doc["detect_s"], doc["projection_json_mb"]),
        ),
        # Plans every document; downloads (and inspects) only a PDF it may shard.
        "PlanFunction": (
            1.0,
            function(
                "PlanFunction",
                a.handler_compute_s,
                doc["file_mb"] if doc["format"] == "pdf" and doc["pages"] > SHARD_PAGES else 0.0,
            ),
        ),
    }
    gb_s = sum(_gb_s(memory[lid], n * s) for lid, (n, s) in durations.items())
    invocations = sum(n for n, _ in durations.values())
    # Each shard downloads the whole source object and writes its own part of the JSON.
    parse_overhead = function(
        "ParseTier1Function", 0.0, doc["file_mb"] + doc["docling_json_mb"] / shards
    )
    attempts = parse_attempts or [(TIERS_MB[0], parse_seconds or doc["parse_s"])]
    for tier_mb, seconds in attempts:
        gb_s += _gb_s(tier_mb, seconds + parse_overhead)
        invocations += 1
    if sharded:  # reads every shard, writes the merged document
        merge_s = doc["pages"] * a.merge_s_per_page + 2 * doc["docling_json_mb"] / a.s3_mb_per_s
        gb_s += _gb_s(MERGE_MB, merge_s + (shards + 6) * a.api_round_trip_s)
        invocations += 1
    lines.append(Line("Lambda duration (GB-s)", gb_s * p["lambda_gb_s"].usd))
    lines.append(Line("Lambda requests", invocations * p["lambda_request"].usd))

    # Init duration (billed since August 2025), spread over the documents an
    # execution environment serves.
    init = 0.0
    if coldstart:
        handler_init = coldstart["median_s"]
        for lid, name in (("ProjectFunction", "project"), ("DetectFunction", "detect")):
            init += _gb_s(memory[lid], handler_init[name]["wall"])
        # Every parse invocation (every shard) and the plan start the parse image.
        init += _gb_s(TIERS_MB[0], a.parse_init_s) * len(attempts)
        init += _gb_s(PLAN_MB, a.parse_init_s)
    lines.append(
        Line("Lambda init, amortized", init / a.invocations_per_environment * p["lambda_gb_s"].usd)
    )
    escalations = len(attempts) - shards  # each: EscalateToTierN + ParseTierN
    transitions = per_job["state_transitions"] + 2 * escalations
    if not plan_measured:
        transitions += 2  # Plan, Sharded
    if sharded:  # the Map state, one task a shard (less the whole ParseTier1), Merge
        transitions += 1 + shards
    lines.append(Line("Step Functions transitions", transitions * p["sfn_transition"].usd))

    job_wru = math.ceil(per_job["job_item_bytes"] / 1024)
    attempt_wru = math.ceil(per_job["attempt_item_bytes"] / 1024)
    writes = per_job["dynamodb_writes_by_item"]
    job_writes = sum(v for k, v in writes.items() if k.endswith("job item"))
    attempt_writes = sum(v for k, v in writes.items() if k.endswith("attempt item"))
    # Each parse attempt beyond the measured one (an escalation, another shard), the merge,
    # and an unmeasured plan: one more attempt (4 writes: the job update that numbers it,
    # its put and close) and its record; opening an attempt reads nothing.
    extra = len(attempts) - 1 + int(sharded) + int(not plan_measured)
    wru = (
        job_writes * job_wru
        + attempt_writes * attempt_wru
        + extra * (2 * job_wru + 2 * attempt_wru)
    )
    reads = sum(
        _count(calls, "dynamodb:Query") + _count(calls, "dynamodb:GetItem")
        for kind, calls in per_job["aws_calls"].items()
        if kind.startswith("function:")
    )
    lines.append(Line("DynamoDB writes", wru * p["dynamodb_wru"].usd))
    lines.append(Line("DynamoDB reads", reads * p["dynamodb_rru"].usd))

    function_calls = [c for k, c in per_job["aws_calls"].items() if k.startswith("function:")]
    puts = sum(_count(c, "s3:PutObject") for c in function_calls) + 1  # + the upload itself
    gets = sum(_count(c, "s3:GetObject") + _count(c, "s3:HeadObject") for c in function_calls)
    puts += len(attempts) - 1  # every further parse attempt: source GET, cache HEAD, PUT
    gets += 2 * (len(attempts) - 1)
    if sharded:  # the merge: every shard, the cache HEAD, the merged PUT
        puts, gets = puts + 1, gets + shards + 1
    if not plan_measured and durations["PlanFunction"][1] > a.handler_compute_s:
        gets += 1  # the plan's download
    lines.append(Line("S3 requests", puts * p["s3_put"].usd + gets * p["s3_get"].usd))
    docling_copies = 2 if sharded else 1  # the shards and the merged document
    stored_gb = (
        doc["file_mb"] + docling_copies * doc["docling_json_mb"] + 2 * doc["projection_json_mb"]
    ) / 1024
    lines.append(Line("S3 storage, one month", stored_gb * p["s3_gb_month"].usd))
    # On AWS: the S3 notification's SendMessage, the event source mapping's receive and its
    # batch delete: at most three requests per message (batches of 10 make it fewer).
    lines.append(Line("SQS requests", 3 * p["sqs_request"].usd))
    lines.append(
        Line("CloudWatch Logs ingestion", per_job["function_log_bytes"] / 1e9 * p["logs_gb"].usd)
    )
    lines.append(Line("X-Ray traces (upper bound: every job traced)", p["xray_trace"].usd))
    return lines


def standard_parse_attempts(pages: int, a: Assumptions) -> tuple[list[tuple[int, float]], str]:
    """Parse attempts of the standard pipeline under the measured figures: each tier
    either finishes, or its child is killed at the tier's memory ceiling (after the pages
    that fit), or stops at docling's document timeout (80 % of the parse timeout); below
    the biggest tier both are resource limits and escalate."""
    from richdoc.parse.settings import Pipeline, ZygoteMemory, ceiling_for_tier

    zygote = ZygoteMemory(a.standard_zygote_anon_mb, a.standard_zygote_file_mb)
    stop_s = 0.8 * a.parse_timeout_s
    attempts = []
    for tier_mb in TIERS_MB:
        two_threads = tier_mb / a.mb_per_vcpu >= 2
        per_page = a.standard_cpu_s_per_page * (a.standard_two_thread_cpu / 2 if two_threads else 1)
        ceiling = ceiling_for_tier(tier_mb, zygote, Pipeline.STANDARD)
        fit = (ceiling - a.standard_child_base_mb) / a.standard_child_mb_per_page
        seconds = pages * per_page
        if pages <= fit and seconds <= stop_s:
            attempts.append((tier_mb, seconds))
            return attempts, f"finishes at {tier_mb} MB"
        attempts.append((tier_mb, min(stop_s, fit * per_page)))
    if pages * per_page > stop_s and pages <= fit:
        return attempts, "partial at 10,240 MB (accepted at the biggest tier)"
    return attempts, "resource limit at 10,240 MB (over its memory ceiling)"


def light_parse_attempts(pages: int, a: Assumptions) -> tuple[list[tuple[int, float]], int]:
    """The light pipeline's parse attempts: one tier-1 parse per ``ShardPages`` shard (its
    child stays far inside tier 1's ceiling), and how many shards."""
    shards = max(1, math.ceil(pages / SHARD_PAGES))
    attempts = []
    for index in range(shards):
        shard_pages = pages // shards + (1 if index < pages % shards else 0)
        seconds = a.light_cpu_s_per_document + shard_pages * a.light_cpu_s_per_page
        attempts.append((TIERS_MB[0], seconds))
    return attempts, shards


def sharded_standard_parse_attempts(
    pages: int, a: Assumptions
) -> tuple[list[tuple[int, float]], int, str]:
    """Every shard's parse attempts (the standard pipeline's measured figures for its pages):
    ``ShardPages``-sized shards, balanced, as ``richdoc.parse.shard_plan.plan_shards`` makes
    them."""
    shards = math.ceil(pages / SHARD_PAGES)
    attempts: list[tuple[int, float]] = []
    outcomes = set()
    for index in range(shards):
        shard_pages = pages // shards + (1 if index < pages % shards else 0)
        tried, outcome = standard_parse_attempts(shard_pages, a)
        attempts += tried
        outcomes.add(outcome)
    return attempts, shards, f"{shards} shards, each " + ", ".join(sorted(outcomes))


def priced(
    doc: dict[str, Any],
    per_job: dict[str, Any],
    coldstart: dict[str, Any] | None,
    a: Assumptions,
    pipeline: str,
    outcome: str,
    attempts: list[tuple[int, float]],
    shards: int = 1,
) -> dict[str, Any]:
    """A scenario of the cost table: a document parsed by ``attempts`` on ``pipeline``."""
    lines = document_cost(doc, per_job, coldstart, a, parse_attempts=attempts, shards=shards)
    return {
        "document": doc["label"],
        "pipeline": pipeline,
        "pages": doc["pages"],
        "parse_outcome": outcome,
        "parse_attempts": attempts,
        "lines": [asdict(x) for x in lines],
    }


def compute(
    parse: dict[str, Any] | None, e2e: dict[str, Any] | None, coldstart: dict[str, Any] | None
) -> ItemResult:
    result = ItemResult("cost", "7. Cost model: dollars per 1,000 documents")
    if not parse or not e2e:
        result.notes.append("needs the parse and e2e items (run them, or a full report)")
        return result
    a = Assumptions()
    per_job = e2e["measurements"]["per_job"]
    docs = parse["measurements"]["cost_documents"]
    scenarios: list[dict[str, Any]] = []
    for doc in docs:
        lines = document_cost(doc, per_job, coldstart and coldstart["measurements"], a)
        scenarios.append(
            {
                "document": doc["label"],
                "pipeline": "measured here",
                "pages": doc["pages"],
                "parse_outcome": "tier 1",
                "lines": [asdict(x) for x in lines],
            }
        )
        if doc["format"] != "pdf":
            continue

        measured = coldstart and coldstart["measurements"]
        longer = doc["pages"] > SHARD_PAGES
        attempts, outcome = standard_parse_attempts(doc["pages"], a)
        whole = ", whole (ShardPages 0)" if longer else ""
        scenarios.append(
            priced(doc, per_job, measured, a, f"standard (measured){whole}", outcome, attempts)
        )
        if longer:  # what the default template does with it
            attempts, shards, outcome = sharded_standard_parse_attempts(doc["pages"], a)
            label = f"standard (measured), {shards} shards"
            scenarios.append(priced(doc, per_job, measured, a, label, outcome, attempts, shards))
        attempts, shards = light_parse_attempts(doc["pages"], a)
        label = "light (measured per page)" + (f", {shards} shards" if shards > 1 else "")
        outcome = f"tier 1 (4,096 MB), {shards} parse(s)"
        scenarios.append(priced(doc, per_job, measured, a, label, outcome, attempts, shards))
    for s in scenarios:
        total = sum(line["usd"] for line in s["lines"])
        s["usd_per_1000_documents"] = round(total * 1000, 4)
        s["usd_per_1000_pages"] = round(total * 1000 / max(s["pages"], 1), 4)
    result.measurements = {
        "assumptions": asdict(a),
        "prices": [asdict(p) for p in PRICES.values()],
        "managed_services": [asdict(p) for p in MANAGED],
        "scenarios": scenarios,
    }
    result.tables.append(
        Table(
            "Dollars per 1,000 documents (us-east-1, x86, on-demand, no free tier)",
            [
                "document",
                "PDF pipeline",
                "parse",
                "$ / 1,000 docs",
                "$ / 1,000 pages",
                "largest line",
            ],
            [
                [
                    s["document"],
                    s["pipeline"],
                    s["parse_outcome"],
                    s["usd_per_1000_documents"],
                    s["usd_per_1000_pages"],
                    max(s["lines"], key=lambda line: line["usd"])["what"],
                ]
                for s in scenarios
            ],
        )
    )
    what = [line["what"] for line in scenarios[0]["lines"]]
    result.tables.append(
        Table(
            "Breakdown, $ per 1,000 documents",
            ["line", *(f"{s['document']} ({s['pipeline']})" for s in scenarios)],
            [
                [w, *(round(s["lines"][i]["usd"] * 1000, 4) for s in scenarios)]
                for i, w in enumerate(what)
            ],
        )
    )
    result.tables.append(
        Table(
            "Managed services, $ per 1,000 documents at their published per-page price",
            ["service", "$ / 1,000 pages", *(d["label"] for d in docs), "price status"],
            [
                [m.name, m.usd, *(round(m.usd * d["pages"], 2) for d in docs), m.status]
                for m in MANAGED
            ],
        )
    )
    result.tables.append(
        Table(
            "Prices used",
            ["price", "USD", "per", "status", "source"],
            [[p.name, _usd(p.usd), p.per, p.status, p.source] for p in PRICES.values()],
        )
    )
    return result
