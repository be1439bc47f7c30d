"""What docs/consumers.md and README.md print for consumers, taken from the pages as
printed (their ``<!-- consumer-example:NAME -->`` blocks), the subscription they
describe (a queue of the consumer's own, with the page's queue policy, target of a rule of
its own), and a shell that runs their shell blocks as a reader pastes them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "consumers.md"
README = ROOT / "README.md"
# The AWS CLI the docs' commands run with (`make pytest` installs it: awscli v1 pins its
# own botocore, so it has an environment of its own).
AWS_CLI = ROOT / ".venv-awscli" / "bin" / "aws"
# The shell blocks of each page that run an AWS CLI command, in page order: every one of
# them runs as printed in tests/e2e/test_documented_commands_e2e.py.
AWS_CLI_BLOCKS = {
    README: ("upload", "subscribe"),
    PAGE: ("subscribe", "subscribe-tenant", "replay", "local", "metadata"),
}
_BLOCK = re.compile(r"<!-- consumer-example:([a-z-]+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)
_FENCED = re.compile(r"(?:<!-- consumer-example:([a-z-]+) -->\n)?```(sh|bash)\n(.*?)```", re.DOTALL)
_AWS_COMMAND = re.compile(r"(^|[\s(;|&])aws\s", re.MULTILINE)


def documented(name: str, page: Path = PAGE) -> str:
    """The code block printed right after ``<!-- consumer-example:NAME -->``."""
    blocks = dict(_BLOCK.findall(page.read_text()))
    assert name in blocks, f"{page.relative_to(ROOT)} prints no consumer-example:{name}"
    return blocks[name]


def shell_blocks(page: Path) -> list[tuple[str | None, str]]:
    """Every shell block of the page: its consumer-example name (None: unnamed) and text."""
    return [(name or None, text) for name, _, text in _FENCED.findall(page.read_text())]


def runs_aws(block: str) -> bool:
    """Whether a shell block runs an AWS CLI command."""
    code = "\n".join(line.split("#", 1)[0] for line in block.splitlines())
    return _AWS_COMMAND.search(code) is not None


def queue_policy(queue_arn: str, rule_arn: str) -> str:
    """The page's queue policy for this queue and rule (checked to be JSON)."""
    text = documented("queue-policy").replace("QUEUE_ARN", queue_arn).replace("RULE_ARN", rule_arn)
    return json.dumps(json.loads(text))


def attributes_file(block: str, variables: dict[str, str]) -> dict[str, Any]:
    """The queue attributes a subscribe block writes (its ``<<EOF`` document), with the
    shell's variables as given."""
    match = re.search(r"<<EOF\n(.*?)\nEOF\n", block, re.DOTALL)
    assert match is not None, "the block writes no attributes file"
    text = match[1]
    for name, value in variables.items():
        text = text.replace(f"${name}", value)
    # An unquoted here-document keeps backslashes before quotes: they are JSON's escapes.
    attributes: dict[str, Any] = json.loads(text)
    return attributes


def subscribe(sqs: Any, events: Any, bus: str, name: str, pattern: str) -> str:
    """A queue named ``name``, target of rule ``name`` on ``bus``, under the page's queue
    policy; the queue's URL."""
    url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    rule = events.put_rule(Name=name, EventBusName=bus, EventPattern=pattern)["RuleArn"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": queue_policy(arn, rule)})
    events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "queue", "Arn": arn}])
    return url


@dataclass
class DocumentedShell:
    """Shell blocks run as a reader pastes them into one terminal, in order: each in bash
    (``set -euo pipefail``) after the page's ``local`` block (the shell pointed at
    `richdoc local serve` on ``port``), in ``workdir``, with the AWS CLI on the PATH; the
    variables a block sets are there for the next (functions are not: each block defines
    those it uses)."""

    workdir: Path
    port: int

    def __post_init__(self) -> None:
        assert AWS_CLI.is_file(), f"{AWS_CLI} is missing: `make pytest` installs the AWS CLI"
        self.state = self.workdir / ".shell-variables"
        self.state.write_text("")
        self.local = documented("local").replace(":4566", f":{self.port}")

    def run(self, block: str) -> subprocess.CompletedProcess[str]:
        script = "\n".join(
            [
                "set -euo pipefail",
                "set -a",  # every variable set is exported, so `export -p` keeps it
                f"source {self.state}",
                self.local,
                block,
                f"export -p > {self.state}",
            ]
        )
        bash = shutil.which("bash")
        assert bash is not None
        done = subprocess.run(
            [bash, "-c", script],
            cwd=self.workdir,
            env={"PATH": f"{AWS_CLI.parent}:/usr/bin:/bin", "HOME": str(self.workdir)},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"{block}\nexit {done.returncode}: {done.stderr[-3000:]}"
        return done

    def variable(self, name: str) -> str:
        value = self.run(f'printf %s "${{{name}}}"').stdout
        assert value, f"the blocks set no {name}"
        return value
