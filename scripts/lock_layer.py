"""Write layers/docling/requirements.txt, the layer's lock, from requirements.in.

`sam build` installs the layer from requirements.txt, so every package in it, direct or
not, is pinned there: a new release of anything (pandas and numpy are most of the 250 MB
budget) cannot change a deploy. The pins are the versions this environment runs (the
tests run them: tests/unit/test_layer_lock.py checks it), resolved for the layer's
platform, Lambda's Python 3.12 on x86_64 (manylinux up to glibc 2.34), by pip with no
machine configuration (no local indexes or constraints of this machine).

    .venv/bin/python scripts/lock_layer.py [--python PYTHON3.12]   # make lock
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

LAYER = Path(__file__).resolve().parents[1] / "layers" / "docling"
HEADER = """\
# The DoclingLayer's lock: every package the layer installs, pinned. Generated from
# requirements.in by scripts/lock_layer.py (make lock) with the versions the tests run;
# edit requirements.in, then regenerate. boto3 is pinned here with its botocore (which
# aws-xray-sdk brings in any case) rather than taken from the runtime: a layer's botocore
# would otherwise shadow the runtime's beside the runtime's boto3, a pair nothing tests.
"""


def installed_versions() -> dict[str, str]:
    """Distribution name (normalised) -> version, in the environment running this."""
    return {
        dist.metadata["Name"].lower().replace("_", "-"): dist.version
        for dist in importlib.metadata.distributions()
    }


def resolve(python: str, requirements: Path, constraints: dict[str, str]) -> dict[str, str]:
    """What pip installs for the layer's platform, constrained to ``constraints``."""
    with tempfile.TemporaryDirectory() as tmp:
        pinned = Path(tmp) / "constraints.txt"
        pinned.write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())))
        report = Path(tmp) / "report.json"
        env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
        env = {k: v for k, v in env.items() if not k.startswith("PIP_") or k == "PIP_CONFIG_FILE"}
        subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--quiet",
                "--ignore-installed",
                "--only-binary=:all:",
                # Lambda's python3.12 runs on Amazon Linux 2023 (glibc 2.34): the tags
                # sam build accepts for it.
                "--platform=manylinux2014_x86_64",
                "--platform=manylinux_2_28_x86_64",
                "--platform=manylinux_2_34_x86_64",
                "--python-version=3.12",
                "--implementation=cp",
                f"--target={tmp}/target",
                f"--report={report}",
                "-r",
                str(requirements),
                "-c",
                str(pinned),
            ],
            check=True,
            env=env,
        )
        installed = json.loads(report.read_text())["install"]
    return {item["metadata"]["name"]: item["metadata"]["version"] for item in installed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="python3.12", help="the runtime's Python (3.12)")
    args = parser.parse_args()
    versions = installed_versions()
    resolved = resolve(args.python, LAYER / "requirements.in", versions)
    lines = [f"{name}=={version}\n" for name, version in sorted(resolved.items(), key=_key)]
    (LAYER / "requirements.txt").write_text(HEADER + "".join(lines))
    print(f"{len(lines)} packages pinned in {LAYER / 'requirements.txt'}")
    return 0


def _key(item: tuple[str, str]) -> str:
    return item[0].lower().replace("_", "-")


if __name__ == "__main__":
    sys.exit(main())
