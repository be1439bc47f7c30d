"""Canary: every SendMessage reaches one backend method, which redrive-policy moves do not
use (patches.sqs_send_failures)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import sqs_send_failures


def test_sqs_send_patch_point_takes_the_queue_name_and_redrives_do_not_pass_it() -> None:
    import moto.sqs.models as models

    assert sqs_send_failures.TARGET == "moto.sqs.models.SQSBackend.send_message"
    source = inspect.getsource(models)
    assert "    def send_message(\n        self,\n        queue_name: str," in source
    # SQS's own redrive-policy moves add to the dead-letter queue without SendMessage, so
    # a scripted send failure never stops them.
    assert "queue.dead_letter_queue.add_message(message)" in source
