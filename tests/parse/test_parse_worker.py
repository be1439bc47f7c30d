"""The isolated worker (richdoc.worker): every way a child can end, and the caller
surviving all of them. The targets in tests/support/worker_targets.py misbehave on purpose;
no docling is involved, so these run in seconds."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

import pytest
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from richdoc.taxonomy import (
    CorruptInput,
    FailureKind,
    InternalError,
    ResourceLimit,
    Transient,
    UnsupportedFeature,
    kind_of_exit_code,
)
from richdoc.worker.client import ForkServer, child_environment

TARGETS = "tests.support.worker_targets"
PR_GET_DUMPABLE = 3


def _server(**kwargs) -> ForkServer:
    return ForkServer(
        warmup=f"{TARGETS}:{kwargs.pop('warmup', 'warm_up')}",
        target=f"{TARGETS}:behave",
        config={"marker": "warm"},
        **kwargs,
    )


@pytest.fixture(scope="module")
def server():
    fs = _server()
    yield fs
    fs.close()


def _run(fs: ForkServer, tmp_path, timeout_s: float = 20, mem_ceiling_mb: int = 1024, **args):
    return fs.run(
        args, timeout_s=timeout_s, mem_ceiling_mb=mem_ceiling_mb, result_path=tmp_path / "r.json"
    )


def test_each_task_runs_in_a_fresh_child_of_the_warm_zygote(server, tmp_path):
    first = _run(server, tmp_path, action="echo").value
    second = _run(server, tmp_path, action="echo").value
    assert first["warm"] == {"marker": "warm", "zygote_pid": server.zygote_pid}
    assert first["pid"] != second["pid"] != server.zygote_pid
    assert first["args"] == {"action": "echo"}


def _children_of(pid: int) -> set[int]:
    children = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    # pid (comm) state ppid ...; comm may hold spaces and parentheses.
                    fields = stat.read().rpartition(")")[2].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == pid:
                children.add(int(entry))
    return children


def _zygote_of(fs: ForkServer) -> int:
    pid = fs.zygote_pid
    assert pid is not None
    return pid


def _state_of(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rpartition(")")[2].split()[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_next_tasks_child_is_forked_before_the_task_arrives(tmp_path):
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        # Between tasks the zygote has exactly one child: the spare, waiting for a task.
        spares = _children_of(_zygote_of(fs))
        assert len(spares) == 1
        assert _run(fs, tmp_path, action="echo").value["pid"] == spares.pop()
    finally:
        fs.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_spare_that_died_waiting_does_not_fail_the_next_task(tmp_path):
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        zygote = _zygote_of(fs)
        (spare,) = _children_of(zygote)
        # Stop the zygote so that it cannot reap the spare before the next task reaches
        # it: the task then meets a dead spare (its socket closed) and needs another.
        os.kill(zygote, signal.SIGSTOP)
        try:
            os.kill(spare, signal.SIGKILL)
            while _state_of(spare) != "Z":
                time.sleep(0.01)
            outcome: dict[str, Any] = {}
            task = threading.Thread(
                target=lambda: outcome.update(value=_run(fs, tmp_path, action="echo").value)
            )
            task.start()
        finally:
            os.kill(zygote, signal.SIGCONT)
        task.join()
        assert outcome["value"]["pid"] not in (spare, zygote)
        assert _run(fs, tmp_path, action="sleep", seconds=0).value == "woke"
    finally:
        fs.close()


def test_close_stops_the_spare_with_the_zygote(tmp_path):
    fs = _server()
    _run(fs, tmp_path, action="echo")
    (spare,) = _children_of(_zygote_of(fs))
    fs.close()
    with pytest.raises(ProcessLookupError):
        os.kill(spare, 0)


def test_the_zygote_is_single_threaded(server, tmp_path):
    _run(server, tmp_path, action="echo")
    assert server.hello is not None and server.hello.threads == 1


def test_a_child_past_its_timeout_is_a_resource_limit_and_the_next_task_runs(server, tmp_path):
    with pytest.raises(ResourceLimit, match=r"timeout_s=0\.5"):
        _run(server, tmp_path, timeout_s=0.5, action="sleep", seconds=30)
    assert _run(server, tmp_path, action="sleep", seconds=0).value == "woke"


def test_a_child_over_its_memory_ceiling_is_killed_as_a_resource_limit(server, tmp_path):
    # The child holds 400 MB until it is killed: only the ceiling can end it.
    with pytest.raises(ResourceLimit, match="mem_ceiling_mb=200"):
        _run(
            server,
            tmp_path,
            mem_ceiling_mb=200,
            timeout_s=600,
            action="allocate",
            mb=400,
            hold=True,
        )
    assert _run(server, tmp_path, mem_ceiling_mb=200, action="allocate", mb=50).value == 50


@pytest.mark.parametrize("signame", ["SIGKILL", "SIGSEGV", "SIGTERM"])
def test_a_child_killed_by_a_signal_is_a_resource_limit(server, tmp_path, signame):
    with pytest.raises(ResourceLimit, match=f"signal {signame}"):
        _run(server, tmp_path, action="signal", signal=signame)


def test_a_segfault_in_native_code_is_a_resource_limit(server, tmp_path):
    with pytest.raises(ResourceLimit, match="SIGSEGV"):
        _run(server, tmp_path, action="segfault")


def test_memory_error_anywhere_in_the_exception_chain_is_a_resource_limit(server, tmp_path):
    with pytest.raises(ResourceLimit, match="out of memory"):
        _run(server, tmp_path, action="memory_error_in_chain")


def test_taxonomy_errors_cross_the_process_boundary(server, tmp_path):
    with pytest.raises(CorruptInput, match="not a document"):
        _run(server, tmp_path, action="corrupt")
    with pytest.raises(UnsupportedFeature) as info:
        _run(server, tmp_path, action="unsupported")
    assert info.value.feature == "ocr"


def test_an_unexpected_error_in_the_child_is_internal_with_its_own_exit_code(server, tmp_path):
    # A bug in the parse code is not retried as transient: it exits with the reserved
    # internal code, and the caller raises InternalError.
    with pytest.raises(InternalError, match="KeyError") as info:
        _run(server, tmp_path, action="bug")
    assert info.value.exit_code == 70
    assert kind_of_exit_code(70) is FailureKind.INTERNAL


def test_a_full_disk_in_the_child_is_a_resource_limit(server, tmp_path):
    with pytest.raises(ResourceLimit, match="no space left"):
        _run(server, tmp_path, action="full_disk")


def test_the_child_has_no_aws_credentials(tmp_path, monkeypatch):
    secrets = {
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_SESSION_TOKEN": "token",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.2/creds",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN": "bearer",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RICHDOC_KEEP_ME", "1")
    fs = _server()
    try:
        env = _run(fs, tmp_path, action="env").value
    finally:
        fs.close()
    assert not [name for name in env if name.startswith("AWS_")]
    assert not set(secrets.values()) & set(env.values())
    assert env["RICHDOC_KEEP_ME"] == "1"


def test_the_child_environment_pins_native_thread_pools_to_one():
    env = child_environment({"PATH": "/bin", "AWS_REGION": "eu-west-1"}, {"X": "y"})
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    assert "AWS_REGION" not in env and env["X"] == "y" and env["PATH"] == "/bin"


def test_several_threads_run_tasks_at_the_same_time_through_one_zygote(server, tmp_path):
    # Each child finishes only once all six are running: served one at a time, the first
    # would wait forever (and hit its timeout).
    folder = tmp_path / "running"
    folder.mkdir()
    results: dict[int, object] = {}

    def work(i: int) -> None:
        (tmp_path / str(i)).mkdir()
        results[i] = _run(
            server,
            tmp_path / str(i),
            timeout_s=600,
            action="rendezvous",
            folder=str(folder),
            parties=6,
        ).value

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == dict.fromkeys(range(6), "met")


def test_the_caller_never_forks_itself(server, tmp_path, monkeypatch):
    def no_fork() -> int:
        raise AssertionError("the multi-threaded caller must not fork")

    monkeypatch.setattr(os, "fork", no_fork)
    assert _run(server, tmp_path, action="sleep", seconds=0).value == "woke"


def test_a_dead_zygote_is_restarted_on_next_use(tmp_path):
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        first = fs.zygote_pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        while fs.zygote_pid is not None:  # until the worker has seen it die
            time.sleep(0.01)
        assert _run(fs, tmp_path, action="echo").value["warm"]["zygote_pid"] != first
    finally:
        fs.close()


def _replacements(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "richdoc.worker.client" and r.levelno == logging.WARNING
    ]


def test_a_dead_zygote_replaced_logs_why_and_the_new_warm_up(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="richdoc.worker.client")
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        first = _zygote_of(fs)
        assert _replacements(caplog) == []  # the first start is no replacement
        os.kill(first, signal.SIGKILL)
        while fs.zygote_pid is not None:  # until the worker has seen it die
            time.sleep(0.01)
        _run(fs, tmp_path, action="echo")
        second = _zygote_of(fs)
    finally:
        fs.close()
    (record,) = _replacements(caplog)
    assert "the previous one was killed by signal SIGKILL" in record.getMessage()
    assert f"the new one (pid {second})" in record.getMessage()
    # JSON-friendly: the facts are one key of plain values, as Powertools logs them.
    logged = json.loads(LambdaPowertoolsFormatter().format(record))
    replaced = logged["zygote_replaced"]
    assert replaced["cause"] == "was killed by signal SIGKILL"
    assert replaced["pid"] == second
    assert replaced["threads"] == 1
    assert 0 < replaced["warmup_s"] <= replaced["start_s"]


def test_a_zygote_replaced_after_a_failed_start_logs_the_failure(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="richdoc.worker.client")
    fs = ForkServer(
        warmup=f"{TARGETS}:dying_once_warm_up",
        target=f"{TARGETS}:behave",
        config={"marker": "warm", "died_once": str(tmp_path / "died")},
        quiet=True,
    )
    try:
        with pytest.raises(Transient, match="failed to start: it exited with code 3"):
            _run(fs, tmp_path, action="echo")
        assert _replacements(caplog) == []  # the failed start raised; nothing replaced yet
        assert _run(fs, tmp_path, action="echo").value["warm"]["marker"] == "warm"
    finally:
        fs.close()
    (record,) = _replacements(caplog)
    assert "the previous one failed to start: it exited with code 3" in record.getMessage()


def test_a_zygote_stopped_by_close_starts_again_without_a_warning(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="richdoc.worker.client")
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        fs.close()
        _run(fs, tmp_path, action="echo")
    finally:
        fs.close()
    assert _replacements(caplog) == []


def test_a_zygote_dying_mid_task_is_transient_and_the_worker_recovers(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="richdoc.worker.client")
    fs = _server()
    try:
        _run(fs, tmp_path, action="echo")
        zygote = fs.zygote_pid
        assert zygote is not None
        marker = tmp_path / "child-started"

        def kill_zygote_once_the_child_runs() -> None:
            while not marker.exists():
                time.sleep(0.01)
            os.kill(zygote, signal.SIGKILL)

        killer = threading.Thread(target=kill_zygote_once_the_child_runs)
        killer.start()
        with pytest.raises(Transient, match="exited during the task"):
            _run(fs, tmp_path, action="sleep", seconds=30, started_marker=str(marker))
        killer.join()
        assert _run(fs, tmp_path, action="sleep", seconds=0).value == "woke"
    finally:
        fs.close()
    (record,) = _replacements(caplog)
    assert "the previous one was killed by signal SIGKILL" in record.getMessage()


def test_a_warm_up_that_raises_is_an_internal_error(tmp_path):
    # A broken install or configuration (a missing module, missing weights) fails every
    # document the same way: dead-lettered as ours, not retried.
    fs = _server(warmup="broken_warm_up", quiet=True)
    try:
        with pytest.raises(InternalError, match="failed to start: ImportError"):
            _run(fs, tmp_path, action="echo")
    finally:
        fs.close()


def test_a_zygote_that_dies_before_reporting_is_transient(tmp_path):
    fs = _server(warmup="dying_warm_up", quiet=True)
    try:
        with pytest.raises(Transient, match="failed to start: it exited with code 3"):
            _run(fs, tmp_path, action="echo")
    finally:
        fs.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux")
def test_a_child_cannot_read_the_callers_environment(server, tmp_path):
    # The caller (this process) keeps its credentials in its environment; it is made
    # non-dumpable when it starts the zygote, and children hold no capability that
    # would override that, even where the worker runs as root.
    seen = _run(server, tmp_path, action="read_caller_environ").value
    assert seen["caller"] == "PermissionError"
    assert ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    # Controls: the child found the caller (whose world-readable statm it can read) and
    # can read its own environment.
    assert seen["caller_statm"].startswith("read ")
    assert seen["own"].startswith("read ")


def test_the_zygote_still_samples_the_rss_of_its_children(server, tmp_path):
    # Sampling reads /proc/<child>/statm: the child must stay readable to the zygote.
    outcome = _run(server, tmp_path, action="allocate", mb=100)
    assert outcome.value == 100 and outcome.peak_rss_mb >= 100
    with pytest.raises(ResourceLimit, match="mem_ceiling_mb=150"):
        _run(
            server,
            tmp_path,
            mem_ceiling_mb=150,
            timeout_s=600,
            action="allocate",
            mb=300,
            hold=True,
        )


def test_close_stops_the_zygote(tmp_path):
    fs = _server()
    _run(fs, tmp_path, action="echo")
    zygote = fs.zygote_pid
    assert zygote is not None
    fs.close()
    assert fs.zygote_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(zygote, 0)


def test_the_zygote_reports_its_own_memory_not_its_starters() -> None:
    """Linux keeps a process's peak RSS across exec: a zygote started by a caller that once
    held a lot of memory must still report only what its own warm-up used, since the
    children's memory ceiling is derived from it."""
    script = f"""
import sys, tempfile, pathlib
from richdoc.worker.client import ForkServer
ballast = bytearray(600 << 20)  # touched: 600 MB resident in the caller
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
fs = ForkServer(warmup="{TARGETS}:warm_up", target="{TARGETS}:behave", config={{}})
try:
    result = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    fs.run({{"action": "echo"}}, timeout_s=30, mem_ceiling_mb=1024, result_path=result)
    print(fs.hello.rss_mb)
finally:
    fs.close()
"""
    import subprocess

    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert 0 < float(run.stdout.strip()) < 400, run.stdout + run.stderr
