"""``richdoc models synthesize``: weights for docling's standard PDF pipeline made here,
with no model hub (``richdoc_tools.weights`` says what they prove and what they cannot)."""

from __future__ import annotations

from pathlib import Path

import click

from richdoc_tools.cli.options import example


def _layout_label(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # Checked here rather than by a click.Choice: the label list lives beside the models,
    # whose module (pydantic, richdoc) must not load for every command's --help.
    from richdoc_tools.weights import LAYOUT_LABELS

    if value not in LAYOUT_LABELS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(LAYOUT_LABELS)}")
    return value


@click.group(short_help="model weights for docling's standard PDF pipeline")
def models() -> None:
    """Model weights for docling's standard PDF pipeline."""


@models.command(
    short_help="write seeded random weights where DOCLING_ARTIFACTS_PATH expects them",
    epilog=example(
        "richdoc models synthesize /tmp/weights --seed 0",
        "DOCLING_ARTIFACTS_PATH=/tmp/weights richdoc parse report.pdf -o report.json",
    ),
)
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", type=int, default=0, show_default=True, metavar="N")
@click.option(
    "--label",
    default="text",
    show_default=True,
    callback=_layout_label,
    help="what the layout model detects on every page (text, table, ...)",
)
def synthesize(directory: Path, seed: int, label: str) -> int:
    """Write seeded, randomly initialised weights with the real architectures of docling's
    layout model (heron, RT-DETRv2) and TableFormer (accurate) into DIR, in the folders
    ``docling-tools models download layout tableformer`` creates. With
    DOCLING_ARTIFACTS_PATH=DIR the standard pipeline runs: its plumbing, memory and time are
    real, its layout is not. The same seed gives the same bytes."""
    from richdoc_tools.terminal import visible
    from richdoc_tools.weights import synthesize as write_weights

    write_weights(directory, seed, label=label)
    print(visible(str(directory)))
    return 0
