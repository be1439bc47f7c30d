"""The messages S3 sends to the ingest queue, as the starter receives them."""

from __future__ import annotations

import json
from typing import Any

BUCKET = "ingest"


def s3_notification(key: str, version: str | None = "v1", event: str = "ObjectCreated:Put") -> str:
    obj: dict[str, Any] = {"key": key, "size": 5, "eTag": "0123abcd", "sequencer": "01"}
    if version:
        obj["versionId"] = version
    return json.dumps(
        {
            "Records": [
                {
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "awsRegion": "us-east-1",
                    "eventName": event,
                    "s3": {"bucket": {"name": BUCKET}, "object": obj},
                }
            ]
        }
    )


def eventbridge_notification(key: str) -> str:
    return json.dumps(
        {
            "version": "0",
            "id": "1",
            "detail-type": "Object Created",
            "source": "aws.s3",
            "account": "123456789012",
            "time": "2026-12-01T00:00:00Z",
            "region": "us-east-1",
            "resources": [],
            "detail": {
                "version": "0",
                "bucket": {"name": BUCKET},
                "object": {"key": key, "size": 5, "etag": "0123abcd", "version-id": "v9"},
            },
        }
    )
