"""How far a run has come: the closed phase vocabulary, and the progress a job record shows.

The phase is written by the transitions that happen anyway (the starter's create, the
state machine's records actions, a step opening its attempt, a shard finishing, the
cancel); nothing here measures or estimates. Counts are shown only where they are exact:
the page-range shards whose parse finished (a string set of their ranges on the job: an
``ADD`` of a range is idempotent, so a retried or cached shard counts once) and the pages
in them. A step that has no trustworthy measure of progress (docling converting one
document) shows its phase and nothing more: no invented percentages.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from richdoc.contracts import PageSpan, StepName


class JobPhase(StrEnum):
    """The closed phase vocabulary, in the order a run goes through it."""

    QUEUED = "queued"  # the starter created the run (or a redrive queued the next one)
    PLANNING = "planning"  # RecordStart ran; Plan decides whole or page-range shards
    PARSING = "parsing"  # the whole document, at the job's tier
    PARSING_SHARDS = "parsing_shards"  # page-range shards: k of n finished
    MERGING = "merging"
    PROJECTING = "projecting"
    DETECTING = "detecting"
    RECORDING = "recording"  # every step done; the success is being recorded
    DEAD_LETTERING = "dead_lettering"  # the run failed (FAILED); its message is being sent
    # Terminal, as the status says.
    SUCCEEDED = "succeeded"
    DEAD_LETTERED = "dead_lettered"
    CANCELLED = "cancelled"
    DELETED = "deleted"


_OPENED: dict[StepName, JobPhase] = {
    "plan": JobPhase.PLANNING,
    "parse": JobPhase.PARSING,
    "merge": JobPhase.MERGING,
    "project": JobPhase.PROJECTING,
    "detect": JobPhase.DETECTING,
}


def phase_of_step(stage: StepName, pages: PageSpan | None = None) -> JobPhase:
    """The phase a step's attempt puts the job in (a parse of ``pages``: a shard's)."""
    if stage == "parse" and pages:
        return JobPhase.PARSING_SHARDS
    return _OPENED[stage]


class Progress(BaseModel):
    """A job's progress as the command line shows it (``richdoc jobs show``, ``watch``,
    the progress line of ``richdoc run``): the phase, and exact counts where there are
    some."""

    model_config = ConfigDict(frozen=True)

    phase: JobPhase | None  # None: a job recorded before phases existed
    tier: int | None = None  # parsing the whole document: at this memory tier
    shards: int | None = None  # parsing shards: how many the plan made
    shards_done: int | None = None  # ... how many of them have finished
    pages_done: int | None = None  # ... and the pages in those

    @classmethod
    def of(
        cls,
        phase: JobPhase | None,
        *,
        tier: int | None,
        shards: int | None,
        finished_ranges: Iterable[PageSpan] | None,
    ) -> Progress:
        if phase is JobPhase.PARSING:
            return cls(phase=phase, tier=tier)
        if phase is JobPhase.PARSING_SHARDS:
            done = list(finished_ranges or ())
            pages_done = sum(span.page_count for span in done)
            return cls(phase=phase, shards=shards, shards_done=len(done), pages_done=pages_done)
        return cls(phase=phase)

    def describe(self) -> str:
        """One line: ``parsing (tier 2)``, ``parsing shards: 3 of 8 done (150 pages)``."""
        if self.phase is None:
            return "-"
        text = str(self.phase).replace("_", " ")
        if self.phase is JobPhase.PARSING and self.tier is not None:
            return f"{text} (tier {self.tier})"
        if self.phase is JobPhase.PARSING_SHARDS:
            of = f" of {self.shards}" if self.shards is not None else ""
            return f"{text}: {self.shards_done}{of} done ({self.pages_done} pages)"
        return text
