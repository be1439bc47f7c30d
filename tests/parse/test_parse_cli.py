"""`richdoc parse`: the parse step alone, isolated as in Lambda, with the design page's
exit codes and one JSON line on stderr for a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docling_core.types.doc import DoclingDocument
from richdoc_tools.cli import main

from tests.support import parse_inputs

pytestmark = [pytest.mark.docling, pytest.mark.xdist_group("parse-docling")]

ROOT = Path(__file__).resolve().parents[2]


def _failure(capsys) -> dict:
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return json.loads(lines[0])


def test_a_parse_writes_the_docling_document_and_exits_0(tmp_path, capsys):
    source = parse_inputs.docx(tmp_path / "contract.docx")
    out = tmp_path / "out" / "contract.docling.json"
    assert main(["parse", str(source), "-o", str(out)]) == 0
    doc = DoclingDocument.model_validate_json(out.read_bytes())
    assert "Master services agreement" in doc.export_to_markdown()
    report = json.loads(capsys.readouterr().err)
    assert (report["pipeline"], report["partial"], report["output"]) == ("simple", False, str(out))


@pytest.mark.parametrize(
    ("make", "argv", "code", "kind", "feature"),
    [
        (lambda p: parse_inputs.random_bytes(p / "noise.docx"), [], 10, "corrupt_input", None),
        (
            lambda p: parse_inputs.markdown(p / "notes.rtf"),
            [],
            20,
            "unsupported_feature",
            "format:rtf",
        ),
        (
            lambda p: parse_inputs.encrypted_pdf(p / "locked.pdf"),
            [],
            20,
            "unsupported_feature",
            "encrypted",
        ),
        (
            lambda p: parse_inputs.pdf(p / "long.pdf", pages=3),
            ["--max-pages", "2"],
            20,
            "unsupported_feature",
            "max_pages",
        ),
        (
            lambda p: parse_inputs.pdf(p / "big.pdf", pages=100),
            ["--mem-ceiling-mb", "320"],
            30,
            "resource_limit",
            None,
        ),
    ],
)
def test_failures_exit_with_the_taxonomy_code_and_one_json_line(
    tmp_path, capsys, make, argv, code, kind, feature
):
    source = make(tmp_path)
    assert main(["parse", str(source), "-o", str(tmp_path / "out.json"), *argv]) == code
    failure = _failure(capsys)
    assert (failure["kind"], failure["feature"]) == (kind, feature)
    assert failure["reason"]
    assert not (tmp_path / "out.json").exists()


def test_a_conversion_past_the_timeout_exits_30(
    tmp_path, capsys, monkeypatch, blocking_parse_worker
):
    # A worker whose conversions never finish: the timeout alone ends this one.
    import richdoc.parse.step

    monkeypatch.setattr(richdoc.parse.step, "shared_worker", lambda **_: blocking_parse_worker)
    source = parse_inputs.docx(tmp_path / "slow.docx")
    out = tmp_path / "out.json"
    assert main(["parse", str(source), "-o", str(out), "--timeout-s", "0.5"]) == 30
    failure = _failure(capsys)
    assert (failure["kind"], failure["feature"]) == ("resource_limit", None)
    assert "timeout_s=0.5" in failure["reason"]
    assert not out.exists()


def test_a_file_above_max_object_mb_exits_20_with_the_max_size_tag(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RICHDOC_MAX_OBJECT_MB", "1")
    source = tmp_path / "big.md"
    source.write_bytes(b"# Big\n\n" + b"lorem ipsum " * (100 * 1024))  # 1.2 MiB
    assert main(["parse", str(source), "-o", str(tmp_path / "out.json")]) == 20
    failure = _failure(capsys)
    assert (failure["kind"], failure["feature"]) == ("unsupported_feature", "max_size")


def test_a_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "nope.pdf"), "-o", str(tmp_path / "o.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def _run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "layers" / "docling"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "richdoc_tools", "parse", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_real_process_exits_10_with_one_json_line_for_a_corrupt_file(tmp_path):
    # Through the real zygote: nothing the worker prints may reach the caller's stderr.
    source = parse_inputs.truncated(tmp_path / "cut.docx", parse_inputs.docx(tmp_path / "w.docx"))
    done = _run_cli(str(source), "-o", str(tmp_path / "out.json"))
    assert done.returncode == 10, done.stderr
    [line] = done.stderr.splitlines()
    assert json.loads(line)["kind"] == "corrupt_input"


def test_a_real_process_exits_70_with_kind_internal_when_the_worker_is_misconfigured(tmp_path):
    # Model weights that are not weights: docling's warm-up fails in the zygote. Not the
    # document's fault, and not transient: the reserved internal code, and the JSON line
    # says kind internal.
    weights = tmp_path / "models"
    for name in ("docling-project--docling-layout-heron", "docling-project--docling-models"):
        (weights / name).mkdir(parents=True)
        (weights / name / "model.safetensors").write_bytes(b"not weights")
    source = parse_inputs.pdf(tmp_path / "a.pdf")
    done = _run_cli(
        str(source),
        "-o",
        str(tmp_path / "out.json"),
        env={"RICHDOC_PDF_PIPELINE": "standard", "DOCLING_ARTIFACTS_PATH": str(weights)},
    )
    assert done.returncode == 70, done.stderr
    [line] = done.stderr.splitlines()
    failure = json.loads(line)
    assert failure["kind"] == "internal"
    assert "failed to start" in failure["reason"]


def test_a_real_process_exits_20_for_an_unknown_format(tmp_path):
    source = tmp_path / "photo.heic"
    source.write_bytes(b"\0" * 10)
    done = _run_cli(str(source), "-o", str(tmp_path / "out.json"))
    assert done.returncode == 20
    [line] = done.stderr.splitlines()
    assert json.loads(line) == {
        "kind": "unsupported_feature",
        "reason": "'photo.heic': supported formats are bmp, docm, docx, dotm, dotx, gif, htm, "
        "html, jpeg, jpg, markdown, md, pdf, png, potm, potx, ppsm, ppsx, pptm, pptx, qmd, rmd, "
        "text, tif, tiff, txt, webp, xhtml, xlsm, xlsx, xltm, xltx",
        "feature": "format:heic",
        "error": None,
    }
