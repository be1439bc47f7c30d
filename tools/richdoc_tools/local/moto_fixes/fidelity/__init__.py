"""Where stock moto is kinder than AWS, made as strict as AWS documents (see
``richdoc_tools.local.moto_fixes``). A strict embedded stack installs every fix of
``FIXES``, in order, on its ``ExitStack``; each module has ``PATCHED`` (the dotted paths it
replaces) and ``install(exit_stack)``."""

from __future__ import annotations

import contextlib

from richdoc_tools.local.moto_fixes.fidelity import dynamodb_gsi_updates

FIXES = (dynamodb_gsi_updates,)


def install(exit_stack: contextlib.ExitStack) -> None:
    """Install every fix until ``exit_stack`` closes."""
    for fix in FIXES:
        fix.install(exit_stack)
