"""The AWS CLI commands README.md and docs/consumers.md print are the ones the tests run:
every shell block of theirs that runs `aws` is one tests/e2e/test_documented_commands_e2e.py
runs as printed; and the queue attributes the subscription writes hold the page's queue
policy as the JSON string SQS takes."""

from __future__ import annotations

import json

import pytest

from tests.support.consumer_docs import (
    AWS_CLI_BLOCKS,
    PAGE,
    README,
    attributes_file,
    documented,
    queue_policy,
    runs_aws,
    shell_blocks,
)
from tests.support.paths import ROOT


@pytest.mark.parametrize("page", [README, PAGE], ids=lambda page: page.name)
def test_every_shell_block_that_runs_the_aws_cli_is_one_the_tests_run(page) -> None:
    running = [name for name, block in shell_blocks(page) if runs_aws(block)]
    assert running == list(AWS_CLI_BLOCKS[page]), page.relative_to(ROOT)


@pytest.mark.parametrize(
    ("page", "variables"),
    [
        (README, {"QUEUE_ARN": "arn:q", "RULE_ARN": "arn:r"}),
        (PAGE, {"1": "arn:q", "RULE_ARN": "arn:r"}),
    ],
    ids=["README.md", "consumers.md"],
)
def test_the_queue_attributes_hold_the_pages_policy_as_a_json_string(page, variables) -> None:
    attributes = attributes_file(documented("subscribe", page), variables)
    assert list(attributes) == ["Policy"] and isinstance(attributes["Policy"], str)
    assert json.loads(attributes["Policy"]) == json.loads(queue_policy("arn:q", "arn:r"))


def test_a_comment_or_a_word_is_no_aws_command() -> None:
    assert runs_aws("X=$(aws sqs create-queue --queue-name q)\n")
    assert runs_aws('aws() { command aws --endpoint-url "$E" "$@"; }')
    assert not runs_aws("richdoc events tail  # the same events as aws events ...\n")
    assert not runs_aws("pip install ./layers/docling/richdoc_client\n")
