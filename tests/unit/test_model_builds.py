"""Every pydantic model of the Lambda package and the published models is built when its
module is imported, never lazily on first use.

pydantic builds a deferred or incomplete model (``defer_build``, or a forward reference
it could not resolve at class creation) on its first validation, and that build is not
thread-safe in the pydantic this project pins (fixed upstream in 2.14, which
aws-sam-translator does not yet admit): two threads validating the model for the first
time at once can get the parent's validator ("BaseModel cannot be instantiated directly").
Handlers that run side by side as threads (the embedded stack) or start threads of their
own would dead-letter a valid document as internal at random.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pydantic
import pytest

import richdoc
import richdoc_client


def modules(package: ModuleType) -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."))


@pytest.mark.parametrize("module_name", [*modules(richdoc), *modules(richdoc_client)])
def test_every_model_is_complete_once_its_module_is_imported(module_name: str) -> None:
    module = importlib.import_module(module_name)
    lazy = [
        name
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, pydantic.BaseModel)
        and value.__module__ == module.__name__
        and not value.__pydantic_complete__
    ]
    assert lazy == [], f"{module_name}: built on first use, not at import: {lazy}"
