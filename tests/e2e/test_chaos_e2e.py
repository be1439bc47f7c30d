"""A short chaos run: a handful of documents (small, broken, sharded) through the real
state machine with faults injected into every AWS call and invocation, checked against a
fault-free run of the same documents (tests/support/chaos.py says what must hold).
``make chaos`` runs the long one (docs/reliability.md).

Speed-independent: nothing here waits on a clock; the rate is high so that a handful of
documents meets every kind of fault, and the seed fixes which calls fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from richdoc_tools.local.faults.injected import FaultKind, FaultSettings

from tests.support import chaos

pytestmark = [pytest.mark.e2e, pytest.mark.docling]

# High enough that 9 documents meet every kind of fault, low enough that no retry budget
# runs out (a step fails for good after 5 attempts: 0.25**5 is 0.1 %).
RATE = 0.25
SEED = 11


@pytest.fixture(scope="module")
def documents() -> list[chaos.Document]:
    return chaos.corpus(9, seed=3, sharded_every=4, broken_every=3)


@pytest.fixture(scope="module")
def reference(
    documents: list[chaos.Document], tmp_path_factory: pytest.TempPathFactory
) -> chaos.Outcome:
    log = tmp_path_factory.mktemp("chaos-reference") / "functions.log"
    with chaos.stack(log) as stack:
        return chaos.run(stack, documents, timeout_s=600)


def test_every_upload_ends_as_without_faults_and_nothing_is_lost(
    documents: list[chaos.Document], reference: chaos.Outcome, tmp_path: Path
) -> None:
    assert {d.kind for d in documents} == {"small", "broken", "unsupported", "sharded"}
    assert reference.lost == 0
    # Without faults, exactly one completion event per job's terminal change.
    assert [e.events for e in reference.ended.values()] == [1] * len(documents)
    with chaos.stack(tmp_path / "functions.log", faults=FaultSettings(RATE, SEED)) as stack:
        faulty = chaos.run(stack, documents, timeout_s=600)
    assert chaos.violations(reference, faulty) == []
    assert faulty.lost == 0
    kinds = {what.split(" (")[0] for what in faulty.injected}
    assert {str(FaultKind.THROTTLE), str(FaultKind.SERVER_ERROR)} <= kinds
    assert kinds & {str(FaultKind.CRASH), str(FaultKind.DROPPED), str(FaultKind.INVOKE_ERROR)}
    assert faulty.retried_invocations > 0
