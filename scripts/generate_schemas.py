"""Write the published JSON Schemas into schemas/ (``make schemas``).

One file per published document, generated from the models in ``richdoc_client``
(``richdoc_client.schemas`` says which and how): ``schemas/<name>.v1.schema.json``, the
current version, and ``schemas/released/<name>-<version>.schema.json``, the release of
that version. A released file never changes: a model that changes without a new version
is refused here (bump ``VERSION`` in the model's module: the minor for an added
optional member, the major for anything else; docs/consumers.md, "How the documents
evolve"). tests/unit/test_schemas.py fails when the committed files differ from what
this writes, or when a release breaks the rule.

    python scripts/generate_schemas.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "layers" / "docling"))

from richdoc_client.schemas import PUBLISHED, RELEASED, schema_bytes  # noqa: E402

SCHEMAS = ROOT / "schemas"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files (exit 1)")
    args = parser.parse_args(argv)
    stale, changed_releases = [], []
    for published in PUBLISHED:
        data = schema_bytes(published)
        released = SCHEMAS / RELEASED / published.released_name
        if released.exists() and released.read_bytes() != data:
            changed_releases.append(f"{published.name} {published.version}")
            continue
        for path in (SCHEMAS / published.file_name, released):
            if path.exists() and path.read_bytes() == data:
                continue
            stale.append(path.relative_to(SCHEMAS).as_posix())
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    expected = {published.file_name for published in PUBLISHED}
    extra = sorted(p.name for p in SCHEMAS.glob("*.schema.json") if p.name not in expected)
    for name in extra:
        stale.append(name)
        if not args.check:
            (SCHEMAS / name).unlink()
    for release in changed_releases:
        print(
            f"the released schema {release} would change: give the model a new version "
            "(richdoc_client.<module>.VERSION: the minor for an added optional member, "
            "the major for anything else)",
            file=sys.stderr,
        )
    verb = "stale" if args.check else "written"
    print(f"{verb}: {', '.join(stale)}" if stale else "schemas/ is up to date")
    return 1 if changed_releases or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
