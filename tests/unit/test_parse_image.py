"""The parse function's container image, checked statically (no Docker engine here):
base image, handler, model weights location, and that the image holds every module the
handler imports and lists every third-party distribution they come from."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from richdoc.parse.settings import ARTIFACTS_ENV
from richdoc.parse.step import CONVERT_TARGET, INSPECTION_WARMUP, WARMUP
from richdoc.worker.client import ZYGOTE_MODULE
from tests.support.import_graph import runtime_imports
from tests.support.parse_image import image_env, instructions

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "functions" / "parse"
PACKAGE_SOURCE = ROOT / "layers" / "docling"
# The project's packages the image copies: the pipeline's, and the published models it
# writes (richdoc_client, also shipped in the layer and as the client distribution).
PACKAGES = ("richdoc", "richdoc_client")
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
    """The project's source files the handler and its worker reach, and the third-party
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
            if top in PACKAGES:
                parts = module.split(".")
                candidate = PACKAGE_SOURCE.joinpath(*parts).with_suffix(".py")
                package = PACKAGE_SOURCE.joinpath(*parts, "__init__.py")
                pending.append(candidate if candidate.exists() else package)
                pending.append(PACKAGE_SOURCE / top / "__init__.py")
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


def _requirements(name: str = "requirements.txt") -> list[Requirement]:
    lines = (FUNCTION / name).read_text().splitlines()
    return [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]


# Installed with --no-deps: the packages themselves, none of what they declare.
NO_DEPS = "requirements-nodeps.txt"


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


def test_the_image_holds_every_project_module_the_handler_imports():
    files, _ = _handler_closure()
    copied = _copies()
    for package in PACKAGES:
        assert copied[f"layers/docling/{package}"] == f"/var/task/{package}"
    packages = {PACKAGE_SOURCE / package for package in PACKAGES}
    for path in files - {FUNCTION / "app.py"}:
        assert path.is_file(), path
        assert packages & set(path.parents), path
    # The zygote runs as `python -m richdoc.worker.zygote` from the same directory.
    assert {_module_file(m) for m in WORKER_MODULES} <= files


def test_every_third_party_import_is_installed_by_the_requirements():
    _, third_party = _handler_closure()
    installed = (
        _requirement_closure(_requirements())
        | {canonicalize_name(req.name) for req in _requirements(NO_DEPS)}
        | BASE_IMAGE_DISTRIBUTIONS
    )
    distributions = importlib.metadata.packages_distributions()
    missing = {
        module: distributions.get(module)
        for module in third_party
        if not {canonicalize_name(d) for d in distributions.get(module, [])} & installed
    }
    assert not missing


# ---- the build context ------------------------------------------------------------------------


def _dockerignore_pattern(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as Docker matches it: Go's filepath.Match per path segment
    (``*`` and ``?`` stop at ``/``), ``**`` across segments."""
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            regex += ".*"
            i += 2
        elif pattern[i] == "*":
            regex += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            regex += "[^/]"
            i += 1
        else:
            regex += re.escape(pattern[i])
            i += 1
    return re.compile(regex + r"\Z")


def _sent_to_docker(path: str, patterns: list[str]) -> bool:
    """Whether a path of the context is sent: the last pattern matching the path, or one
    of its parent directories, decides; ``!`` patterns include again."""
    parts = path.split("/")
    sent = True
    for line in patterns:
        negated = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        regex = _dockerignore_pattern(pattern)
        prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        if any(regex.match(prefix) for prefix in prefixes):
            sent = negated
    return sent


def _dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_build_context_sends_only_what_the_image_copies() -> None:
    patterns = _dockerignore()
    # What a checkout holds besides the tracked files: environments, caches, builds.
    local = [
        ".venv/lib/python3.11/site-packages/torch/__init__.py",
        ".venv-sam/bin/sam",
        ".venv-checkov/bin/checkov",
        "node_modules/asl-validator/package.json",
        ".aws-sam/build/template.yaml",
        ".git/HEAD",
        ".pytest_cache/v/cache/lastfailed",
        "layers/docling/richdoc/__pycache__/artifacts.cpython-312.pyc",
        "bench/reports/latest.json",
    ]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    sent = {path for path in [*tracked, *local] if _sent_to_docker(path, patterns)}
    for path in local:
        assert path not in sent, path
    # Every COPY source (and the Dockerfile) is in the context, and nothing else is.
    copied = {source.rstrip("/") for source in _copies()}
    expected = {
        path
        for path in tracked
        if path == "functions/parse/Dockerfile"
        or any(path == source or path.startswith(source + "/") for source in copied)
    }
    assert sent == expected
    assert any(path.startswith("layers/docling/richdoc/") for path in sent)


# ---- OCR: the engine and its models come with the requirements -------------------------------


def test_the_image_installs_the_ocr_engine_at_the_versions_the_contract_names():
    from richdoc.parse.ocr.mode import engine_identity
    from richdoc.parse.settings import ParserSettings, Pipeline

    pins = {str(canonicalize_name(req.name)): str(req.specifier) for req in _requirements()}
    versions = engine_identity(ParserSettings(Pipeline.NATIVE).ocr_mode)["versions"]
    for name in ("rapidocr", "onnxruntime"):
        assert pins[name] == f"=={versions[name]}", name
        assert importlib.metadata.version(name) == versions[name]


def test_the_ocr_models_the_parse_pins_are_files_of_the_installed_engine():
    # No download step: the models are the rapidocr wheel's own, read where pip put them.
    from richdoc.parse.ocr.mode import MODEL_FILES

    spec = importlib.util.find_spec("rapidocr")
    assert spec is not None and spec.submodule_search_locations
    models = Path(next(iter(spec.submodule_search_locations))) / "models"
    for name in MODEL_FILES:
        assert (models / name).stat().st_size > 100_000, name


# ---- the light pipeline: its models come with packages installed without their deps ----------


def _modules_of(distribution: str) -> set[str]:
    """The top-level modules every file of an installed distribution imports."""
    files = importlib.metadata.files(distribution) or []
    imported: set[str] = set()
    for file in files:
        if file.suffix == ".py":
            imported |= {m.split(".")[0] for m in runtime_imports(Path(str(file.locate())))}
    return imported


def test_the_light_models_are_installed_without_their_deps_and_import_only_what_the_image_has():
    runs = [rest for op, rest in instructions() if op == "RUN"]
    [install] = [run for run in runs if NO_DEPS.replace(".txt", "") in run]
    assert "--no-deps" in shlex.split(install)
    makefile = (ROOT / "Makefile").read_text()
    assert f"--no-deps -r functions/parse/{NO_DEPS}" in makefile
    installed = _requirement_closure(_requirements()) | BASE_IMAGE_DISTRIBUTIONS
    # Their own modules, and rapid-layout's other inference engine (imported only when it
    # is chosen; the light pipeline runs onnxruntime).
    own = {"rapid_layout", "rapid_table", "openvino"}
    distributions = importlib.metadata.packages_distributions()
    for req in _requirements(NO_DEPS):
        assert importlib.metadata.version(req.name) in req.specifier, req
        needed = {
            module
            for module in _modules_of(req.name) - own
            if module not in sys.stdlib_module_names and module != "__future__"
        }
        missing = {
            module
            for module in needed
            if not {canonicalize_name(d) for d in distributions.get(module, [])} & installed
        }
        assert not missing, (req.name, missing)
        # the non-headless OpenCV they declare is what --no-deps keeps out
        assert "opencv-python" not in installed


def test_the_light_models_pinned_by_path_are_files_of_the_installed_packages():
    from richdoc.parse.cdla_layout import bundled_model as layout_model
    from richdoc.parse.slanet_tables import bundled_model as table_model

    for model in (layout_model(), table_model()):
        assert model.stat().st_size > 1_000_000, model


def test_the_light_contract_names_the_installed_model_packages():
    from richdoc.formats import DocFormat
    from richdoc.parse.settings import Pipeline, processor_contract

    pins = {str(canonicalize_name(r.name)): str(r.specifier) for r in _requirements(NO_DEPS)}
    assert pins == {"rapid-layout": "==1.2.1", "rapid-table": "==0.3.0"}
    assert processor_contract(DocFormat.PDF, Pipeline.LIGHT) != processor_contract(
        DocFormat.PDF, Pipeline.NATIVE
    )
