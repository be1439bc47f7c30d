"""What ships to Lambda stays apart from the tools for people.

The layer and the parse image carry only the ``richdoc`` package; the CLI, the embedded
stack and the operator tools (``richdoc_tools``) need moto, samtranslator and rich, which
do not exist in Lambda. The parse step's caller side (the handler process) must not pay
for docling either: only the isolated worker imports it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.runtime_imports import runtime_imports

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "docling"
FUNCTIONS = ROOT / "functions"

# Installed here for the tools and tests; absent from every Lambda function. docling
# itself is only in the parse image, and there only the worker may import it.
NOT_IN_LAMBDA = ("moto", "samtranslator", "rich", "pytest", "richdoc_tools", "docling")
# Type stubs for mypy: installed for development only.
STUB_PREFIX = "types_boto3"


def _not_in_lambda(module: str) -> bool:
    top = module.split(".")[0]
    return top in NOT_IN_LAMBDA or top.startswith(STUB_PREFIX)


def _run_isolated(script: str, *, path: list[Path]) -> dict[str, object]:
    """Run ``script`` in a fresh interpreter that sees only ``path`` first and refuses to
    import NOT_IN_LAMBDA; the script prints one JSON object."""
    prelude = textwrap.dedent(
        f"""
        import importlib.abc, json, sys
        BLOCKED = {NOT_IN_LAMBDA!r}

        class _NotInLambda(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                top = name.split(".")[0]
                if top in BLOCKED or top.startswith({STUB_PREFIX!r}):
                    raise ModuleNotFoundError(f"{{name}} is not available in Lambda")
                return None

        sys.meta_path.insert(0, _NotInLambda())
        sys.path[:0] = {[str(p) for p in path]!r}
        """
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "JOBS_TABLE": "jobs",
        "ARTIFACT_BUCKET": "artifacts",
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:pipeline",
        "DEAD_LETTER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/dlq",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def test_every_lambda_module_and_handler_imports_without_the_tools_dependencies() -> None:
    imported = _run_isolated(
        """
        import importlib, importlib.util, pkgutil
        import richdoc

        modules = [m.name for m in pkgutil.walk_packages(richdoc.__path__, "richdoc.")]
        for name in modules:
            importlib.import_module(name)
        handlers = []
        for app in sorted(__import__("pathlib").Path("functions").glob("*/app.py")):
            spec = importlib.util.spec_from_file_location(f"handler_{app.parent.name}", app)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            handlers.append(app.parent.name)
        print(json.dumps({"modules": modules, "handlers": handlers}))
        """,
        path=[LAYER],
    )
    modules, handlers = imported["modules"], imported["handlers"]
    assert isinstance(modules, list) and isinstance(handlers, list)
    assert "richdoc.parse.step" in modules
    assert sorted(handlers) == sorted(p.parent.name for p in FUNCTIONS.glob("*/app.py"))


def test_no_lambda_module_imports_tool_dependencies_even_lazily() -> None:
    """The import test above sees module-level imports; this one also sees imports
    inside functions, which would fail only when that code path runs in Lambda. Type
    stubs (types_boto3_*) may be imported only under TYPE_CHECKING."""
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in [*(LAYER / "richdoc").rglob("*.py"), *FUNCTIONS.glob("*/app.py")]
        for name in sorted(runtime_imports(path))
        if _not_in_lambda(name) and name.split(".")[0] != "docling"
    ]
    assert offenders == []


@pytest.mark.docling
def test_the_parse_callers_side_never_imports_docling(tmp_path: Path) -> None:
    source = tmp_path / "note.md"
    source.write_text("# Note\n\nA paragraph.\n")
    output = tmp_path / "note.json"
    script = f"""
        import sys
        sys.meta_path.pop(0)  # docling must be importable, so the worker can use it
        from pathlib import Path
        from richdoc.parse.settings import ParseLimits
        from richdoc.parse.step import parse_file

        report = parse_file(Path({str(source)!r}), Path({str(output)!r}), ParseLimits.resolve())
        loaded = sorted(m for m in sys.modules if m == "docling" or m.startswith("docling."))
        print(json.dumps({{"pipeline": str(report.pipeline), "docling_modules": loaded}}))
    """
    result = _run_isolated(script, path=[LAYER])
    assert result == {"pipeline": "simple", "docling_modules": []}
    assert json.loads(output.read_bytes())["name"] == "document"


def test_the_detect_handler_never_imports_docling_core() -> None:
    """Detect reads projection.json through ``richdoc.graph``; importing docling-core
    (pydantic building its models) would more than double its cold start."""
    loaded = _run_isolated(
        """
        import importlib.util
        spec = importlib.util.spec_from_file_location("handler_detect", "functions/detect/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded = sorted(m for m in sys.modules if m.startswith("docling_core"))
        print(json.dumps({"docling_core": loaded}))
        """,
        path=[LAYER],
    )
    assert loaded == {"docling_core": []}
