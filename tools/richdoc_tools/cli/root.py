"""The ``richdoc`` group itself: ``--version``, its commands in the order ``--help``
lists them, and ``main``, the console script."""

from __future__ import annotations

from collections.abc import Sequence

import click

from richdoc_tools.cli import (
    console,
    deploy,
    dlq,
    errors,
    events,
    jobs,
    local,
    models,
    reprocess,
    run,
    steps,
)


class _InOrder(click.Group):
    """Lists its commands in the order they were added (the main job first), not sorted."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


@click.group(
    cls=_InOrder,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="richdoc", prog_name="richdoc", message="%(prog)s %(version)s")
def richdoc() -> None:
    """Rich-document ingestion: parse with docling, project to a graph, detect temporal
    ambiguities; locally on an embedded AWS stack or on AWS."""


for command in (
    run.run,
    steps.parse,
    steps.project,
    steps.detect,
    local.local,
    jobs.jobs,
    dlq.dlq,
    reprocess.reprocess,
    events.events,
    console.console,
    deploy.deploy,
    models.models,
):
    richdoc.add_command(command)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``richdoc`` console script (and ``python -m richdoc_tools``)."""
    import sys

    return errors.invoke(richdoc, sys.argv[1:] if argv is None else argv)
