"""Write the published JSON Schemas into schemas/ (``make schemas``).

One file per published document, generated from the models in ``richdoc_client``
(``richdoc_client.schemas`` says which and how); tests/unit/test_schemas.py fails when
the committed files differ from what this writes.

    python scripts/generate_schemas.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "layers" / "docling"))

from richdoc_client.schemas import PUBLISHED, schema_bytes  # noqa: E402

SCHEMAS = ROOT / "schemas"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files (exit 1)")
    args = parser.parse_args(argv)
    stale = []
    for published in PUBLISHED:
        path = SCHEMAS / published.file_name
        data = schema_bytes(published)
        if path.exists() and path.read_bytes() == data:
            continue
        stale.append(path.name)
        if not args.check:
            SCHEMAS.mkdir(exist_ok=True)
            path.write_bytes(data)
    expected = {published.file_name for published in PUBLISHED}
    extra = sorted(p.name for p in SCHEMAS.glob("*.schema.json") if p.name not in expected)
    for name in extra:
        stale.append(name)
        if not args.check:
            (SCHEMAS / name).unlink()
    verb = "stale" if args.check else "written"
    print(f"{verb}: {', '.join(stale)}" if stale else "schemas/ is up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
