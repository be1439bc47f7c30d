"""Changes to moto's own behaviour: debts to moto, kept apart from the stack's seams
(``local.patches``).

``fidelity``: where stock moto is kinder than AWS, made as strict as AWS documents. Each
fix is one module that says what moto does, what AWS does (with the AWS documentation
page) and how it is fixed, and has a behavioural test against stock moto
(``tests/aws/moto_fixes/``) that is expected to fail while moto still differs and turns
into a failure of the suite once a moto release behaves as AWS does: then the fix is
deleted. docs/moto-fixes.md lists them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any
from unittest import mock


def replace(
    exit_stack: contextlib.ExitStack, owner: object, name: str, wrap: Callable[[Any], Any]
) -> None:
    """``owner.name`` (a class's attribute as the class stores it, the emulation's patch
    of it if any) replaced by what ``wrap`` makes of it, until ``exit_stack`` closes."""
    exit_stack.enter_context(mock.patch.object(owner, name, wrap(vars(owner)[name])))
