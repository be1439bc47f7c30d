"""``richdoc parse``, ``project``, ``detect``: one step alone, running exactly the code the
Lambda handler runs. A document that fails raises its ``PipelineError``: one JSON line on
stderr and the taxonomy's exit code (``errors``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from richdoc_tools.cli.errors import UsageError
from richdoc_tools.cli.options import example, json_option


def _input_file(name: str) -> Path:
    from richdoc_tools.terminal import visible

    path = Path(name)
    if not path.is_file():
        raise UsageError(f"{visible(path)}: no such file")
    return path


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@click.command(
    short_help="convert one file to DoclingDocument JSON in the isolated worker",
    epilog=example("richdoc parse contract.docx -o contract.docling.json --timeout-s 120"),
)
@click.argument("file", metavar="FILE")
@click.option("-o", "--output", required=True, metavar="OUT.json")
@click.option("--max-pages", type=int, default=None, metavar="N")
@click.option("--timeout-s", type=float, default=None, metavar="S")
@click.option("--mem-ceiling-mb", type=int, default=None, metavar="M")
def parse(
    file: str,
    output: str,
    max_pages: int | None,
    timeout_s: float | None,
    mem_ceiling_mb: int | None,
) -> int:
    """The parse step alone, isolated exactly as in Lambda. Exit codes: 0 ok, 10
    corrupt_input, 20 unsupported_feature, 30 resource_limit, 70 internal, other
    transient."""
    from richdoc.parse.settings import ParseLimits
    from richdoc.parse.step import parse_file

    source = _input_file(file)
    try:
        limits = ParseLimits.resolve(
            max_pages=max_pages, timeout_s=timeout_s, mem_ceiling_mb=mem_ceiling_mb
        )
    except ValueError as exc:  # a usage error, not a failure of the document
        raise UsageError(str(exc)) from exc
    report = parse_file(source, Path(output), limits)
    print(report.model_dump_json(), file=sys.stderr)
    return 0


@click.command(
    short_help="project a DoclingDocument JSON to projection.json",
    epilog=example("richdoc project contract.docling.json -o projection.json"),
)
@click.argument("docling", metavar="DOCLING.json")
@click.option("-o", "--output", required=True, metavar="PROJECTION.json")
@click.option(
    "--source-name", default=None, metavar="NAME", help="defaults to the document's origin"
)
@click.option(
    "--source-sha256", default=None, metavar="SHA256", help="SHA-256 of the original file"
)
@click.option(
    "--pipeline", default=None, metavar="PIPELINE", help="docling pipeline that produced the input"
)
def project(
    docling: str,
    output: str,
    source_name: str | None,
    source_sha256: str | None,
    pipeline: str | None,
) -> int:
    """The projection step alone: DoclingDocument JSON in, richdoc.projection/v1 out
    (byte-stable for identical input)."""
    import gc

    from richdoc.projection import load_docling, source_of
    from richdoc.projection import project as project_document

    # One document, then exit: what is imported lives until then, so the cyclic collector
    # need not walk it again, neither in the full collections the load sets off nor in
    # the last one at exit (together about a sixth of the command on a 4 MB document).
    gc.freeze()
    doc = load_docling(_input_file(docling).read_bytes())  # CorruptInput if not one
    source = source_of(doc, name=source_name, sha256=source_sha256, pipeline=pipeline)
    _write_bytes(Path(output), project_document(doc, source).to_json_bytes())
    return 0


@click.command(
    short_help="scan a projection for temporal ambiguities",
    epilog=example(
        "richdoc detect projection.json --clarify -o detection.json",
        "richdoc detect projection.json --explain --rules spec-v1",
    ),
)
@click.argument("projection", metavar="PROJECTION.json")
@click.option("--clarify", is_flag=True, help="emit ambiguities (options.clarify)")
@click.option("-o", "--output", default=None, metavar="DETECTION.json")
@click.option(
    "--rules",
    type=click.Choice(["spec-v1", "contracts-v2"]),
    default=None,
    help="the rule set (default: $RICHDOC_DETECTION_RULES, else contracts-v2)",
)
@click.option(
    "--explain",
    is_flag=True,
    help="print every date mention: its form, its role, why, and whether it was kept",
)
@json_option("with --explain: print the explanation as JSON")
def detect(
    projection: str,
    clarify: bool,
    output: str | None,
    rules: str | None,
    explain: bool,
    as_json: bool,
) -> int:
    """The detection step alone (docs/detection.md). Without --clarify nothing is emitted;
    the stats are still computed. Give -o, --explain or both."""
    from pydantic import ValidationError

    from richdoc.detection import detect as detect_ambiguities
    from richdoc.detection.ruleset import DetectionRules, detection_rules_setting
    from richdoc.graph import Projection
    from richdoc.taxonomy import CorruptInput

    if output is None and not explain:
        raise UsageError("say where the detection goes (-o DETECTION.json), or --explain")
    if as_json and not explain:
        raise UsageError("--json explains: give --explain with it")
    try:
        rule_set = DetectionRules(rules) if rules else detection_rules_setting()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    data = _input_file(projection).read_bytes()
    try:
        parsed = Projection.model_validate_json(data)
    except ValidationError as exc:
        raise CorruptInput.not_valid("richdoc.projection/v1", exc) from exc
    detection = detect_ambiguities(parsed, clarify=clarify, rules=rule_set)
    if output is not None:
        _write_bytes(Path(output), detection.to_json_bytes())
    if explain:
        from richdoc.detection.explain import explain as explain_detection
        from richdoc_tools.cli.render.detection import explanation

        explanation(explain_detection(parsed, rule_set), as_json=as_json)
    return 0
