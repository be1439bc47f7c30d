"""``undated`` under ``contracts-v2``: no date at all in a document of at least 200 UTF-8
bytes (docs/detection.md, "contracts-v2: undated").

Every date counts, whatever its role, but a numeric date in a filing service's or a
court's page stamp: it dates the filing, not the document. Every date ``spec-v1`` reads
is in a written form no stamp is exempted in, so a text ``spec-v1`` finds a date in is
never undated here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from richdoc.detection import findings
from richdoc_client.detection import Ambiguity

if TYPE_CHECKING:
    from richdoc.detection.contracts import Evidence


def undated(evidence: Evidence) -> Ambiguity | None:
    if evidence.dated or evidence.text_bytes < findings.UNDATED_MIN_BYTES:
        return None
    return findings.undated()
