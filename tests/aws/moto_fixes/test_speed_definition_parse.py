"""moto_fixes.speed.definition_parse: ANTLR parses a state machine definition once, where
moto parses it again for every execution; each execution gets fresh components built from
the kept tree, whose nodes answer their text as ANTLR computes it."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any
from unittest import mock

import boto3
from moto import mock_aws
from richdoc_tools.local.emulation import MOTO_CONFIG
from richdoc_tools.local.moto_fixes.speed import definition_parse
from richdoc_tools.local.patch_targets import original

DEFINITION = {
    "StartAt": "Shape",
    "States": {"Shape": {"Type": "Pass", "Parameters": {"n.$": "$.n"}, "End": True}},
}


def _parses_for_three_executions(patched: bool) -> tuple[int, list[Any]]:
    """How often ANTLR parsed the definition, and the executions' outputs."""
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    text = json.dumps(DEFINITION)
    parse = original(definition_parse.TARGET).__func__
    parsed: list[str] = []

    def counted(definition: str) -> Any:
        parsed.append(definition)
        return parse(definition)

    outputs = []
    with mock_aws(config=MOTO_CONFIG), contextlib.ExitStack() as exit_stack:
        exit_stack.enter_context(
            mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(counted))
        )
        if patched:
            definition_parse.install(exit_stack)
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        machine = sfn.create_state_machine(
            name="m", definition=text, roleArn="arn:aws:iam::123456789012:role/s"
        )["stateMachineArn"]
        for n in range(3):
            arn = sfn.start_execution(
                stateMachineArn=machine, name=f"e{n}", input=json.dumps({"n": n})
            )["executionArn"]
            deadline = time.monotonic() + 60
            while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                assert time.monotonic() < deadline
                time.sleep(0.02)
            outputs.append((described["status"], json.loads(described["output"])))
    return parsed.count(text), outputs


def test_with_the_patch_antlr_parses_a_definition_once_for_every_execution() -> None:
    plain_parses, plain = _parses_for_three_executions(patched=False)
    kept_parses, kept = _parses_for_three_executions(patched=True)
    assert kept == plain == [("SUCCEEDED", {"n": n}) for n in range(3)]
    assert plain_parses >= 3  # moto's: one for every execution
    assert kept_parses == 1


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
