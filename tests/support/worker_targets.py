"""Targets for the isolated worker's tests (richdoc.worker): each one misbehaves in one
documented way."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path
from typing import Any

from richdoc.taxonomy import CorruptInput, UnsupportedFeature

WARM: dict[str, Any] = {}


def warm_up(config: dict[str, Any]) -> None:
    WARM.update(config)
    WARM["zygote_pid"] = os.getpid()


def behave(args: dict[str, Any]) -> Any:
    action = args["action"]
    if action == "echo":
        return {"args": args, "warm": WARM, "pid": os.getpid()}
    if action == "env":
        return dict(os.environ)
    if action == "span":
        started = time.monotonic()
        time.sleep(args["seconds"])
        return [started, time.monotonic()]
    if action == "sleep":
        if "started_marker" in args:
            Path(args["started_marker"]).touch()
        time.sleep(args["seconds"])
        return "woke"
    if action == "allocate":
        # Touch every page, a megabyte at a time, as a parse that keeps growing would;
        # then, with "hold", keep it until killed, so that no sampling interval can miss it.
        hoard = []
        for _ in range(args["mb"]):
            hoard.append(bytearray(1 << 20))
        if args.get("hold"):
            block_forever()
        return len(hoard)
    if action == "rendezvous":
        # Done only once ``parties`` children are running at the same time.
        folder = Path(args["folder"])
        (folder / str(os.getpid())).touch()
        while len(list(folder.iterdir())) < args["parties"]:
            time.sleep(0.01)
        return "met"
    if action == "read_caller_environ":
        return read_caller_environ()
    if action == "full_disk":
        # /dev/full answers every write with ENOSPC, as a full /tmp does.
        Path("/dev/full").write_bytes(b"{}")
    if action == "signal":
        os.kill(os.getpid(), getattr(signal, args["signal"]))
        time.sleep(5)
    if action == "segfault":
        ctypes.string_at(0)
    if action == "corrupt":
        raise CorruptInput("not a document")
    if action == "unsupported":
        raise UnsupportedFeature("needs OCR", feature="ocr")
    if action == "memory_error_in_chain":
        try:
            raise MemoryError
        except MemoryError as exc:
            raise RuntimeError("Pipeline SimplePipeline failed") from exc
    if action == "bug":
        raise KeyError("surprise")
    raise ValueError(action)


def broken_warm_up(config: dict[str, Any]) -> None:
    raise ImportError("docling is not installed")


def dying_warm_up(config: dict[str, Any]) -> None:
    os._exit(3)  # gone before it could say why, as a zygote the OOM killer took


def dying_once_warm_up(config: dict[str, Any]) -> None:
    """Dies like ``dying_warm_up`` the first time (no ``died_once`` file yet), then warms up."""
    marker = Path(config["died_once"])
    if not marker.exists():
        marker.touch()
        dying_warm_up(config)
    warm_up(config)


def block_forever(*_: Any) -> Any:
    """A conversion that never finishes, whatever the machine's speed: the timeout tests'
    target (it waits on a pipe nobody writes to)."""
    read_end, _write_end = os.pipe()
    os.read(read_end, 1)
    raise AssertionError("unreachable: nobody writes to the pipe")


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise LookupError(pid)


def _readable(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f"read {len(f.read())} bytes"
    except OSError as exc:
        return type(exc).__name__


def read_caller_environ() -> dict[str, str]:
    """What a compromised child could read of its ancestors: the zygote is its parent,
    the caller (whose environment holds the credentials) its grandparent."""
    zygote = os.getppid()
    caller = _parent_of(zygote)
    return {
        "caller": _readable(f"/proc/{caller}/environ"),
        "caller_statm": _readable(f"/proc/{caller}/statm"),
        "own": _readable("/proc/self/environ"),
    }
