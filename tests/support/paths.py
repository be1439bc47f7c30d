"""Where things are in the checkout, for tests in any lane."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
DEFINITION_PATH = ROOT / "statemachine" / "pipeline.asl.json"
TESTS = ROOT / "tests"
DATA = TESTS / "data"
