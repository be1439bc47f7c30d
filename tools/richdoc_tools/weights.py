"""Model weights made here for docling's standard PDF pipeline, with no model hub.

``synthesize(directory, seed)`` writes seeded, randomly initialised weights with the real
architectures and configurations of the two models the parse image downloads
(``docling-tools models download layout tableformer``), in the folders that command
creates, so that ``DOCLING_ARTIFACTS_PATH=directory`` makes ``RICHDOC_PDF_PIPELINE=auto``
pick the standard pipeline:

- ``docling-project--docling-layout-heron/``: the layout model "heron", a transformers
  RT-DETRv2 with a ResNet-50 backbone and docling's 17 layout labels (``config.json``,
  ``preprocessor_config.json``, ``model.safetensors``: 42.8 M parameters, 171,658,996
  bytes, the size of the published file);
- ``docling-project--docling-models/model_artifacts/tableformer/accurate/``: TableFormer
  (``TableModel04_rs``, 6 encoder and 6 decoder layers; ``tm_config.json``,
  ``tableformer_accurate.safetensors``: 52.6 M parameters, 212,758,388 bytes, again the
  published size).

What they prove: the pipeline's plumbing (loading, stages, threads, queues), the models'
memory and the time of every forward pass are those of the real models, whose tensors
have the same shapes. What they cannot: layout quality, and with it the work after the
models. Random weights detect the same label on every one of the 300 queries of every
page (``_detect_everything_as`` makes that label a choice: ``text`` by default, ``table``
to make TableFormer run on every page), where the real model finds tens of regions of
several labels; TableFormer's random decoder ends a table after however many tags its
argmax happens to take. The stages after the layout model therefore cost what that load
costs, not what a real document would, and the documents say nothing about headings or
tables. The same seed and label give the same bytes (on the same torch and transformers
versions). Never committed: ``cached`` makes them into a cache in a few seconds;
``richdoc models synthesize DIR`` writes them for people.

Not written: the ONNX export of heron and the "fast" TableFormer, which the download also
fetches but the standard pipeline (transformers engine, accurate mode) never reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from richdoc.parse.settings import LAYOUT_MODEL_DIR, TABLE_MODEL_DIR

# docling's layout labels in heron's class order; each upper-cases to a DocItemLabel name
# (docling's LayoutObjectDetectionModel maps them so).
LAYOUT_LABELS = (
    "caption",
    "footnote",
    "formula",
    "list_item",
    "page_footer",
    "page_header",
    "picture",
    "section_header",
    "table",
    "text",
    "title",
    "document_index",
    "code",
    "checkbox_selected",
    "checkbox_unselected",
    "form",
    "key_value_region",
)
TABLEFORMER_DIR = Path(TABLE_MODEL_DIR, "model_artifacts", "tableformer", "accurate")
TABLEFORMER_WEIGHTS = "tableformer_accurate.safetensors"


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LayoutPreprocessorConfig(_Config):
    """heron's ``preprocessor_config.json``: RT-DETR's processor at 640 x 640, rescaled to
    [0, 1], not normalised."""

    image_processor_type: str = "RTDetrImageProcessor"
    do_convert_annotations: bool = True
    do_normalize: bool = False
    do_pad: bool = False
    do_rescale: bool = True
    do_resize: bool = True
    format: str = "coco_detection"
    image_mean: tuple[float, float, float] = (0.485, 0.456, 0.406)
    image_std: tuple[float, float, float] = (0.229, 0.224, 0.225)
    pad_size: None = None
    resample: int = 2  # bilinear
    rescale_factor: float = 1 / 255
    size: dict[str, int] = {"height": 640, "width": 640}


class _Normalization(_Config):
    state: bool = True
    mean: tuple[float, float, float] = (0.94247851, 0.94254675, 0.94292611)
    std: tuple[float, float, float] = (0.17910956, 0.17940403, 0.17931663)


class _TableDataset(_Config):
    type: str = "PTN_prepared"
    name: str = "PubTabNet_300_100_512"
    resized_image: int = 448
    image_normalization: _Normalization = _Normalization()


class _TableModel(_Config):
    """The architecture: ``TableModel04_rs`` as the accurate model is configured."""

    type: str = "TableModel04_rs"
    name: str = "14_128_256_4_true"
    backbone: str = "resnet18"
    enc_image_size: int = 28
    tag_embed_dim: int = 16
    hidden_dim: int = 512
    tag_decoder_dim: int = 512
    bbox_embed_dim: int = 256
    tag_attention_dim: int = 256
    bbox_attention_dim: int = 512
    enc_layers: int = 6
    dec_layers: int = 6
    nheads: int = 8
    dropout: float = 0.1
    bbox_classes: int = 2


class _TableTrain(_Config):
    bbox: bool = True


class _TablePredict(_Config):
    max_steps: int = 1024
    beam_size: int = 5
    bbox: bool = True
    pdf_cell_iou_thres: float = 0.05
    padding: bool = False
    padding_size: int = 50
    disable_post_process: bool = False
    profiling: bool = False


# The OTSL tags TableFormer predicts; the vocabulary size fixes the decoder's shapes.
OTSL_TAGS = (
    "<pad>",
    "<unk>",
    "<start>",
    "<end>",
    "ecel",
    "fcel",
    "lcel",
    "ucel",
    "xcel",
    "nl",
    "ched",
    "rhed",
    "srow",
)


class _WordMap(_Config):
    word_map_tag: dict[str, int] = {tag: index for index, tag in enumerate(OTSL_TAGS)}


class TableFormerConfig(_Config):
    """The parts of TableFormer's ``tm_config.json`` that docling-ibm-models reads when
    it predicts (training-only sections and the unused cell vocabulary are left out)."""

    dataset: _TableDataset = _TableDataset()
    model: _TableModel = _TableModel()
    train: _TableTrain = _TableTrain()
    predict: _TablePredict = _TablePredict()
    dataset_wordmap: _WordMap = _WordMap()


def synthesize(directory: Path, seed: int = 0, *, label: str = "text") -> Path:
    """Write both models' folders under ``directory`` (created if missing); the layout
    model detects everything as ``label`` (one of ``LAYOUT_LABELS``)."""
    synthesize_layout(directory / LAYOUT_MODEL_DIR, seed, label)
    synthesize_tableformer(directory / TABLEFORMER_DIR, seed)
    return directory


def synthesize_layout(folder: Path, seed: int, label: str = "text") -> None:
    import torch
    from transformers import RTDetrV2Config, RTDetrV2ForObjectDetection

    config = RTDetrV2Config(
        id2label=dict(enumerate(LAYOUT_LABELS)),
        label2id={name: index for index, name in enumerate(LAYOUT_LABELS)},
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = RTDetrV2ForObjectDetection(config)
    _detect_everything_as(model, label)
    with _quiet_transformers():
        model.save_pretrained(folder)
    _write_json(folder / "preprocessor_config.json", LayoutPreprocessorConfig())


# The score every query gets for the label it is given (sigmoid 0.99) and for the others
# (sigmoid 2e-9): far on either side of docling's layout threshold, 0.3.
_CHOSEN_LOGIT = 5.0
_OTHER_LOGIT = -20.0


def _detect_everything_as(model: Any, label: str) -> None:
    """Set the final classification head so that every query is detected, as ``label``.

    With every weight random, the decoder's 300 query states come out nearly identical
    (cosine 0.998 to their mean after its final layer norm, and the same on every page),
    so a random head gives all queries the same label and a score on the same side of the
    threshold: detections are all or nothing, whatever the head. This makes the outcome
    chosen instead of an accident of the seed: 300 boxes a page (the model's maximum; the
    postprocessing merges the overlapping ones), all of ``label``. The boxes stay random.
    Both tied copies of the head are set."""
    import torch

    index = LAYOUT_LABELS.index(label)
    with torch.no_grad():
        for layer in (model.class_embed[-1], model.model.decoder.class_embed[-1]):
            layer.weight.zero_()
            layer.bias.fill_(_OTHER_LOGIT)
            layer.bias[index] = _CHOSEN_LOGIT


def synthesize_tableformer(folder: Path, seed: int) -> None:
    import torch
    from docling_ibm_models.tableformer.models.table04_rs.tablemodel04_rs import (
        TableModel04_rs,
    )
    from safetensors.torch import save_model

    config = TableFormerConfig()
    # docling sets model.save_dir to the folder when it loads; the model keeps it only.
    loaded = config.model_dump(mode="json")
    loaded["model"]["save_dir"] = str(folder)
    init_data = {"word_map": config.dataset_wordmap.model_dump()}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TableModel04_rs(loaded, init_data, "cpu")  # type: ignore[no-untyped-call]
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / "tm_config.json", config)
    save_model(model, str(folder / TABLEFORMER_WEIGHTS))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Writing model shards" progress bar on the caller's terminal."""
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _write_json(path: Path, config: BaseModel) -> None:
    path.write_text(json.dumps(config.model_dump(mode="json"), indent=2) + "\n")


# The cache --------------------------------------------------------------------------------

_VERSIONED = ("torch", "transformers", "safetensors", "docling-ibm-models")


def cache_key(seed: int, label: str = "text") -> str:
    """``<label>-<seed>-<digest>``: the bytes depend on the seed, the label, this module
    and the libraries that build and write the models."""
    identity = {
        "source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        "versions": {name: importlib.metadata.version(name) for name in _VERSIONED},
    }
    canonical = json.dumps(identity, sort_keys=True).encode()
    return f"{label}-{seed}-{hashlib.sha256(canonical).hexdigest()[:16]}"


def cached(root: Path, seed: int = 0, *, label: str = "text") -> Path:
    """The weights for ``seed`` and ``label`` under ``root``, synthesised on first use.

    Safe for concurrent callers (pytest-xdist workers): each builds in its own folder
    and renames it into place; a loser discards its copy. Older weights of the same seed
    and label (made by another version of this module or of the libraries) are removed."""
    key = cache_key(seed, label)
    final = root / key
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    building = root / f".{key}.{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    synthesize(building, seed, label=label)
    try:
        building.rename(final)
    except OSError:
        shutil.rmtree(building, ignore_errors=True)  # another process was first
        if not final.is_dir():
            raise
    for stale in root.glob(f"{label}-{seed}-*"):
        if stale.name != key:
            shutil.rmtree(stale, ignore_errors=True)
    return final
