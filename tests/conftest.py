"""Shared fixtures (an in-process AWS emulation, the jobs table from template.yaml, the
embedded stack, a parse worker that never finishes) and the lanes.

The tests live in one folder per lane (a lane's folder may group tests in folders of its
own: ``aws/canaries``, the patch points' canaries), and each test is marked with its lane
so that a run can pick lanes (``make quick`` runs the first two):

* ``unit``: pure functions and static checks of the template, the definition and the code;
* ``aws``: logic against the in-process AWS emulation (moto), without the state machine;
* ``parse``: docling and the isolated parse worker (processes of their own);
* ``e2e``: the real state machine on the embedded stack, and the command line around it;
* ``browser``: the console's pages in headless Chromium.

Helpers the lanes share are in ``tests.support``; data files in ``tests/data``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, settings
from richdoc_tools.local.cloudformation.template import Template, load_template

from richdoc.contracts import ParseInput, ParseOutput
from richdoc.jobs import JobStore
from richdoc.wiring import wiring
from tests.support.aws import provision_one
from tests.support.paths import DEFINITION_PATH

REGION = "us-east-1"
LANES = ("unit", "aws", "parse", "e2e", "browser")

# No property test may depend on the machine's speed: Hypothesis's per-example deadline
# (200 ms) and its too-slow health check fail a correct test on a loaded CI machine.
settings.register_profile("richdoc", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("richdoc")


TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test with the lane its folder under tests/ names."""
    for item in items:
        lane = item.path.relative_to(TESTS).parts[0]
        if lane not in LANES:
            raise pytest.UsageError(f"{item.nodeid}: tests live in a lane folder {LANES}")
        item.add_marker(lane)


@pytest.fixture(scope="session")
def template() -> Template:
    return load_template()


def _weights(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, label: str
) -> Path:
    from richdoc_tools.weights import cached

    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    if cache is not None:
        root = Path(cache.mkdir("richdoc-models"))
    else:  # the cache plugin is off: the session's temporary root, shared by workers
        root = tmp_path_factory.getbasetemp().parent / "richdoc-models"
    return cached(root, label=label)


@pytest.fixture(scope="session")
def model_weights(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seeded random weights for docling's standard PDF pipeline (``richdoc_tools.weights``),
    synthesised once into pytest's cache directory and shared by the xdist workers; a
    folder for ``DOCLING_ARTIFACTS_PATH``. The layout model finds text on every page."""
    return _weights(request, tmp_path_factory, "text")


@pytest.fixture(scope="session")
def table_model_weights(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The same, with a layout model that finds a table on every page: TableFormer's random
    decoder then runs every table to its 1,024 steps, about 110 CPU seconds a table here.
    Work that cannot finish within a short timeout, on any machine."""
    return _weights(request, tmp_path_factory, "table")


@pytest.fixture(scope="module")
def definition() -> dict[str, Any]:
    """The state machine definition as written, placeholders unsubstituted (one copy per
    module: tests that change it work on a deep copy)."""
    data: dict[str, Any] = json.loads(DEFINITION_PATH.read_text())
    return data


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for the duration of one test, with throwaway credentials."""
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield


@pytest.fixture
def jobs_table(aws: None, template: Template) -> Any:
    name = provision_one(template, "JobsTable")
    return boto3.resource("dynamodb", region_name=REGION).Table(name)


@pytest.fixture
def job_store(jobs_table: Any) -> JobStore:
    return JobStore(jobs_table)


@pytest.fixture(autouse=True)
def _fresh_wiring() -> Iterator[None]:
    """Each test is a new execution environment for the handlers it runs: what they build
    from the environment (``richdoc.wiring``) is built again from the test's."""
    wiring.reset()
    yield
    wiring.reset()


@pytest.fixture(autouse=True)
def _no_real_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing in the suite may reach a real AWS endpoint or the instance metadata service.
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    if "AWS_PROFILE" in os.environ:
        monkeypatch.delenv("AWS_PROFILE")


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """What the embedded stack's functions print goes to its function log even under the
    test's output capture, which replaces the stack's routers as the test starts (a
    function finishing in the background, the notifier after a job ended, would otherwise
    print into a command's captured output). Inside the capture plugin's own wrapper
    (``trylast``), so after it has put its streams in place."""
    funcargs = getattr(item, "funcargs", {})
    stack = funcargs.get("stack") or funcargs.get("embedded_stack")
    function_log = getattr(stack, "function_log", None)
    if function_log is None:
        return (yield)
    with function_log.over_current_streams():
        return (yield)


@pytest.fixture(scope="module")
def embedded_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One embedded stack per test module (starting one takes several seconds). Its
    schedules fire only when a test calls ``fire_schedules``.

    Not per session: moto mocks nest, and a plain ``aws`` test running inside a live stack
    would share (and reconfigure) its emulation. Modules that use the stack use only it.
    """
    from tests.support.stack_runs import module_stack

    with module_stack(tmp_path_factory) as stack:
        yield stack


@pytest.fixture
def stack(embedded_stack: Any) -> Iterator[Any]:
    """The shared stack with no scripted failures or timeout overrides left from other tests."""
    embedded_stack.script.clear()
    embedded_stack.runtime.timeout_override_s.clear()
    yield embedded_stack
    embedded_stack.script.clear()
    embedded_stack.runtime.timeout_override_s.clear()
    assert embedded_stack.loop_errors == []


@pytest.fixture(scope="session")
def blocking_parse_worker() -> Iterator[Any]:
    """A real parse worker (docling's warm-up, the real zygote and fork) whose children
    never finish a document: they block on a pipe nobody writes to. Timeout tests use it,
    so that they do not depend on how fast this machine converts."""
    from richdoc.parse.settings import ParserSettings, Pipeline
    from richdoc.parse.step import ParseWorker

    worker = ParseWorker(
        ParserSettings(Pipeline.NATIVE),
        quiet=True,
        target="tests.support.worker_targets:block_forever",
    )
    yield worker
    worker.close()


@pytest.fixture
def patch_parse(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[..., Any]], None]:
    """Replace the docling part of the parse step (on the embedded stack), keeping the real
    handler around it: ``install(behaviour)`` with ``behaviour(event, real, **kwargs)``."""
    import richdoc.parse.step

    real = richdoc.parse.step.parse_request

    def install(behaviour: Callable[..., Any]) -> None:
        def patched(event: ParseInput, **kwargs: Any) -> ParseOutput:
            result: ParseOutput = behaviour(event, real, **kwargs)
            return result

        monkeypatch.setattr(richdoc.parse.step, "parse_request", patched)

    return install
