"""richdoc_tools.weights: weights made here for docling's standard PDF pipeline."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from richdoc_tools.weights import (
    LAYOUT_LABELS,
    TABLEFORMER_DIR,
    TABLEFORMER_WEIGHTS,
    synthesize,
    synthesize_layout,
)

from richdoc.parse.settings import (
    ARTIFACTS_ENV,
    LAYOUT_MODEL_DIR,
    ParserSettings,
    Pipeline,
    has_model_weights,
    select_pdf_pipeline,
)

pytestmark = [pytest.mark.docling, pytest.mark.slow]

LAYOUT_FILES = {"config.json", "preprocessor_config.json", "model.safetensors"}
TABLE_FILES = {"tm_config.json", TABLEFORMER_WEIGHTS}


def _digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_auto_picks_the_standard_pipeline_with_the_synthesised_weights(model_weights):
    assert has_model_weights(str(model_weights))
    assert select_pdf_pipeline("auto", str(model_weights)) is Pipeline.STANDARD
    settings = ParserSettings.from_env({ARTIFACTS_ENV: str(model_weights)})
    assert settings == ParserSettings(Pipeline.STANDARD, str(model_weights))


def test_the_files_lie_where_the_download_puts_them_at_the_published_sizes(model_weights):
    layout = model_weights / LAYOUT_MODEL_DIR
    table = model_weights / TABLEFORMER_DIR
    assert {p.name for p in layout.iterdir()} == LAYOUT_FILES
    assert {p.name for p in table.iterdir()} == TABLE_FILES
    # The same tensors, names and shapes as the published weights: the same bytes count.
    assert (layout / "model.safetensors").stat().st_size == 171_658_996
    assert (table / TABLEFORMER_WEIGHTS).stat().st_size == 212_758_388
    assert (layout / "preprocessor_config.json").stat().st_size == 444


def test_the_layout_labels_are_docling_s(model_weights):
    from docling_core.types.doc import DocItemLabel

    config = json.loads((model_weights / LAYOUT_MODEL_DIR / "config.json").read_text())
    assert config["architectures"] == ["RTDetrV2ForObjectDetection"]
    id2label = {int(k): v for k, v in config["id2label"].items()}
    assert [id2label[i] for i in range(len(id2label))] == list(LAYOUT_LABELS)
    assert all(DocItemLabel[label.upper()] for label in LAYOUT_LABELS)


def test_the_same_seed_gives_the_same_bytes(model_weights, tmp_path):
    assert _digests(synthesize(tmp_path / "again", seed=0)) == _digests(model_weights)


def test_another_seed_or_label_gives_other_weights(model_weights, tmp_path):
    weights = f"{LAYOUT_MODEL_DIR}/model.safetensors"
    synthesize_layout(tmp_path / "seed1" / LAYOUT_MODEL_DIR, seed=1)
    synthesize_layout(tmp_path / "table" / LAYOUT_MODEL_DIR, seed=0, label="table")
    ours = _digests(model_weights)[weights]
    assert _digests(tmp_path / "seed1")[weights] != ours
    assert _digests(tmp_path / "table")[weights] != ours
