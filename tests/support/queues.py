"""Reading a queue the way a test reads it: every message's body, taken off the queue."""

from __future__ import annotations

import json
from typing import Any


def drained(sqs: Any, url: str) -> list[dict[str, Any]]:
    """Every message on the queue now (its JSON body), each deleted once read."""
    found = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        for message in batch:
            found.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return found
