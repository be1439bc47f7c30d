"""The fleet's pages: failure groups (failed jobs by a normalised signature, a redrive
button per group) and the tier ladder (pages and size against the tier that finally
succeeded, how often each tier escalates).

Both draw what the job lifecycle's commands compute (``richdoc jobs failures``,
``richdoc jobs tiers``); until those exist, the pages and their JSON twins are slots that
say so.
"""

from __future__ import annotations

from flask import Blueprint
from pydantic import BaseModel

from richdoc_tools.console.twins import page

blueprint = Blueprint("fleet", __name__)


class Slot(BaseModel):
    title: str
    available: bool
    what: str  # what the page will show
    command: str  # the command whose function it will call


@page(blueprint, "/failures", "slot.html")
def failures() -> Slot:
    return Slot(
        title="Failure groups",
        available=False,
        what="failed jobs grouped by a normalised signature (kind, feature, error, the "
        "stable part of the reason), with counts, first and last seen, and a redrive "
        "button per group",
        command="richdoc jobs failures",
    )


@page(blueprint, "/tiers", "slot.html")
def tiers() -> Slot:
    return Slot(
        title="Tier ladder",
        available=False,
        what="pages and size against the memory tier that finally succeeded, and how "
        "often each tier escalates",
        command="richdoc jobs tiers",
    )
