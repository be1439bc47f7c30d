"""The embedded stack as the tests start it."""

from __future__ import annotations

from richdoc_tools.local.settings import StackSettings

# Retries and redeliveries at once (a retry's wait scaled to nothing, a message let go of
# visible again at once); scheduled rules fired and lifecycle rules applied only when a
# test asks (``fire_schedules``, ``apply_lifecycle``), at the time it chooses. A test
# gives its own log, and anything else, with ``dataclasses.replace``.
TEST_STACK = StackSettings(retry_delay_scale=0.0, retry_visibility_s=0, schedules=False)
