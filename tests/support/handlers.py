"""A function's handler module (functions/<name>/app.py) loaded fresh, as Lambda loads it
in a new execution environment: its module-level wiring reads the environment then."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from tests.support.paths import ROOT


def load_handler(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"{name}_app", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module
