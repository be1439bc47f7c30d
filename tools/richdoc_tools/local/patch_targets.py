"""Patch targets named by dotted paths, replaced on the stack's ``ExitStack``.

The one way the stack's seams (``local.patches``) and the changes to moto
(``local.moto_fixes``) replace what they patch; it knows neither of them."""

from __future__ import annotations

import contextlib
import functools
import pkgutil
from collections.abc import Callable
from typing import Any, ParamSpec, TypeAlias, TypeVar
from unittest import mock

P = ParamSpec("P")
R = TypeVar("R")

# What a dotted path names, as its owner stores it (a function, a staticmethod, a
# property, a module): found at run time, so only the caller, which hands it to a typed
# wrapper, can say what it is.
Attribute: TypeAlias = Any


def owner(target: str) -> tuple[object, str]:
    """``"package.module.Class.attribute"`` -> (the class or module, "attribute")."""
    path, _, attribute = target.rpartition(".")
    return pkgutil.resolve_name(path), attribute


def original(target: str) -> Attribute:
    """The attribute as its owner stores it (a staticmethod stays one), patched or not;
    None when the owner has none (a patch that adds what moto lacks)."""
    cls_or_module, attribute = owner(target)
    return vars(cls_or_module).get(attribute)


def replace(exit_stack: contextlib.ExitStack, target: str, new: object) -> None:
    """``target`` is ``new`` until ``exit_stack`` closes."""
    cls_or_module, attribute = owner(target)
    exit_stack.enter_context(mock.patch.object(cls_or_module, attribute, new))


def add(exit_stack: contextlib.ExitStack, target: str, new: object) -> None:
    """``target``, which moto lacks, is ``new`` until ``exit_stack`` closes (and then gone
    again)."""
    cls_or_module, attribute = owner(target)
    exit_stack.enter_context(mock.patch.object(cls_or_module, attribute, new, create=True))


def locked(
    function: Callable[P, R], lock: contextlib.AbstractContextManager[object]
) -> Callable[P, R]:
    """``function``, called under ``lock``."""

    @functools.wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with lock:
            return function(*args, **kwargs)

    return call
