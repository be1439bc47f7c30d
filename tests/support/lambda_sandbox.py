"""The parse image's two handlers, run as Lambda runs them, for the read-only filesystem
test (tests/parse/test_lambda_filesystem.py), which starts this module inside bubblewrap:
``python -m tests.support.lambda_sandbox`` prints one JSON line, the plan's and the
parse's state outputs for a 3-page PDF whose last page is a scan (OCR reads it), and
the words OCR read there.

AWS is moto in this process (its state in memory), the job record is created as the
starter would, and ``functions/parse/app.py`` is imported the way the runtime imports it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

from tests.support.lambda_context import FakeLambdaContext

INGEST, ARTIFACTS, KEY = "ingest", "artifacts", "in/report.pdf"
TEXT_LINE = "A page with a text layer."
SCANNED_LINE = "The scanned page reads as this sentence."
ROOT = Path(__file__).resolve().parents[2]


def _handlers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("app", ROOT / "functions/parse/app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    import boto3
    from moto import mock_aws
    from richdoc_tools.local.cloudformation.template import load_template

    from richdoc.contracts import JobOptions, SourceObject
    from richdoc.wiring import wiring
    from tests.support import scans
    from tests.support.aws import provision_one

    os.environ.update(
        {
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "ARTIFACT_BUCKET": ARTIFACTS,
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
        }
    )
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=INGEST)
        s3.create_bucket(Bucket=ARTIFACTS)
        pdf = scans.mixed_pdf(
            [("text", [TEXT_LINE]), ("text", [TEXT_LINE]), ("scan", [SCANNED_LINE])]
        )
        s3.put_object(Bucket=INGEST, Key=KEY, Body=pdf)
        template = load_template()
        os.environ["JOBS_TABLE"] = provision_one(template, "JobsTable")
        # Tier 1 as a default deployment sizes it. A scanned page's OCR takes the child to
        # within a few percent of the 3,008 MB profile's ceiling, how close depending on
        # how docling's pipeline threads overlap the pages: not what this test is about.
        tier1_mb = int(template.parameter_defaults()["ParseTier1MemoryMB"])
        source = SourceObject(bucket=INGEST, key=KEY)
        wiring.jobs.create("job-ro", source, JobOptions())
        wiring.jobs.mark_running("job-ro", 1, "arn:execution:job-ro-r1")
        app = _handlers()
        event = {"job_id": "job-ro", "run": 1, "source": source.model_dump(mode="json")}
        planner = FakeLambdaContext(function_name="richdoc-plan", memory_limit_in_mb=2048)
        plan = app.plan(event, planner)
        # The parse converts as the plan decided (the state machine passes its conversion).
        conversion = {name: plan[name] for name in ("format", "pipeline", "contract")}
        parse = app.handler(
            {**event, **conversion, "tier": 1, "accept_partial": False},
            FakeLambdaContext(memory_limit_in_mb=tier1_mb),
        )
        document = json.loads(wiring.artifacts.get_bytes(parse["docling_key"]))
    read = [t["text"] for t in document["texts"] if t["prov"] and t["prov"][0]["page_no"] == 3]
    print(json.dumps({"plan": plan, "parse": parse, "ocr_text": " ".join(read)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
