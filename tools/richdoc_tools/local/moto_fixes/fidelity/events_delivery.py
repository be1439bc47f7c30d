"""A rule's target that does not transform its input receives the event whole and as put.

What moto does: it builds every delivery from an input template, by replacing
placeholders in a string one after the other, even for a target without an
``InputTransformer``: ``account`` is not in its template (a consumer that reads the event
as AWS documents it, ``richdoc_client.events.CompletionEvent``, refused every event
delivered to an SQS queue or a log group), and a placeholder's name inside the detail (an
object key such as ``<region>.pdf``) is replaced too, changing the user's data in flight.

What AWS does: a target without an input transformer receives the event itself, every
top-level member (``version``, ``id``, ``detail-type``, ``source``, ``account``,
``time``, ``region``, ``resources``, ``detail``) with the values put ("Amazon EventBridge
event structure":
https://docs.aws.amazon.com/eventbridge/latest/ref/overiew-event-structure.html).

The fix passes untransformed events whole; transformed ones still go through moto's
template.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.events.utils.EventTemplateParser.parse"
PATCHED = (TARGET,)

# The members of an event as EventBridge delivers it (moto adds "ingestion-time").
EVENT_MEMBERS = (
    "version",
    "id",
    "detail-type",
    "source",
    "account",
    "time",
    "region",
    "resources",
    "detail",
)


def whole_events(parse: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def parse_or_pass(
        input_template: str | None, input_paths_map: dict[str, Any] | None, event: Any
    ) -> dict[str, Any]:
        if input_template or input_paths_map:
            return parse(input_template, input_paths_map, event)
        return {name: copy.deepcopy(event[name]) for name in EVENT_MEMBERS if name in event}

    return parse_or_pass


def install(exit_stack: contextlib.ExitStack) -> None:
    parse = original(TARGET)  # a staticmethod, as the class stores it
    replace(exit_stack, TARGET, staticmethod(whole_events(parse.__func__)))
