"""The mark of a test that asserts, against stock moto, what AWS does where a fix of
``richdoc_tools.local.moto_fixes.fidelity`` makes moto do it.

Such a test fails while moto still differs (an expected failure, with the exception by
which it differs: any other exception is a real failure, moto having changed in a way
the fix must be ported to), and passes once a moto release behaves as AWS does, which a
strict xfail reports as a failure of the suite whose reason says to delete the fix.
"""

from __future__ import annotations

import pytest

DELETE_THE_FIX = (
    "An unexpected pass means a moto release now behaves as AWS does: delete the fix, "
    "its tests and its row in docs/moto-fixes.md."
)


def moto_differs(
    does: str, raises: type[BaseException] | tuple[type[BaseException], ...] = AssertionError
) -> pytest.MarkDecorator:
    """Mark a ``test_stock_moto_...`` test: stock moto ``does`` otherwise than AWS, and
    the test fails with ``raises`` while it does."""
    return pytest.mark.xfail(
        strict=True, raises=raises, reason=f"stock moto {does}. {DELETE_THE_FIX}"
    )
