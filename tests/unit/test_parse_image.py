"""The parse function's container image, checked statically (no Docker engine here):
base image, handler, model weights location, and that the image holds every module the
handler imports and lists every third-party distribution they come from."""

from __future__ import annotations

import ast
import importlib.metadata
import shlex
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from richdoc.parse.settings import ARTIFACTS_ENV
from richdoc.parse.step import CONVERT_TARGET, INSPECTION_WARMUP, WARMUP
from richdoc.worker.client import ZYGOTE_MODULE
from tests.support.parse_image import image_env, instructions
from tests.support.runtime_imports import runtime_imports

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "functions" / "parse"
PACKAGE_SOURCE = ROOT / "layers" / "docling"
# The Lambda Python base image ships boto3 (and with it botocore).
BASE_IMAGE_DISTRIBUTIONS = {"boto3", "botocore", "s3transfer", "jmespath", "urllib3"}


def _copies() -> dict[str, str]:
    """Source path in the build context -> destination in the image."""
    copies = {}
    for op, rest in instructions():
        if op == "COPY":
            *sources, dest = shlex.split(rest)
            for source in sources:
                copies[source] = dest.replace("${LAMBDA_TASK_ROOT}", "/var/task")
    return copies


def _module_file(module: str) -> Path:
    return PACKAGE_SOURCE.joinpath(*module.split(".")).with_suffix(".py")


# What the image runs besides the handler: the worker's zygote (`python -m`) and the
# warm-up and target it resolves by name.
WORKER_MODULES = [
    ZYGOTE_MODULE,
    *(ref.partition(":")[0] for ref in (WARMUP, INSPECTION_WARMUP, CONVERT_TARGET)),
]


def _handler_closure() -> tuple[set[Path], set[str]]:
    """The richdoc source files the handler and its worker reach, and the third-party
    top-level modules they import."""
    files: set[Path] = set()
    third_party: set[str] = set()
    pending = [FUNCTION / "app.py", *(_module_file(m) for m in WORKER_MODULES)]
    while pending:
        path = pending.pop()
        if path in files:
            continue
        files.add(path)
        for module in runtime_imports(path):
            top = module.split(".")[0]
            if top == "richdoc":
                parts = module.split(".")
                candidate = PACKAGE_SOURCE.joinpath(*parts).with_suffix(".py")
                package = PACKAGE_SOURCE.joinpath(*parts, "__init__.py")
                pending.append(candidate if candidate.exists() else package)
                pending.append(PACKAGE_SOURCE / "richdoc" / "__init__.py")
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.add(top)
    return files, third_party


def _requirement_closure(requirements: list[Requirement]) -> set[str]:
    """Distribution names installed by these requirements, with their dependencies."""
    seen: set[str] = set()
    pending = [(req, frozenset(req.extras)) for req in requirements]
    while pending:
        req, extras = pending.pop()
        name = canonicalize_name(req.name)
        key = f"{name}[{','.join(sorted(extras))}]"
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        try:
            requires = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for spec in map(Requirement, requires):
            environments = [{"extra": extra} for extra in extras] or [{"extra": ""}]
            if spec.marker is None or any(spec.marker.evaluate(env) for env in environments):
                pending.append((spec, frozenset(spec.extras)))
    return {name for name in seen if "[" not in name}


def _requirements() -> list[Requirement]:
    lines = (FUNCTION / "requirements.txt").read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


def test_the_image_builds_on_the_lambda_python_base_image():
    assert instructions()[0] == ("FROM", "public.ecr.aws/lambda/python:3.12")


def test_the_image_runs_the_handler():
    assert instructions()[-1] == ("CMD", '["app.handler"]')
    assert _copies()["functions/parse/app.py"] == "/var/task/"
    assert "handler" in {
        node.name
        for node in ast.parse((FUNCTION / "app.py").read_text()).body
        if isinstance(node, ast.FunctionDef)
    }


def test_model_weights_are_downloaded_at_build_time_where_the_handler_looks():
    env = image_env()
    runs = [rest for op, rest in instructions() if op == "RUN"]
    download = [run for run in runs if "docling-tools models download" in run]
    assert len(download) == 1
    words = shlex.split(download[0])
    assert {"layout", "tableformer"} <= set(words)
    assert words[words.index("-o") + 1] == f"${{{ARTIFACTS_ENV}}}"
    assert env[ARTIFACTS_ENV].startswith("/")
    assert env["HF_HUB_OFFLINE"] == "1"


def test_hub_access_is_switched_off_only_after_the_download():
    order = [
        ("download" if "models download" in rest else "offline" if "HF_HUB_OFFLINE" in rest else "")
        for _, rest in instructions()
    ]
    assert order.index("download") < order.index("offline")


def test_torch_comes_from_the_cpu_index_pinned_like_the_requirements():
    pins = {str(canonicalize_name(req.name)): str(req.specifier) for req in _requirements()}
    [torch_run] = [rest for op, rest in instructions() if op == "RUN" and "torch==" in rest]
    assert "--index-url https://download.pytorch.org/whl/cpu" in torch_run
    for name in ("torch", "torchvision"):
        assert f"{name}{pins[name]}" in torch_run.split()


def test_the_image_holds_every_richdoc_module_the_handler_imports():
    files, _ = _handler_closure()
    copied = _copies()
    assert copied["layers/docling/richdoc"] == "/var/task/richdoc"
    package = PACKAGE_SOURCE / "richdoc"
    for path in files - {FUNCTION / "app.py"}:
        assert path.is_file(), path
        assert package in path.parents, path
    # The zygote runs as `python -m richdoc.worker.zygote` from the same directory.
    assert {_module_file(m) for m in WORKER_MODULES} <= files


def test_every_third_party_import_is_installed_by_the_requirements():
    _, third_party = _handler_closure()
    installed = _requirement_closure(_requirements()) | BASE_IMAGE_DISTRIBUTIONS
    distributions = importlib.metadata.packages_distributions()
    missing = {
        module: distributions.get(module)
        for module in third_party
        if not {canonicalize_name(d) for d in distributions.get(module, [])} & installed
    }
    assert not missing
