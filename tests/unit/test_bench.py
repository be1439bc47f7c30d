"""The benchmark suite's own plumbing: report structure, the cost model's arithmetic,
deterministic inputs. No timings are asserted: the numbers are the suite's business."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import cost, report
from bench.common import ItemResult, Table, Target, growth_exponent
from bench.documents import write_documents

ROOT = Path(__file__).resolve().parents[2]


def _item(name: str, measured: float) -> dict[str, Any]:
    result = ItemResult(name, f"{name} title")
    result.targets.append(Target(f"{name}_ratio", "a ratio", measured, 1.0, "x", "CPU time"))
    result.tables.append(Table("numbers", ["a", "b"], [["x|y", 1.5], ["z", None]]))
    result.notes.append("a note")
    return {
        **result.to_dict(),
        "seconds": 1.0,
        "load_average": {"before": [0, 0, 0], "after": [0, 0, 0]},
    }


def test_targets_compare_in_the_stated_direction() -> None:
    assert Target("t", "", 0.9, 1.0, "x", "").met
    assert not Target("t", "", 1.1, 1.0, "x", "").met
    assert Target("t", "", 3, 2, "count", "", at_least=True).met
    assert growth_exponent(1.0, 10.0, 10) == 1.0
    assert growth_exponent(1.0, 100.0, 10) == 2.0


def test_report_holds_every_target_with_its_verdict(tmp_path: Path) -> None:
    items = {"alpha": _item("alpha", 0.5), "beta": _item("beta", 2.0)}
    built = report.build(items, report.environment(), "full", 12.0)
    json_path, md_path = report.write(built, tmp_path)

    loaded = json.loads(json_path.read_text())
    assert loaded["schema"] == "richdoc.bench/v1"
    assert loaded["mode"] == "full"
    for key in ("date", "commit", "cpu", "cores", "python", "versions", "load_average_at_end"):
        assert key in loaded["environment"]
    assert loaded["summary"] == {"targets": 2, "met": 1, "missed": ["beta_ratio"]}
    assert [(t["item"], t["met"]) for t in loaded["targets"]] == [("alpha", True), ("beta", False)]
    assert set(loaded["items"]) == {"alpha", "beta"}

    markdown = md_path.read_text()
    assert "**1 of 2 targets met.**" in markdown
    assert "## Targets" in markdown and "## alpha title" in markdown and "## beta title" in markdown
    assert "**missed**" in markdown and "| met |" in markdown
    assert "x\\|y" in markdown  # table cells are escaped


def _cost_inputs() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    docs = [
        {
            "label": "DOCX, 5 pages",
            "format": "docx",
            "pages": 5,
            "file_mb": 0.04,
            "parse_s": 0.3,
            "docling_json_mb": 0.05,
            "projection_json_mb": 0.03,
            "project_s": 0.01,
            "detect_s": 0.002,
        },
        {
            "label": "PDF, 300 pages",
            "format": "pdf",
            "pages": 300,
            "file_mb": 0.2,
            "parse_s": 9.0,
            "docling_json_mb": 9.0,
            "projection_json_mb": 3.0,
            "project_s": 2.0,
            "detect_s": 0.3,
        },
    ]
    handler = {"invocations": 1.0, "seconds": 0.1, "memory_mb": 1769}
    per_job = {
        "handlers": {
            "StarterFunction": {**handler, "memory_mb": 256},
            "RecordsFunction": {**handler, "invocations": 2.0, "memory_mb": 256},
            "ParseTier1Function": {**handler, "memory_mb": 3008},
            "ProjectFunction": handler,
            "DetectFunction": handler,
        },
        "aws_calls": {
            "function:ParseTier1Function": {
                "s3:GetObject": 1,
                "s3:PutObject": 1,
                "dynamodb:UpdateItem": 3,
                "dynamodb:Query": 1,
            },
            "function:ProjectFunction": {"s3:GetObject": 1, "s3:PutObject": 1},
        },
        "dynamodb_writes_by_item": {"function:X -> job item": 9, "function:X -> attempt item": 6},
        "state_transitions": 6,
        "job_item_bytes": 1500,
        "attempt_item_bytes": 300,
        "function_log_bytes": 4000,
    }
    wall = {"wall": 1.0, "cpu": 1.0}
    coldstart = {"measurements": {"median_s": {"project": wall, "detect": wall}}}
    return (
        {"measurements": {"cost_documents": docs}},
        {"measurements": {"per_job": per_job}},
        coldstart,
    )


def test_cost_model_prices_every_document_and_the_standard_pipeline_estimate() -> None:
    parse, e2e, coldstart = _cost_inputs()
    result = cost.compute(parse, e2e, coldstart).to_dict()
    scenarios = result["measurements"]["scenarios"]
    assert [(s["document"], s["pipeline"]) for s in scenarios] == [
        ("DOCX, 5 pages", "measured here"),
        ("PDF, 300 pages", "measured here"),
        ("PDF, 300 pages", "standard (measured), whole (ShardPages 0)"),
        ("PDF, 300 pages", "standard (measured), 6 shards"),
        ("PDF, 300 pages", "light (measured per page), 6 shards"),
    ]
    for s in scenarios:
        assert s["usd_per_1000_documents"] > 0
        assert {line["what"] for line in s["lines"]} >= {
            "Lambda duration (GB-s)",
            "Step Functions transitions",
            "DynamoDB writes",
            "S3 requests",
        }
    docx, pdf, standard, sharded, light = scenarios
    assert pdf["usd_per_1000_documents"] > docx["usd_per_1000_documents"]
    assert standard["usd_per_1000_documents"] > pdf["usd_per_1000_documents"]
    # Whole, 300 pages outgrow tier 1's and tier 2's ceilings and outrun docling's document
    # timeout at tier 3.
    assert [tier for tier, _ in standard["parse_attempts"]] == [4096, 6144, 10240]
    assert standard["parse_outcome"] == "partial at 10,240 MB (accepted at the biggest tier)"
    # Sharded, each 50-page shard finishes at tier 1: six attempts, no escalation.
    assert [tier for tier, _ in sharded["parse_attempts"]] == [4096] * 6
    assert sharded["parse_outcome"] == "6 shards, each finishes at 4096 MB"
    # The light pipeline: six tier-1 shards too, each its 50 pages at the measured rate.
    assert (
        light["parse_attempts"]
        == [
            (
                4096,
                cost.Assumptions().light_cpu_s_per_document
                + 50 * cost.Assumptions().light_cpu_s_per_page,
            )
        ]
        * 6
    )
    assert light["usd_per_1000_documents"] < sharded["usd_per_1000_documents"] / 4

    def transitions(scenario: dict[str, Any]) -> float:
        usd = next(x["usd"] for x in scenario["lines"] if x["what"].startswith("Step"))
        return round(usd / cost.PRICES["sfn_transition"].usd, 6)

    # Plan and Sharded added to the measured 6 (a report from before the plan step);
    # sharded: the Map state and one task a shard instead of ParseTier1, and Merge.
    assert transitions(pdf) == 8
    assert transitions(sharded) == 8 - 1 + 1 + 6 + 1
    assert all(
        p["status"] in {"verified", "secondary", "assumed"}
        for p in result["measurements"]["prices"]
    )


def test_cost_model_says_what_it_is_missing() -> None:
    result = cost.compute(None, None, None)
    assert result.notes and not result.tables


def test_generated_documents_are_deterministic_and_distinct(tmp_path: Path) -> None:
    first = write_documents(tmp_path / "a", 6, seed=7)
    second = write_documents(tmp_path / "b", 6, seed=7)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert len({p.read_bytes() for p in first}) == 6
    assert [p.suffix for p in first] == [".docx", ".html", ".md"] * 2


@pytest.mark.skipif(
    not (ROOT / "bench" / "reports" / "latest.json").exists(), reason="no committed report"
)
def test_the_cost_item_alone_runs_from_the_committed_report(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "layers" / "docling")]),
    }
    subprocess.run(
        [sys.executable, "-m", "bench", "--only", "cost", "--out", str(tmp_path)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    built = json.loads((tmp_path / "latest.json").read_text())
    assert set(built["items"]) == {"cost"}
    assert built["items"]["cost"]["measurements"]["scenarios"]
    assert (tmp_path / "latest.md").read_text().startswith("# richdoc benchmark report")


def test_the_shard_item_is_registered_and_its_latency_model_follows_the_formula() -> None:
    from bench.runner import ITEMS
    from bench.shards_bench import COLD_START_S, DOCUMENT_TIMEOUT_S, latency_model

    assert ITEMS["shards"] == "bench.shards_bench"
    rows = {(row[0], row[1]): row for row in latency_model(0.0, 0.0)}
    # 1,000 pages at 1.6 pages/s: 625 s of conversion, past docling's document timeout.
    assert DOCUMENT_TIMEOUT_S < 1000 / 1.6
    _, _, whole, shards, waves, sharded, _ = rows[(1000, 1.6)]
    assert whole.endswith("partial") and (shards, waves) == (20, 2)
    # plan start + 2 waves of (cold start + 50 pages / 1.6), nothing for merge and project
    assert sharded == round(COLD_START_S + 2 * (COLD_START_S + 50 / 1.6))
    # 300 pages at 1.6 pages/s finishes whole: 10 + 187.5 s.
    assert rows[(300, 1.6)][2] == "198"


def test_the_chunking_item_is_registered_and_counts_both_chunkers_on_the_golden_documents() -> None:
    from bench.chunking_bench import GOLDEN_CONVERTED, golden_counts, sizes
    from bench.runner import ITEMS

    assert ITEMS["chunking"] == "bench.chunking_bench"
    assert sizes(["ab", "é"]) == {"count": 2, "mean_bytes": 2.0, "max_bytes": 2}
    rows = golden_counts()
    assert [row[0] for row in rows] == list(GOLDEN_CONVERTED)
    assert all(ours >= 1 and theirs >= 1 for _, ours, _, theirs, _ in rows)


def test_the_speed_patches_item_is_run_on_demand_and_its_shares_are_medians_of_rounds() -> None:
    from richdoc_tools.local.moto_fixes import speed

    from bench.__main__ import ALL, ON_DEMAND
    from bench.runner import ITEMS
    from bench.speed_patches_bench import _share, speed_patch_names

    assert ITEMS["speed_patches"] == "bench.speed_patches_bench"
    assert "speed_patches" in ALL and "speed_patches" in ON_DEMAND  # never in a full run
    assert speed_patch_names() == [p.__name__.rpartition(".")[2] for p in speed.PATCHES]
    # Per round: run without the patch / run with every patch; the median of the rounds.
    every = [
        {"wall_s": 10.0, "cpu_s": 5.0},
        {"wall_s": 20.0, "cpu_s": 5.0},
        {"wall_s": 10.0, "cpu_s": 5.0},
    ]
    without = [
        {"wall_s": 11.0, "cpu_s": 6.0},
        {"wall_s": 30.0, "cpu_s": 5.0},
        {"wall_s": 10.0, "cpu_s": 5.5},
    ]
    assert _share(without, every) == {"wall": 0.1, "cpu": 0.1}
