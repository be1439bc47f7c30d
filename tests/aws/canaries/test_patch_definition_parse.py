"""Canary: moto parses the definition per execution, and builds the components from the
tree the way the kept-tree cache does (patches.definition_parse)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import definition_parse


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
