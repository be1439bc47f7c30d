"""The light pipeline's onnxruntime sessions, built in the parse child.

onnxruntime starts a thread when it is imported, and the zygote must stay single-threaded
to fork: so a model's session is built lazily, in the child, on its first page, with the
child's share of the CPUs (``ChildSession``), and its threads sleep rather than spin
between operators (``calm_session``: two spinning threads spent about twice the CPU of one
on the same pages, measured).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import onnxruntime

EngineT = TypeVar("EngineT")


def wheel_model(package: str, model_file: str) -> Path:
    """Where the ``package`` wheel keeps ``model_file`` (its ``models`` folder), found
    without importing the package: its import loads onnxruntime."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"{package} is not installed: the light pipeline needs it")
    return Path(next(iter(spec.submodule_search_locations))) / "models" / model_file


def calm_session(model: Path, threads: int) -> onnxruntime.InferenceSession:
    """An onnxruntime CPU session of ``model`` on ``threads`` threads that sleep rather
    than spin while they wait (spinning threads bill their wait as CPU time)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )


class ChildSession(Generic[EngineT]):
    """A model's engine, built on first use by ``build(threads)``; ``use_threads`` (in the
    child, before a conversion) sets the threads, and an engine built for another count
    is built again."""

    def __init__(self, build: Callable[[int], EngineT], threads: int) -> None:
        self._build = build
        self._threads = max(1, threads)
        self._engine: EngineT | None = None

    def use_threads(self, threads: int) -> None:
        if threads != self._threads:
            self._engine = None
            self._threads = threads

    def engine(self) -> EngineT:
        if self._engine is None:
            self._engine = self._build(self._threads)
        return self._engine
