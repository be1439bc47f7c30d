"""What ships to Lambda stays apart from the tools for people, and the tools' packages
stay within their own boundaries.

The layer and the parse image carry only the ``richdoc`` package; the CLI, the embedded
stack and the operator tools (``richdoc_tools``) need moto, samtranslator and rich, which
do not exist in Lambda. The parse step's caller side (the handler process) must not pay
for docling either: only the isolated worker imports it. Lambda code makes its AWS
clients in one module, ``richdoc.wiring``.

Inside ``richdoc_tools`` each package has a rule (``RULES``): what it may import of the
two packages, and what no chain of imports from it may reach; the console's and the
operator services' modules import each other in no circle; the embedded stack's wings
stand on floors (``FLOORS``), each importing only the floors below it, in no circle; so
do the wings of the ``richdoc`` package (``LAYER_FLOORS``).
The rules are checked on the import graph read from the source
(``tests.support.import_graph``), lazy imports and ``TYPE_CHECKING`` imports included (a
circle among the console's modules and the embedded stack's counts only through imports
that run; among the operator services' through any import).
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.import_graph import ImportGraph, runtime_imports, within

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "docling"
FUNCTIONS = ROOT / "functions"

# Installed here for the tools and tests; absent from every Lambda function. docling
# itself is only in the parse image, and there only the worker may import it.
NOT_IN_LAMBDA = ("moto", "samtranslator", "rich", "pytest", "richdoc_tools", "docling")
# Modules of the isolated worker that extend docling's own classes (an OCR engine, a
# pipeline, a backend), so import it at the top: only the worker's child imports them,
# lazily (richdoc.parse.convert), and the parse image has docling.
WORKER_ONLY = (
    "richdoc.parse.ocr.engine",
    "richdoc.parse.light_pipeline",
    "richdoc.parse.right_to_left",
    "richdoc.parse.cdla_layout",
    "richdoc.parse.slanet_tables",
    "richdoc.parse.workbook",
)
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
        WORKER_ONLY = {WORKER_ONLY!r}

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
        "EVENT_BUS_NAME": "richdoc-bus",
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
            if name not in WORKER_ONLY:
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
    assert "richdoc.parse.step" in modules and set(WORKER_ONLY) <= set(modules)
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


def _makes_aws_clients(path: Path) -> list[int]:
    """The lines where ``path`` calls ``boto3.client``, ``boto3.resource`` or
    ``boto3.Session``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "boto3"
        and node.func.attr in ("client", "resource", "Session")
    ]


def test_only_the_wiring_makes_aws_clients_in_lambda_code() -> None:
    """Every handler takes its clients and stores from ``richdoc.wiring``: built once per
    execution environment, from one place the embedded stack and the tests reset."""
    wiring = LAYER / "richdoc" / "wiring.py"
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in [*(LAYER / "richdoc").rglob("*.py"), *FUNCTIONS.glob("*/app.py")]
        if path != wiring
        for line in _makes_aws_clients(path)
    ]
    assert offenders == []
    assert _makes_aws_clients(wiring)


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


def test_the_project_handler_imports_each_outputs_builder_only_when_it_builds_it() -> None:
    """The chunker and the Markdown serializer are imported by the project step's
    function for each output, not by the handler's cold start (bench item 4 holds it
    within 1.3x of docling-core's own import)."""
    loaded = _run_isolated(
        """
        import importlib.util
        spec = importlib.util.spec_from_file_location("handler_project", "functions/project/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        builders = ("richdoc_client.chunking", "richdoc.markdown")
        print(json.dumps({
            "projection": "richdoc.projection" in sys.modules,
            "builders": sorted(m for m in sys.modules if m in builders),
        }))
        """,
        path=[LAYER],
    )
    assert loaded == {"projection": True, "builders": []}


def test_the_project_handler_freezes_docling_core_before_its_other_imports() -> None:
    """docling-core's objects live as long as the process: frozen before the handler's
    other imports, the full collection those imports set off does not walk them again
    (bench item 4). What a bare docling-core import leaves alive is frozen; what the
    handler imports after it is not."""
    bare = _run_isolated(
        """
        import gc
        import docling_core.types.doc
        print(json.dumps({"alive": len(gc.get_objects())}))
        """,
        path=[LAYER],
    )
    handler = _run_isolated(
        """
        import gc
        import importlib.util
        spec = importlib.util.spec_from_file_location("handler_project", "functions/project/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(json.dumps({"frozen": gc.get_freeze_count(), "alive": len(gc.get_objects())}))
        """,
        path=[LAYER],
    )
    frozen, bare_alive = int(str(handler["frozen"])), int(str(bare["alive"]))
    assert frozen >= 0.95 * bare_alive, (handler, bare)
    assert int(str(handler["alive"])) > 0.1 * bare_alive  # the handler's own imports


@pytest.mark.parametrize("step", ["project", "detect"])
def test_a_step_handlers_cold_start_builds_none_of_the_records_functions_calls(
    step: str,
) -> None:
    """The records function's calls and the failure path's payloads
    (``richdoc.records.calls``) are models only the records function reads; a step
    handler's import never builds them (bench item 4)."""
    loaded = _run_isolated(
        f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("handler", "functions/{step}/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(json.dumps({{
            "contracts": "richdoc.contracts" in sys.modules,
            "records": sorted(m for m in sys.modules if m.startswith("richdoc.records")),
        }}))
        """,
        path=[LAYER],
    )
    assert loaded == {"contracts": True, "records": []}


def test_the_state_contracts_import_neither_docling_core_nor_the_published_result_models() -> None:
    """Every handler imports ``richdoc.contracts``; the published models (the projection's
    above all) are built only where a step reads or writes a result."""
    loaded = _run_isolated(
        """
        import richdoc.contracts
        loaded = sorted(
            m for m in sys.modules if m.startswith(("docling_core", "richdoc_client."))
        )
        print(json.dumps({"loaded": loaded}))
        """,
        path=[LAYER],
    )
    # The failure kinds, and the bases of the wire models (no model of their own).
    assert loaded == {"loaded": ["richdoc_client.failures", "richdoc_client.wire"]}


def test_the_projection_reads_ocr_provenance_without_the_parse_steps_modules() -> None:
    """``richdoc project``'s process cost is benchmarked (bench item 1): the projection
    reads the OCR record from ``richdoc.parse.ocr.record`` (and the mode it names) alone,
    never the format inspectors (which bring an XML parser) or the state contracts."""
    loaded = _run_isolated(
        """
        import richdoc.projection
        loaded = sorted(
            m for m in sys.modules if m.startswith(("richdoc.parse", "richdoc.formats"))
            or m == "richdoc.contracts"
        )
        print(json.dumps({"loaded": loaded}))
        """,
        path=[LAYER],
    )
    assert loaded == {
        "loaded": [
            "richdoc.parse",
            "richdoc.parse.ocr",
            "richdoc.parse.ocr.mode",
            "richdoc.parse.ocr.record",
        ]
    }


# ---- the tools' packages: who may import whom -------------------------------------------------

TOOLS = ROOT / "tools" / "richdoc_tools"
FIRST_PARTY = ("richdoc", "richdoc_tools")


@dataclass(frozen=True)
class Rule:
    """What the modules of ``package`` may import of ``richdoc`` and ``richdoc_tools``
    (``may_import``: packages or modules), and what no chain of imports starting in
    ``package`` may reach (``never_reaches``: any module, a third party's too)."""

    package: str
    may_import: tuple[str, ...]
    never_reaches: tuple[str, ...]
    why: str


RULES = (
    Rule(
        "richdoc_tools.console",
        may_import=(
            "richdoc",
            "richdoc_tools.console",
            "richdoc_tools.ops",
            "richdoc_tools.terminal",
        ),
        never_reaches=(
            "richdoc_tools.local",
            "richdoc_tools.cli",
            "richdoc_tools.run",
            "moto",
            "samtranslator",
        ),
        why="the console serves any stack, deployed or embedded, through the Operator the "
        "command line hands it: it never loads the embedded stack or the command line",
    ),
    Rule(
        "richdoc_tools.ops",
        may_import=("richdoc", "richdoc_tools.ops", "richdoc_tools.terminal"),
        never_reaches=(
            "richdoc_tools.console",
            "richdoc_tools.cli",
            "richdoc_tools.local",
            "richdoc_tools.run",
            "moto",
            "samtranslator",
        ),
        why="the operator's services serve the command line and the console alike, over "
        "AWS or the embedded stack: they know none of them",
    ),
    Rule(
        "richdoc_tools.local",
        may_import=("richdoc", "richdoc_tools.local", "richdoc_tools.ops"),
        never_reaches=("richdoc_tools.console", "richdoc_tools.cli"),
        why="the embedded stack is started by the command line and the tests; it knows "
        "nothing of who uses it",
    ),
)


@functools.cache
def _graph() -> ImportGraph:
    return ImportGraph.of_packages(TOOLS, LAYER / "richdoc")


def _disallowed(graph: ImportGraph, rule: Rule) -> list[str]:
    """Each import of the rule's package that its ``may_import`` does not allow."""
    allowed = [within(name) for name in rule.may_import]
    return [
        str(edge)
        for module, edges in graph.edges.items()
        if within(rule.package)(module)
        for edge in edges
        if edge.target.split(".")[0] in FIRST_PARTY
        and not any(allows(edge.target) for allows in allowed)
    ]


def _forbidden_chains(graph: ImportGraph, rule: Rule) -> list[str]:
    """Each module of the rule's package from which a chain of imports reaches what the
    rule forbids, with that chain."""

    def forbidden(module: str) -> bool:
        return any(within(name)(module) for name in rule.never_reaches)

    found = []
    for module in sorted(graph.modules):
        if within(rule.package)(module):
            chain = graph.chain(module, forbidden)
            if chain is not None:
                found.append(", then ".join(str(edge) for edge in chain))
    return found


def _broken(rule: Rule, offences: list[str], what: str) -> str:
    return f"{rule.package} {what}: {rule.why}\n  " + "\n  ".join(offences)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.package)
def test_each_tools_package_imports_only_what_its_rule_allows(rule: Rule) -> None:
    offences = _disallowed(_graph(), rule)
    allowed = ", ".join(rule.may_import)
    assert offences == [], _broken(rule, offences, f"may import only {allowed}")


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.package)
def test_no_chain_of_imports_takes_a_tools_package_where_its_rule_forbids(rule: Rule) -> None:
    offences = _forbidden_chains(_graph(), rule)
    never = ", ".join(rule.never_reaches)
    assert offences == [], _broken(rule, offences, f"must never reach {never}")


@pytest.mark.parametrize("package", ["richdoc_tools.console", "richdoc_tools.ops"])
def test_the_console_and_the_operator_services_import_each_other_in_no_circle(
    package: str,
) -> None:
    """Flask's tutorial shape: the factory imports the blueprints, the blueprints import
    leaves (settings, forms, twins), never the factory or each other."""
    circles = _graph().cycles(within(package))
    assert circles == [], f"{package} has import circles: " + "; ".join(
        " <-> ".join(circle) for circle in circles
    )


def test_the_operator_services_form_no_circle_even_through_type_checking_imports() -> None:
    """``Operator`` is the stack's resources and clients and nothing else; each service is
    a function of it in a module of its own, which imports the operator (for its type)
    and is never imported by it. A circle through a ``TYPE_CHECKING`` import is a knot
    all the same: neither module can be read without the other."""
    circles = _graph().cycles(within("richdoc_tools.ops"), runtime_only=False)
    assert circles == [], "richdoc_tools.ops has import circles: " + "; ".join(
        " <-> ".join(circle) for circle in circles
    )


# ---- the embedded stack's wings: each imports only the floors below it ------------------

LOCAL = "richdoc_tools.local"
# The wings of the embedded stack (its sub-packages, and the modules at its top), bottom
# to top. A module imports its own wing and the wings of lower floors, never a wing of
# its own floor or of one above (the stack, at the top, puts them together).
FLOORS: tuple[tuple[str, ...], ...] = (
    # boto3 clients; moto in this process or served; how a patch target is replaced
    ("clients", "emulation", "patch_targets"),
    ("requests",),  # who calls; one request; error responses
    ("strict", "faults", "cloudformation"),  # IAM and transactions; failures; deployment
    ("runtime",),  # the Lambda runtime and the event loops
    ("patches",),  # the stack's seams: where all of the above enter moto, boto3 and Powertools
    ("moto_fixes",),  # moto's own behaviour made AWS's, and made faster (debts to moto)
    ("settings",),  # how a stack is started
    ("stack",),  # EmbeddedStack
)


def _wing(module: str, package: str = LOCAL) -> str:
    """The wing of a module inside ``package`` ("" for the package itself)."""
    return module.removeprefix(package).lstrip(".").split(".")[0]


def _floor(wing: str, floors: tuple[tuple[str, ...], ...] = FLOORS) -> int:
    """A wing's floor; the package itself is above every wing."""
    return next((n for n, wings in enumerate(floors) if wing in wings), len(floors))


def _upward_imports(
    graph: ImportGraph, package: str = LOCAL, floors: tuple[tuple[str, ...], ...] = FLOORS
) -> list[str]:
    """Each import inside ``package`` that runs sideways or up a floor (type-only ones
    too: a wing that needs a type from above is in the wrong place)."""
    offences = []
    for module, edges in graph.edges.items():
        if not within(package)(module) or module == package:
            continue
        wing = _wing(module, package)
        for edge in edges:
            target = graph.first_party(edge.target)
            if target is None or not within(package)(target):
                continue
            target_wing = _wing(target, package)
            if target_wing == wing:
                continue
            if _floor(target_wing, floors) >= _floor(wing, floors):
                offences.append(str(edge))
    return offences


def test_every_module_of_the_embedded_stack_lives_in_a_wing_of_a_floor() -> None:
    wings = {_wing(m) for m in _graph().modules if within(LOCAL)(m) and m != LOCAL}
    assert wings == {wing for floor in FLOORS for wing in floor}


def test_the_embedded_stacks_wings_import_only_the_floors_below() -> None:
    offences = _upward_imports(_graph())
    assert offences == [], "imports that run up or sideways:\n  " + "\n  ".join(offences)


def test_the_embedded_stacks_modules_import_each_other_in_no_circle() -> None:
    """At run time: the provisioners name the deployment for type checking only (their
    registration is the one circle, and it never runs)."""
    circles = _graph().cycles(within(LOCAL))
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_floors_name_each_import_that_runs_up_or_sideways(tmp_path: Path) -> None:
    _write(
        tmp_path / "richdoc_tools",
        {
            "__init__.py": "",
            "local/__init__.py": "",
            "local/stack.py": "from richdoc_tools.local.runtime import lambdas\n",
            "local/clients.py": "",
            "local/runtime/__init__.py": "",
            "local/runtime/lambdas.py": "from richdoc_tools.local.requests import callers\n",
            "local/runtime/streams.py": "from richdoc_tools.local.patches import streams\n",
            "local/requests/__init__.py": "",
            "local/requests/callers.py": "from richdoc_tools.local.clients import Clients\n",
            "local/strict/__init__.py": "",
            "local/strict/access.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from richdoc_tools.local.faults import injected\n"
            ),
            "local/faults/__init__.py": "",
            "local/faults/injected.py": "",
            "local/patches/__init__.py": "",
            "local/patches/streams.py": "from richdoc_tools.local.runtime import streams\n",
        },
    )
    assert _upward_imports(ImportGraph.of_packages(tmp_path / "richdoc_tools")) == [
        "richdoc_tools.local.runtime.streams imports richdoc_tools.local.patches.streams at line 1",
        "richdoc_tools.local.strict.access imports richdoc_tools.local.faults.injected "
        "at line 3 (for type checking)",
    ]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_rules_name_each_import_that_breaks_them(tmp_path: Path) -> None:
    """The checks fail, naming the import, on a package that breaks every rule: a page
    that imports the factory lazily (a circle), one that borrows the run module (which
    loads the embedded stack), and a service that imports the console for its types."""
    _write(
        tmp_path / "richdoc_tools",
        {
            "__init__.py": "",
            "run.py": "from richdoc_tools.local import stack\n",
            "local/__init__.py": "",
            "local/stack.py": "import moto\n",
            "console/__init__.py": "",
            "console/app.py": "def create_app():\n    from richdoc_tools.console import jobs\n",
            "console/jobs.py": "from richdoc_tools.console.app import create_app\n",
            "console/job.py": "from . import jobs\nfrom richdoc_tools.run import OUTPUT_FILES\n",
            "ops/__init__.py": "",
            "ops/cancel.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from richdoc_tools.console.app import create_app\n"
            ),
        },
    )
    graph = ImportGraph.of_packages(tmp_path / "richdoc_tools")
    console, ops = RULES[0], RULES[1]
    assert graph.cycles(within("richdoc_tools.console")) == [
        ["richdoc_tools.console.app", "richdoc_tools.console.jobs"]
    ]
    assert _disallowed(graph, console) == [
        "richdoc_tools.console.job imports richdoc_tools.run at line 2"
    ]
    assert _forbidden_chains(graph, console) == [
        "richdoc_tools.console.job imports richdoc_tools.run at line 2"
    ]
    assert _disallowed(graph, ops) == [
        "richdoc_tools.ops.cancel imports richdoc_tools.console.app at line 3 (for type checking)"
    ]
    assert _forbidden_chains(graph, ops) == [
        "richdoc_tools.ops.cancel imports richdoc_tools.console.app at line 3 (for type checking)"
    ]
    # Without the run module in its list, the chain goes on to the embedded stack.
    deeper = Rule(console.package, console.may_import, ("moto",), console.why)
    assert _forbidden_chains(graph, deeper) == [
        "richdoc_tools.console.job imports richdoc_tools.run at line 2, then "
        "richdoc_tools.run imports richdoc_tools.local.stack at line 1, then "
        "richdoc_tools.local.stack imports moto at line 1"
    ]


def test_a_circle_through_an_import_for_type_checking_is_found_when_asked_for(
    tmp_path: Path,
) -> None:
    """An operator that calls a service which imports the operator only for its type: no
    circle at run time, one when the imports for type checking count."""
    _write(
        tmp_path / "richdoc_tools",
        {
            "__init__.py": "",
            "ops/__init__.py": "",
            "ops/operator.py": "def redrive():\n    from richdoc_tools.ops import acting\n",
            "ops/acting.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from richdoc_tools.ops.operator import Operator\n"
            ),
        },
    )
    graph = ImportGraph.of_packages(tmp_path / "richdoc_tools")
    ops = within("richdoc_tools.ops")
    assert graph.cycles(ops) == []
    assert graph.cycles(ops, runtime_only=False) == [
        ["richdoc_tools.ops.acting", "richdoc_tools.ops.operator"]
    ]


# ---- the layer's wings: the same rule for the richdoc package ------------------------------

LAYER_PACKAGE = "richdoc"
# The richdoc package's wings (its sub-packages and top-level modules), bottom to top: as
# in the embedded stack, a module imports its own wing and the wings of lower floors only.
LAYER_FLOORS: tuple[tuple[str, ...], ...] = (
    # Words every step shares: failures, the graph, dates, metadata, metrics, logs, traces.
    ("taxonomy", "awstext", "graph", "temporal", "metadata", "metrics", "logcontext", "tracing"),
    # AWS's errors, the steps' contracts, file formats, the parse worker, dead letters,
    # detection over the graph.
    ("awserrors", "contracts", "formats", "worker", "deadletter", "detection"),
    ("artifacts",),  # where the steps' outputs live
    ("jobs",),  # the job and attempt records
    # What acts on jobs: admission, deletion, a run's results, the parse step.
    ("admission", "deletion", "document_results", "parse"),
    # A run's completion, the projection and its markdown, the Lambda wiring.
    ("completion", "projection", "markdown", "wiring"),
    # The handlers' logic: the starter, the records, the manifests, the step decorator,
    # the project step.
    ("ingest", "records", "manifests", "stage", "project_step"),
    ("notifier",),  # the manifests' keeper and the events
)


def test_every_module_of_the_layer_lives_in_a_wing_of_a_floor() -> None:
    wings = {
        _wing(m, LAYER_PACKAGE)
        for m in _graph().modules
        if within(LAYER_PACKAGE)(m) and m != LAYER_PACKAGE
    }
    assert wings == {wing for floor in LAYER_FLOORS for wing in floor}


def test_the_layers_wings_import_only_the_floors_below() -> None:
    """No arrow runs back up: the dispatcher reports its metrics through ``metrics``, not
    through the records that are above it, and reads the stream's images as ``Job``s,
    not through the notifier."""
    offences = _upward_imports(_graph(), LAYER_PACKAGE, LAYER_FLOORS)
    assert offences == [], "imports that run up or sideways:\n  " + "\n  ".join(offences)


def test_the_layers_modules_import_each_other_in_no_circle() -> None:
    circles = _graph().cycles(within(LAYER_PACKAGE))
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)
