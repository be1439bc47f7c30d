"""Parse settings: limits and their precedence, PDF pipeline selection, and the
processor contract that keys the artifact cache."""

from __future__ import annotations

import os
import re

import pytest

import richdoc.parse.settings as parse
from richdoc.formats import DocFormat, format_of
from richdoc.parse.convert import paged_format_option
from richdoc.parse.settings import (
    HANDLER_MB,
    LAYOUT_MODEL_DIR,
    ONE_OCR_PAGE_MB,
    ONE_PAGE_MB,
    OVERSHOOT_MB,
    SMALLEST_ZYGOTE,
    TABLE_MODEL_DIR,
    Conversion,
    ParseLimits,
    ParserSettings,
    Pipeline,
    ZygoteMemory,
    available_cpus,
    ceiling_for_tier,
    cpu_budget,
    lambda_vcpus,
    largest_document_json_mb,
    one_page_mb,
    processor_contract,
    select_pdf_pipeline,
    threads_for,
)
from richdoc.taxonomy import ResourceLimit


def _weights(root, *dirs):
    for name in dirs:
        (root / name).mkdir(parents=True)
        (root / name / "model.safetensors").write_bytes(b"weights")
    return str(root)


# Limits ------------------------------------------------------------------------------


def test_limits_default_to_the_spec_values():
    assert ParseLimits.resolve(environ={}) == ParseLimits(2000, 600.0, 4096)


def test_environment_variables_override_defaults_and_arguments_override_both():
    env = {"RICHDOC_MAX_PAGES": "50", "RICHDOC_TIMEOUT_S": "30", "RICHDOC_MEM_CEILING_MB": "900"}
    assert ParseLimits.resolve(environ=env) == ParseLimits(50, 30.0, 900)
    assert ParseLimits.resolve(max_pages=7, timeout_s=2.5, mem_ceiling_mb=512, environ=env) == (
        ParseLimits(7, 2.5, 512)
    )


# A standard-pipeline zygote once warm, as measured (docs/parse.md).
STANDARD_ZYGOTE = ZygoteMemory(anon_mb=615.0, file_mb=168.0)


def test_a_lambda_memory_tier_derives_the_ceiling_at_run_time_unless_one_is_configured():
    limits = ParseLimits.resolve(memory_tier_mb=3008, environ={})
    assert (limits.mem_ceiling_mb, limits.memory_tier_mb) == (None, 3008)
    assert limits.ceiling(STANDARD_ZYGOTE, Pipeline.STANDARD) == ceiling_for_tier(
        3008, STANDARD_ZYGOTE, Pipeline.STANDARD
    )
    configured = ParseLimits.resolve(
        memory_tier_mb=3008, environ={"RICHDOC_MEM_CEILING_MB": "1000"}
    )
    assert configured.ceiling(STANDARD_ZYGOTE, Pipeline.STANDARD) == 1000
    assert (
        ParseLimits.resolve(memory_tier_mb=3008, mem_ceiling_mb=900, environ={}).ceiling(
            STANDARD_ZYGOTE, Pipeline.NATIVE
        )
        == 900
    )


def test_the_ceiling_is_the_tier_less_the_handler_the_zygotes_unshared_pages_and_margins():
    # tier - handler - (file-backed + 10 % of the anonymous pages) - overshoot - 5 % tier
    zygote = ZygoteMemory(anon_mb=600.0, file_mb=160.0)
    expected = int(3008 - HANDLER_MB - (160 + 60) - OVERSHOOT_MB - 0.05 * 3008)
    assert ceiling_for_tier(3008, zygote, Pipeline.STANDARD) == expected
    # A child's RSS counts the zygote's anonymous pages itself: only a tenth of them (its
    # copies on write) comes off the tier, and all of the file-backed ones.
    more_anon = ZygoteMemory(anon_mb=700.0, file_mb=160.0)
    more_file = ZygoteMemory(anon_mb=600.0, file_mb=260.0)
    assert expected - ceiling_for_tier(3008, more_anon, Pipeline.STANDARD) == 10
    assert expected - ceiling_for_tier(3008, more_file, Pipeline.STANDARD) == 100


@pytest.mark.parametrize("tier", [2048, 3008, 6144, 10240])
def test_the_derived_ceiling_leaves_headroom_for_the_handler_and_the_zygote(tier):
    ceiling = ceiling_for_tier(tier, STANDARD_ZYGOTE, Pipeline.STANDARD)
    assert ceiling <= tier - HANDLER_MB - STANDARD_ZYGOTE.file_mb - OVERSHOOT_MB
    assert ceiling >= STANDARD_ZYGOTE.anon_mb + ONE_PAGE_MB[Pipeline.STANDARD]


def test_bigger_tiers_give_bigger_ceilings():
    ceilings = [
        ceiling_for_tier(tier, STANDARD_ZYGOTE, Pipeline.STANDARD)
        for tier in (2048, 3008, 6144, 10240)
    ]
    assert ceilings == sorted(set(ceilings))


def test_a_tier_that_cannot_hold_one_page_is_refused_as_a_resource_limit():
    # 1,536 MB leaves about 1,040 MB; the standard pipeline's child starts at the
    # zygote's 615 MB of anonymous pages and needs more for a page.
    with pytest.raises(ResourceLimit, match="below the 1255 MB one page needs"):
        ceiling_for_tier(1536, STANDARD_ZYGOTE, Pipeline.STANDARD)
    # The same tier holds a page of the pipelines without models.
    assert ceiling_for_tier(1536, ZygoteMemory(250.0, 120.0), Pipeline.NATIVE) > 250 + 64


def test_a_page_ocr_reads_needs_its_share_of_a_tier_and_a_configured_ceiling_is_taken_as_given():
    tiered = ParseLimits.resolve(memory_tier_mb=3008, environ={})
    needed = tiered.ocr_page_mb(STANDARD_ZYGOTE, Pipeline.STANDARD)
    assert needed == (
        one_page_mb(STANDARD_ZYGOTE, Pipeline.STANDARD) + ONE_OCR_PAGE_MB[Pipeline.STANDARD]
    )
    assert needed == one_page_mb(STANDARD_ZYGOTE, Pipeline.STANDARD, ocr=True)
    configured = ParseLimits(max_pages=10, timeout_s=1.0, mem_ceiling_mb=300)
    assert configured.ocr_page_mb(STANDARD_ZYGOTE, Pipeline.STANDARD) is None


def test_a_configured_ceiling_is_never_refused():
    # An operator's (or a test's) ceiling is used as given: only a tier's is judged.
    limits = ParseLimits(max_pages=10, timeout_s=1.0, mem_ceiling_mb=300, memory_tier_mb=1024)
    assert limits.ceiling(STANDARD_ZYGOTE, Pipeline.STANDARD) == 300


def test_the_largest_json_is_the_smallest_converting_zygotes_ceiling_less_its_pages():
    ceiling = ceiling_for_tier(3008, SMALLEST_ZYGOTE, Pipeline.SIMPLE)
    assert largest_document_json_mb(3008) == ceiling - SMALLEST_ZYGOTE.anon_mb
    standard = ceiling_for_tier(3008, STANDARD_ZYGOTE, Pipeline.STANDARD)
    assert largest_document_json_mb(3008) > standard - STANDARD_ZYGOTE.anon_mb


@pytest.mark.parametrize(
    "kwargs",
    [{"max_pages": 0}, {"timeout_s": -1.0}, {"mem_ceiling_mb": 10}, {"mem_ceiling_mb": None}],
)
def test_limits_out_of_range_are_refused(kwargs):
    with pytest.raises(ValueError, match="out of range"):
        ParseLimits(**{"max_pages": 10, "timeout_s": 1.0, "mem_ceiling_mb": 512, **kwargs})


# PDF pipeline selection ----------------------------------------------------------------


def test_auto_takes_the_light_pipeline_without_weights(tmp_path):
    assert select_pdf_pipeline("auto", None) is Pipeline.LIGHT
    assert select_pdf_pipeline(None, str(tmp_path)) is Pipeline.LIGHT


def test_auto_takes_the_standard_pipeline_where_the_weights_are(tmp_path):
    root = _weights(tmp_path, LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    assert select_pdf_pipeline("auto", root) is Pipeline.STANDARD


def test_half_downloaded_weights_are_not_enough_for_standard(tmp_path):
    root = _weights(tmp_path, LAYOUT_MODEL_DIR)
    (tmp_path / TABLE_MODEL_DIR).mkdir()  # present but empty
    assert select_pdf_pipeline("auto", root) is Pipeline.LIGHT
    with pytest.raises(ValueError, match="needs the layout and table model weights"):
        select_pdf_pipeline("standard", root)


def test_standard_without_its_weights_is_refused_never_read_another_way(tmp_path):
    # The parse image and the template ask for standard: a build without the weights
    # fails every PDF as a configuration error rather than quietly reading it lightly.
    with pytest.raises(ValueError, match="needs the layout and table model weights"):
        select_pdf_pipeline("standard", str(tmp_path))


@pytest.mark.parametrize(
    ("setting", "pipeline"), [("NATIVE", Pipeline.NATIVE), ("light", Pipeline.LIGHT)]
)
def test_native_or_light_can_be_chosen_even_with_weights(tmp_path, setting, pipeline):
    root = _weights(tmp_path, LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    assert select_pdf_pipeline(setting, root) is pipeline


def test_an_unknown_pipeline_setting_is_refused():
    with pytest.raises(ValueError, match="auto, standard, light or native"):
        select_pdf_pipeline("fast", None)


def test_settings_come_from_the_environment(tmp_path):
    root = _weights(tmp_path, LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    settings = ParserSettings.from_env({"DOCLING_ARTIFACTS_PATH": root})
    assert settings == ParserSettings(Pipeline.STANDARD, root)
    assert settings.pipeline_for(DocFormat.PDF) is Pipeline.STANDARD
    assert settings.pipeline_for(DocFormat.PPTX) is Pipeline.SIMPLE
    assert ParserSettings.from_env({}).pipeline_for(DocFormat.PDF) is Pipeline.LIGHT
    light = ParserSettings.from_env({"RICHDOC_PDF_PIPELINE": "light"})
    assert light.pipeline_for(DocFormat.IMAGE) is Pipeline.LIGHT


# The processor contract ----------------------------------------------------------------


def test_the_contract_is_a_short_stable_digest():
    contract = processor_contract(DocFormat.DOCX, Pipeline.SIMPLE)
    assert re.fullmatch(r"[0-9a-f]{16}", contract)
    assert contract == processor_contract(DocFormat.DOCX, Pipeline.SIMPLE)


def test_the_contract_changes_with_format_and_pipeline():
    contracts = {
        processor_contract(DocFormat.DOCX, Pipeline.SIMPLE),
        processor_contract(DocFormat.PPTX, Pipeline.SIMPLE),
        processor_contract(DocFormat.PDF, Pipeline.NATIVE),
        processor_contract(DocFormat.PDF, Pipeline.STANDARD),
        processor_contract(DocFormat.PDF, Pipeline.LIGHT),
    }
    assert len(contracts) == 5


def test_the_light_contract_changes_with_its_model_packages_and_its_rules(monkeypatch):
    before = processor_contract(DocFormat.PDF, Pipeline.LIGHT)
    monkeypatch.setattr(
        parse, "_version", lambda name: "9.9.9" if name == "rapid-table" else "1.2.1"
    )
    assert processor_contract(DocFormat.PDF, Pipeline.LIGHT) != before
    monkeypatch.undo()
    rules = {**parse.PIPELINE_OPTIONS[Pipeline.LIGHT], "paragraphs": {"rule": "changed"}}
    monkeypatch.setitem(parse.PIPELINE_OPTIONS, Pipeline.LIGHT, rules)
    assert processor_contract(DocFormat.PDF, Pipeline.LIGHT) != before


def test_html_and_htm_share_a_contract():
    settings = ParserSettings(Pipeline.NATIVE)
    assert settings.conversion(format_of("a.htm")) == settings.conversion(format_of("b.html"))


def test_a_conversion_is_the_format_its_pipeline_and_their_contract():
    native = ParserSettings(Pipeline.NATIVE)
    assert native.conversion(DocFormat.PDF) == Conversion(
        DocFormat.PDF,
        Pipeline.NATIVE,
        processor_contract(DocFormat.PDF, Pipeline.NATIVE, native.ocr_mode),
    )
    assert native.conversion(DocFormat.DOCX).pipeline is Pipeline.SIMPLE


def test_the_contract_changes_with_the_docling_versions(monkeypatch):
    before = processor_contract(DocFormat.PDF, Pipeline.NATIVE)
    upgraded = {**parse.docling_versions(), "docling": "99.0.0"}
    monkeypatch.setattr(parse, "docling_versions", lambda: upgraded)
    assert processor_contract(DocFormat.PDF, Pipeline.NATIVE) != before


def test_the_contract_changes_with_the_parse_schema(monkeypatch):
    before = processor_contract(DocFormat.MD, Pipeline.SIMPLE)
    monkeypatch.setattr(parse, "PARSE_SCHEMA", "richdoc.parse/2")
    assert processor_contract(DocFormat.MD, Pipeline.SIMPLE) != before


# The standard pipeline, built for real (it cannot run here: no weights) ----------------


@pytest.mark.docling
def test_the_standard_pipeline_is_docling_s_layout_pipeline_with_page_ocr(tmp_path):
    from docling.datamodel.pipeline_options import (
        OcrMode,
        PdfPipelineOptions,
        TableStructureOptions,
    )
    from docling.pipeline.standard_pdf_pipeline import StandardPdfPipeline

    from richdoc.parse.ocr.engine import PageOcrOptions, StandardOcrPdfPipeline

    root = _weights(tmp_path, LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    option = paged_format_option(ParserSettings(Pipeline.STANDARD, root), DocFormat.PDF)
    options = option.pipeline_options
    assert isinstance(options, PdfPipelineOptions)
    assert option.pipeline_cls is StandardOcrPdfPipeline
    assert issubclass(StandardOcrPdfPipeline, StandardPdfPipeline)
    assert (options.do_ocr, options.do_table_structure) == (True, True)
    # Full page: the layout model's regions are not where a scan's text is looked for.
    assert isinstance(options.ocr_options, PageOcrOptions)
    assert options.ocr_options.mode is OcrMode.FULL_PAGE
    assert isinstance(options.table_structure_options, TableStructureOptions)
    assert options.table_structure_options.mode.value == "accurate"
    assert str(options.artifacts_path) == root


@pytest.mark.docling
def test_the_light_pipeline_is_docling_s_layout_pipeline_on_the_bundled_models():
    from docling.datamodel.base_models import InputFormat
    from docling.datamodel.pipeline_options import OcrMode, ThreadedPdfPipelineOptions
    from docling.document_converter import DocumentConverter

    from richdoc.parse.cdla_layout import CdlaLayoutModel, CdlaLayoutOptions
    from richdoc.parse.light_pipeline import LightLayoutPostprocessing, LightOcrPdfPipeline
    from richdoc.parse.ocr.engine import PageOcrModel, StandardOcrPdfPipeline
    from richdoc.parse.slanet_tables import SlanetTableModel, SlanetTableOptions

    option = paged_format_option(ParserSettings(Pipeline.LIGHT), DocFormat.PDF)
    options = option.pipeline_options
    assert isinstance(options, ThreadedPdfPipelineOptions)
    assert option.pipeline_cls is LightOcrPdfPipeline
    assert issubclass(LightOcrPdfPipeline, StandardOcrPdfPipeline)
    assert options.artifacts_path is None  # nothing of docling's own weights
    assert isinstance(options.layout_options, CdlaLayoutOptions)
    assert isinstance(options.table_structure_options, SlanetTableOptions)
    assert options.ocr_options.mode is OcrMode.FULL_PAGE
    # Built from docling's own factories (no weights needed: the sessions are built in
    # the child, from the files inside the wheels).
    converter = DocumentConverter(
        allowed_formats=[InputFormat.PDF], format_options={InputFormat.PDF: option}
    )
    converter.initialize_pipeline(InputFormat.PDF)
    [pipeline] = converter.initialized_pipelines.values()
    assert isinstance(pipeline, LightOcrPdfPipeline)
    assert isinstance(pipeline.layout_model, CdlaLayoutModel)
    assert isinstance(pipeline.table_model, SlanetTableModel)
    assert isinstance(pipeline.ocr_model, PageOcrModel)
    assert isinstance(pipeline.layout_postprocessing_model, LightLayoutPostprocessing)


@pytest.mark.docling
def test_the_standard_pipeline_loads_its_layout_model_from_the_checked_folder(tmp_path):
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    root = _weights(tmp_path, LAYOUT_MODEL_DIR, TABLE_MODEL_DIR)
    option = paged_format_option(ParserSettings(Pipeline.STANDARD, root), DocFormat.PDF)
    converter = DocumentConverter(
        allowed_formats=[InputFormat.PDF], format_options={InputFormat.PDF: option}
    )
    with pytest.raises(FileNotFoundError, match=re.escape(f"{root}/{LAYOUT_MODEL_DIR}/")):
        converter.initialize_pipeline(InputFormat.PDF)


@pytest.mark.docling
def test_the_checked_folders_are_where_docling_tools_downloads_the_models():
    from docling.datamodel.pipeline_options import LayoutObjectDetectionOptions
    from docling.models.stages.table_structure.table_structure_model import TableStructureModel

    layout_repo = LayoutObjectDetectionOptions().model_spec.repo_id
    assert layout_repo.replace("/", "--") == LAYOUT_MODEL_DIR
    assert TableStructureModel._model_repo_folder == TABLE_MODEL_DIR


# Threads ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("running", "cpus", "threads"),
    [(1, 2, 2), (2, 2, 1), (3, 2, 1), (1, 6, 6), (2, 6, 3), (4, 6, 1), (0, 1, 1)],
)
def test_a_conversion_gets_its_share_of_the_cpus_and_at_least_one_thread(running, cpus, threads):
    assert threads_for(running, cpus) == threads


def test_available_cpus_are_the_ones_this_process_may_run_on():
    assert 1 <= available_cpus() <= (os.cpu_count() or 1)


@pytest.mark.parametrize(
    ("memory_mb", "vcpus"), [(1769, 1), (3008, 1), (4096, 2), (6144, 3), (10240, 5), (128, 1)]
)
def test_a_lambda_tier_s_threads_follow_its_memory_not_its_visible_cores(
    memory_mb, vcpus, monkeypatch
):
    # Tier 1 (4,096 MB) shows 3 cores but buys about 2.3 vCPUs of time.
    assert lambda_vcpus(memory_mb) == vcpus
    monkeypatch.setattr(parse, "available_cpus", lambda: 6)
    assert cpu_budget(memory_mb) == vcpus
    assert cpu_budget(None) == 6  # the command line: the machine's
    monkeypatch.setattr(parse, "available_cpus", lambda: 1)
    assert cpu_budget(memory_mb) == 1  # never more than the process may run on


def test_the_contract_of_a_format_richdoc_converts_its_own_way_changes_with_that_way(
    monkeypatch,
):
    """A workbook parsed before its sheets became sections is parsed again, not reused."""
    before = processor_contract(DocFormat.XLSX, Pipeline.SIMPLE)
    docx = processor_contract(DocFormat.DOCX, Pipeline.SIMPLE)
    monkeypatch.setattr(parse, "BACKENDS", {**parse.BACKENDS, DocFormat.XLSX: "changed"})
    assert processor_contract(DocFormat.XLSX, Pipeline.SIMPLE) != before
    assert processor_contract(DocFormat.DOCX, Pipeline.SIMPLE) == docx
