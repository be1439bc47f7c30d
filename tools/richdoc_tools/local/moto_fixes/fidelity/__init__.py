"""Where stock moto is kinder than AWS, made as strict as AWS documents (see
``richdoc_tools.local.moto_fixes``). A strict embedded stack installs every fix of
``FIXES``, in order, on its ``ExitStack``, and the ``CONFIGURED`` ones it is asked for
with what they need; each module has ``PATCHED`` (the dotted paths it replaces) and
``install(exit_stack, ...)``.

* ``dynamodb_gsi_updates``: one global secondary index created or deleted an UpdateTable;
* ``dynamodb_client_tokens``: a TransactWriteItems sent again with its
  ``ClientRequestToken`` within ten minutes changes nothing again;
* ``dynamodb_index_lag`` (configured: ``EmbeddedStack(index_lag=...)``): a global
  secondary index shows a write some time after its table does.
"""

from __future__ import annotations

import contextlib

from richdoc_tools.local.moto_fixes.fidelity import (
    dynamodb_client_tokens,
    dynamodb_gsi_updates,
    dynamodb_index_lag,
)

FIXES = (dynamodb_gsi_updates, dynamodb_client_tokens)
CONFIGURED = (dynamodb_index_lag,)
# Every fix, for what holds them all (their tests against stock moto, the docs).
EVERY = (*FIXES, *CONFIGURED)


def install(exit_stack: contextlib.ExitStack) -> None:
    """Install every fix of ``FIXES`` until ``exit_stack`` closes."""
    for fix in FIXES:
        fix.install(exit_stack)
