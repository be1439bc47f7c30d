"""The committed JSON Schemas (schemas/) as validators, for tests in any lane."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from richdoc_client.schemas import PUBLISHED
from tests.support.paths import ROOT

SCHEMAS = ROOT / "schemas"
BY_NAME = {published.name: published for published in PUBLISHED}


@cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / BY_NAME[name].file_name).read_bytes())
    return Draft202012Validator(schema)


def schema_errors(name: str, document: Any) -> list[str]:
    """Where ``document`` fails the committed schema ``name`` (projection, detection, ...)."""
    return [error.message for error in validator(name).iter_errors(document)]
