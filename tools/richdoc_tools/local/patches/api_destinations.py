"""A rule's API destination targets get their events from the embedded stack's webhook
delivery (``richdoc_tools.local.runtime.webhooks``), as EventBridge delivers them.

moto's ``Rule.send_to_targets`` delivers to queues, log groups, archives and buses; for an
API destination it sends, only when ``MOTO_EVENTS_INVOKE_HTTP`` is set, a bare request
(the destination's method, no body, no authorization, no retry, no dead-letter queue),
on the thread that called PutEvents. Here moto's own request is turned off
(``HTTP_TARGET``) and each event a rule matches is handed, for each of its API destination
targets, to the delivery (``enqueue``), which sends it as AWS does, later, on its own
thread. The event is the one the rule's other targets get (``moto_fixes.fidelity.events_delivery``:
whole, unless the target transforms it).
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

TARGET = "moto.events.models.Rule.send_to_targets"
HTTP_TARGET = "moto.settings.events_invoke_http"
PATCHED = (TARGET, HTTP_TARGET)

if TYPE_CHECKING:
    from moto.events.models import Rule
    from moto.events.utils import EventMessageType

Enqueue = Callable[[str, Mapping[str, Any], Mapping[str, Any]], None]


# Rule.send_to_targets(original_event, transform_input).
SendToTargets = Callable[["Rule", "EventMessageType", bool], None]


def handing_over(send: SendToTargets, enqueue: Enqueue) -> SendToTargets:
    from moto.events.utils import EventTemplateParser

    @functools.wraps(send)
    def send_to_targets(
        self: Rule, original_event: EventMessageType, transform_input: bool = True
    ) -> None:
        send(self, original_event, transform_input)
        if not self.event_pattern.matches_event(original_event):
            return
        for target in self.targets:
            if ":api-destination/" not in target["Arn"]:
                continue
            transformer = target.get("InputTransformer", {}) if transform_input else {}
            event = EventTemplateParser.parse(
                input_template=transformer.get("InputTemplate"),  # type: ignore[arg-type]
                input_paths_map=transformer.get("InputPathsMap", {}),
                event=original_event,
            )
            enqueue(self.arn, copy.deepcopy(target), event)

    return send_to_targets


def install(exit_stack: contextlib.ExitStack, enqueue: Enqueue) -> None:
    replace(exit_stack, HTTP_TARGET, lambda: False)
    replace(exit_stack, TARGET, handing_over(original(TARGET), enqueue))
