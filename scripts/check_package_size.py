"""Fail when a zip function plus its layers would come near Lambda's 250 MB unzipped limit.

Reads the output of `sam build` (default .aws-sam/build) and the built template. Lambda
refuses a function whose code and layers unzip to more than 262,144,000 bytes (250 MiB):
the check fails at 90 % of that, so that the layer's lock (layers/docling/requirements.txt)
is not regenerated into a deploy that breaks on the next release of a big dependency.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

LIMIT_BYTES = 250 * 1024 * 1024
# The headroom kept below the limit: the check fails above this share of it.
MARGIN_SHARE = 0.90


def tree_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def verdict(size: int) -> str:
    if size >= LIMIT_BYTES:
        return "TOO BIG"
    if size > MARGIN_SHARE * LIMIT_BYTES:
        return f"TOO CLOSE (over {MARGIN_SHARE:.0%} of the limit)"
    return "ok"


def main(build_dir: Path) -> int:
    class Loader(yaml.SafeLoader):
        pass

    # CloudFormation short-form tags (!Ref, !GetAtt, ...) are irrelevant here.
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    template = yaml.load((build_dir / "template.yaml").read_text(), Loader=Loader)
    resources = template["Resources"]
    failures = 0
    for logical_id, resource in sorted(resources.items()):
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        if resource["Properties"].get("PackageType") == "Image":
            continue
        size = tree_size(build_dir / logical_id)
        layers = [
            ref["Ref"] for ref in resource["Properties"].get("Layers", []) if isinstance(ref, dict)
        ]
        size += sum(tree_size(build_dir / layer) for layer in layers)
        outcome = verdict(size)
        print(
            f"{logical_id:24} + layers {layers}: {size / 2**20:7.1f} MiB unzipped "
            f"of {LIMIT_BYTES / 2**20:.0f}  {outcome}"
        )
        failures += outcome != "ok"
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".aws-sam/build")))
