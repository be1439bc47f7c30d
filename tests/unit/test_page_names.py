"""In the Lambda package a field named ``pages`` is a page range (``PageSpan``) and a count
of pages is ``page_count``: a reader never has to ask which one ``pages`` means. (The job
record keeps storing and printing its count as ``pages``, the name its items have always
had: ``Job.page_count`` is read and written under that alias.)"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import typing

import pydantic
import pytest

import richdoc
from richdoc.contracts import PageSpan
from richdoc.jobs import Job


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(richdoc.__path__, "richdoc."))


def _pages_annotations(cls: type) -> list[object]:
    """The annotations of ``cls``'s fields named ``pages`` (a dataclass's as written)."""
    if issubclass(cls, pydantic.BaseModel):
        return [field.annotation for name, field in cls.model_fields.items() if name == "pages"]
    assert dataclasses.is_dataclass(cls)
    return [field.type for field in dataclasses.fields(cls) if field.name == "pages"]


def _is_page_range(annotation: object) -> bool:
    """``PageSpan``, ``PageSpanText`` (an annotated PageSpan), or either or None."""
    if isinstance(annotation, str):  # postponed: a dataclass's annotation as written
        return "PageSpan" in annotation
    if annotation is PageSpan:
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return _is_page_range(args[0])
    return bool(args) and all(a is type(None) or _is_page_range(a) for a in args)


@pytest.mark.parametrize("module_name", _modules())
def test_a_field_named_pages_is_a_page_range(module_name: str) -> None:
    module = importlib.import_module(module_name)
    records = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and (issubclass(value, pydantic.BaseModel) or dataclasses.is_dataclass(value))
    ]
    counts = [
        f"{cls.__name__}.pages: {annotation}"
        for cls in records
        for annotation in _pages_annotations(cls)
        if not _is_page_range(annotation)
    ]
    assert counts == [], f"{module_name}: a count named pages (call it page_count): {counts}"


def test_the_job_record_stores_and_prints_its_page_count_as_pages() -> None:
    source = {"bucket": "b", "key": "k"}
    job = Job.from_item(
        {"job_id": "j", "job_status": "SUCCEEDED", "run": 1, "pages": 12, "source": source}
    )
    assert job.page_count == 12
    assert job.to_item()["pages"] == job.to_dict()["pages"] == 12
    assert "page_count" not in job.to_item() and "page_count" not in job.to_dict()
    # ... in the place of the field, as before the rename.
    printed = list(job.to_dict())
    fields = ["pages" if name == "page_count" else name for name in Job.model_fields]
    # then "progress" and "admission"
    assert printed[:-2] == [name for name in fields if name in printed]
