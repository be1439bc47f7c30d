"""The parse function's Dockerfile, read: its instructions and the environment it sets.
The image is never built here (no Docker engine); tests check it statically and run the
handlers with the environment it gives them."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.support.paths import ROOT

DOCKERFILE = ROOT / "functions" / "parse" / "Dockerfile"


def instructions(dockerfile: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(instruction, the rest of it), continuation lines joined, comments left out."""
    text = dockerfile.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def image_env(dockerfile: Path = DOCKERFILE) -> dict[str, str]:
    """Every variable its ENV instructions set, as the image's processes see them."""
    env: dict[str, str] = {}
    for op, rest in instructions(dockerfile):
        if op == "ENV":
            env.update(item.partition("=")[::2] for item in shlex.split(rest))
    return env
