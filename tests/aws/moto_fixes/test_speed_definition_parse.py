"""Canary: moto parses the definition per execution, and builds the components from the
tree the way the kept-tree cache does (moto_fixes.speed.definition_parse)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.moto_fixes.speed import definition_parse


def test_definition_parse_patch_point_returns_program_and_tree_and_runs_per_execution() -> None:
    import moto.stepfunctions.parser.asl.parse.asl_parser as asl_parser
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

    assert definition_parse.TARGET == (
        "moto.stepfunctions.parser.asl.parse.asl_parser.AmazonStateLanguageParser.parse"
    )
    source = inspect.getsource(asl_parser)
    assert "def parse(definition: str) -> tuple[EvalComponent, ParserRuleContext]:" in source
    # The cache rebuilds components from a kept tree exactly as parse does.
    assert "preprocessor = Preprocessor()\n        program = preprocessor.visit(tree)" in source
    entry = inspect.getsource(ExecutionWorker._get_evaluation_entrypoint)
    assert "AmazonStateLanguageParser.parse(" in entry


def test_moto_formats_the_whole_programs_text_before_it_knows_of_an_error() -> None:
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    for visit in (Preprocessor.visitProgram_decl, Preprocessor.visitItem_processor_decl):
        source = inspect.getsource(visit)
        assert "raise_on_missing=ValueError(" in source
        assert "{ctx.getText()}" in source


def test_every_node_of_a_kept_tree_answers_its_text_as_antlr_computes_it() -> None:
    import json
    import re
    from pathlib import Path

    from antlr4.tree.Tree import TerminalNode
    from moto.stepfunctions.parser.asl.component.program.program import Program
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    definition = (Path(__file__).parents[3] / "statemachine" / "pipeline.asl.json").read_text()
    definition = re.sub(
        r"\$\{(\w+)\}", r"arn:aws:lambda:us-east-1:123456789012:function:\1", definition
    )
    json.loads(definition)
    _, tree = AmazonStateLanguageParser.parse(definition)

    def nodes(node: object) -> list[object]:
        children = [] if isinstance(node, TerminalNode) else getattr(node, "children", None) or []
        return [node, *(n for child in children for n in nodes(child))]

    computed = [(node, node.getText()) for node in nodes(tree)]  # type: ignore[attr-defined]
    kept = definition_parse.with_texts(tree)
    assert kept is tree
    assert all(node.getText() == text for node, text in computed)  # type: ignore[attr-defined]
    remembered = [node for node in nodes(tree) if "getText" in getattr(node, "__dict__", {})]
    assert len(remembered) > 1000  # every rule node of the pipeline, not a few
    assert isinstance(Preprocessor().visit(tree), Program)
