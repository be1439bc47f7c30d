"""Where moto repeats work per request or does work that grows with what it holds, done
once or in proportion, with the same answers (see ``richdoc_tools.local.moto_fixes``).

Each module has ``PATCHED`` (the dotted paths it replaces; ``ADDED``, those moto lacks)
and ``install(exit_stack)``, and a test comparing its answers with moto's own
(``tests/aws/moto_fixes/test_speed_<patch>.py``). Every stack installs ``PATCHES``, in
order. Each is kept only while it saves at least 5 % of bench item 5's run or keeps a
documented bench within its target; ``python -m bench --only speed_patches`` measures
each one's share by running the item without it (docs/benchmarks.md, item 5).

The patches, one a module: ``attribute_values`` (DynamoDB values serialized by their wire
format), ``definition_parse`` (one ANTLR parse per definition), ``json_paths`` (each
JSONPath parsed once), ``dynamodb_transaction_rollback`` (a transaction's rollback point
is the items it names) and ``task_clients`` (one boto3 client per region and service for
the interpreter's Lambda tasks).
"""

from __future__ import annotations

import contextlib

from richdoc_tools.local.moto_fixes.speed import (
    attribute_values,
    definition_parse,
    dynamodb_transaction_rollback,
    json_paths,
    task_clients,
)
from richdoc_tools.local.patches import PlainPatchPoint

PATCHES: tuple[PlainPatchPoint, ...] = (
    definition_parse,
    task_clients,
    json_paths,
    attribute_values,
    dynamodb_transaction_rollback,
)


def install(exit_stack: contextlib.ExitStack) -> None:
    """Install every speed patch, in order, until ``exit_stack`` closes."""
    for patch in PATCHES:
        patch.install(exit_stack)
