"""PyPI's torchvision beside the CPU build of torch, in the development environment.

PyPI's torchvision wheels for Linux x86_64 are CUDA builds: their compiled operators
(``torchvision/_C.so``) link ``libtorch_cuda.so``, which the CPU torch that ``make setup``
installs does not have, so they do not load. torchvision is written to run without them
(``torchvision.extension._has_ops()`` is then False and each compiled operator, such as
``nms`` or ``roi_align``, raises torchvision's own "Couldn't load custom C++ ops" when
called), except for one thing: ``torchvision._meta_registrations`` registers fake kernels
for ``torchvision::nms`` and ``torchvision::qnms`` unconditionally, and registering a
kernel for an operator that was never defined fails the whole ``import torchvision``
("operator torchvision::nms does not exist").

This hook defines those two operator schemas, with no kernel, just before that module
runs, and only when torchvision's compiled operators did not load. Nothing else changes:
the layout model's image processor (transformers' torchvision backend) and TableFormer
(ResNet blocks, ``box_area``, transforms) use only torchvision's Python code, and
``tests/parse/test_standard_pipeline.py`` runs the standard PDF pipeline through them. Calling a
compiled operator still fails as torchvision says it does.

``make setup`` installs the hook into the virtual environment as a ``.pth`` line
(``python -m richdoc_tools.torchvision_compat``), so every interpreter of that environment
(pytest, the parse worker's zygote, the benchmarks) imports torchvision the same way. The
parse image installs the CPU torchvision that matches its torch and never has this file.
"""

from __future__ import annotations

import importlib.abc
import sys
import sysconfig
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

_TRIGGER = "torchvision._meta_registrations"
# The schemas torchvision's compiled library would have defined (csrc/ops/nms.cpp and
# csrc/ops/quantized/cpu/qnms_kernel.cpp); only their names matter to the registrations.
_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
PTH_NAME = "richdoc-torchvision-compat.pth"
PTH_LINE = "import richdoc_tools.torchvision_compat as h; h.install_hook()\n"

# The torch.library.Library that holds the definitions: they last as long as it does.
_library: Any = None


class _Finder(importlib.abc.MetaPathFinder):
    """Runs once, when torchvision imports ``_meta_registrations`` (after
    ``torchvision.extension`` has tried to load the compiled operators), and leaves the
    import itself to the regular finders."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname == _TRIGGER:
            sys.meta_path.remove(self)
            define_missing_operators()
        return None


def define_missing_operators() -> bool:
    """Define the operator schemas ``_meta_registrations`` needs when torchvision's
    compiled operators did not load; True when it did."""
    global _library
    extension = sys.modules.get("torchvision.extension")
    if _library is not None or extension is None or extension._has_ops():
        return False
    import torch

    _library = torch.library.Library("torchvision", "DEF")  # type: ignore[no-untyped-call]
    for schema in _SCHEMAS:
        _library.define(schema)
    return True


def install_hook() -> None:
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def install_pth(site_packages: Path | None = None) -> Path:
    """Write the ``.pth`` line that installs the hook at every interpreter start."""
    target = Path(site_packages or sysconfig.get_path("purelib")) / PTH_NAME
    target.write_text(PTH_LINE)
    return target


if __name__ == "__main__":
    print(f"installed {install_pth()}")
