"""The ``richdoc`` command line.

The step commands (parse, project, detect) run exactly the code the Lambda handlers run;
failures print one JSON line on stderr (``kind``, ``reason``, ``feature``) and exit with
the taxonomy's code (10 corrupt_input, 20 unsupported_feature, 30 resource_limit, other
transient). Usage errors exit 2 (argparse's convention).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from richdoc.taxonomy import PipelineError

Command = Callable[[argparse.Namespace], int]


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _cmd_parse(args: argparse.Namespace) -> int:
    from richdoc.parse import ParseLimits, parse_file

    source = Path(args.file)
    try:
        if not source.is_file():
            raise ValueError(f"{source}: no such file")
        limits = ParseLimits.resolve(
            max_pages=args.max_pages, timeout_s=args.timeout_s, mem_ceiling_mb=args.mem_ceiling_mb
        )
    except ValueError as exc:  # a usage error, not a failure of the document
        print(f"richdoc parse: {exc}", file=sys.stderr)
        return 2
    report = parse_file(source, Path(args.output), limits)
    print(report.model_dump_json(), file=sys.stderr)
    return 0


def _cmd_project(args: argparse.Namespace) -> int:
    from richdoc.projection import SourceInfo, load_docling, project

    doc = load_docling(Path(args.docling).read_bytes())
    source = SourceInfo.for_document(
        doc, name=args.source_name, sha256=args.source_sha256, pipeline=args.pipeline
    )
    _write_bytes(Path(args.output), project(doc, source).to_json_bytes())
    return 0


def _cmd_detect(args: argparse.Namespace) -> int:
    from richdoc.detection import detect
    from richdoc.projection import Projection

    projection = Projection.model_validate_json(Path(args.projection).read_bytes())
    _write_bytes(Path(args.output), detect(projection, clarify=args.clarify).to_json_bytes())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="richdoc",
        description="Rich-document ingestion: parse with docling, project to a graph, "
        "detect temporal ambiguities; locally on an embedded AWS stack or on AWS.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = commands.add_parser(
        "parse",
        help="convert one file to DoclingDocument JSON in the isolated worker",
        description="The parse step alone, isolated exactly as in Lambda. Exit codes: 0 ok, "
        "10 corrupt_input, 20 unsupported_feature, 30 resource_limit, other transient.",
        epilog="example: richdoc parse contract.docx -o contract.docling.json --timeout-s 120",
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT.json")
    p.add_argument("--max-pages", type=int, default=None, metavar="N")
    p.add_argument("--timeout-s", type=float, default=None, metavar="S")
    p.add_argument("--mem-ceiling-mb", type=int, default=None, metavar="M")
    p.set_defaults(func=_cmd_parse)

    p = commands.add_parser(
        "project",
        help="project a DoclingDocument JSON to projection.json",
        description="The projection step alone: DoclingDocument JSON in, "
        "richdoc.projection/v1 out (byte-stable for identical input).",
        epilog="example: richdoc project contract.docling.json -o projection.json",
    )
    p.add_argument("docling", metavar="DOCLING.json")
    p.add_argument("-o", "--output", required=True, metavar="PROJECTION.json")
    p.add_argument("--source-name", default=None, help="defaults to the document's origin")
    p.add_argument("--source-sha256", default=None, help="SHA-256 of the original file")
    p.add_argument("--pipeline", default=None, help="docling pipeline that produced the input")
    p.set_defaults(func=_cmd_project)

    p = commands.add_parser(
        "detect",
        help="scan a projection for temporal ambiguities",
        description="The detection step alone (spec section 15). Without --clarify nothing "
        "is emitted; the stats are still computed.",
        epilog="example: richdoc detect projection.json --clarify -o detection.json",
    )
    p.add_argument("projection", metavar="PROJECTION.json")
    p.add_argument("--clarify", action="store_true", help="emit ambiguities (options.clarify)")
    p.add_argument("-o", "--output", required=True, metavar="DETECTION.json")
    p.set_defaults(func=_cmd_detect)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    func: Command = args.func
    try:
        return func(args)
    except PipelineError as exc:
        print(exc.failure().to_json_line(), file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
