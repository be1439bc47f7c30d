"""The golden Markdown and table CSVs: ``document.md`` of every golden DoclingDocument and
``tables/table-<node id>.csv`` of every TABLE node of its golden projection, as the
project step writes them.

``python -m tests.support.output_goldens`` rewrites them after an intended change (review
the diff); tests/unit/test_outputs.py holds the committed files to what the renderers make.
"""

from __future__ import annotations

from pathlib import Path

from richdoc.markdown import render_markdown
from richdoc.projection import load_docling
from richdoc_client.projection import Projection
from richdoc_client.tables import TABLES_FOLDER, table_csv_name, table_csvs
from tests.support.gen_fixtures import GOLDEN

MARKDOWN = "document.md"


def fixtures() -> list[str]:
    return sorted(path.name for path in GOLDEN.iterdir() if path.is_dir())


def markdown(name: str) -> bytes:
    return render_markdown(load_docling((GOLDEN / name / "docling.json").read_bytes()))


def projection(name: str) -> Projection:
    return Projection.model_validate_json((GOLDEN / name / "projection.json").read_bytes())


def tables(name: str) -> dict[str, bytes]:
    """The fixture's CSVs by file name."""
    return {table_csv_name(node): data for node, data in table_csvs(projection(name)).items()}


def tables_folder(name: str) -> Path:
    return GOLDEN / name / TABLES_FOLDER


def committed_tables(name: str) -> dict[str, bytes]:
    folder = tables_folder(name)
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.csv"))}


def main() -> None:
    for name in fixtures():
        (GOLDEN / name / MARKDOWN).write_bytes(markdown(name))
        folder = tables_folder(name)
        for stale in folder.glob("*.csv"):
            stale.unlink()
        written = tables(name)
        if written:
            folder.mkdir(exist_ok=True)
        for file_name, data in written.items():
            (folder / file_name).write_bytes(data)


if __name__ == "__main__":
    main()
