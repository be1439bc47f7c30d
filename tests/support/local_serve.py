"""`richdoc local serve` in a process of its own, as a user starts it: its banner, its
endpoint, boto3 clients and `richdoc` commands against it, and its stop (SIGTERM, as a
service manager stops it)."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from richdoc.jobs import JobStore
from tests.support.cli_process import RICHDOC, ROOT, environment

# Any credentials sign a request the server takes; the AWS CLI and boto3 need some.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@dataclass
class Served:
    process: subprocess.Popen[str]
    banner: str
    endpoint: str
    port: int
    log: Path
    session: boto3.Session
    stopped: str = ""  # what it printed after the banner, once stopped

    @property
    def outputs(self) -> dict[str, str]:
        cfn = self.session.client("cloudformation", endpoint_url=self.endpoint)
        [stack] = cfn.describe_stacks(StackName="richdoc")["Stacks"]
        return {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}

    def client(self, service: str) -> Any:
        # The service is named at run time: an untyped client.
        return self.session.client(service, endpoint_url=self.endpoint)  # type: ignore[call-overload]

    @property
    def jobs(self) -> JobStore:
        resource = self.session.resource("dynamodb", endpoint_url=self.endpoint)
        return JobStore(resource.Table(self.outputs["JobsTableName"]))

    def richdoc(self, *argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*RICHDOC, *argv, "--endpoint-url", self.endpoint],
            cwd=ROOT,
            env=environment(drop=("AWS_PROFILE",)),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            **kwargs,
        )

    def wait_for(self, job_ids: list[str]) -> dict[str, Any]:
        from richdoc_tools.local.runtime.events import wait_until

        def terminal() -> bool:
            statuses = self.jobs.statuses(job_ids)
            return len(statuses) == len(job_ids) and all(s.terminal for s in statuses.values())

        assert wait_until(terminal, timeout_s=300, interval_s=0.5), self.jobs.statuses(job_ids)
        return self.jobs.get_many(job_ids)


@contextmanager
def serving(log: Path, *argv: str) -> Iterator[Served]:
    """`richdoc local serve --port 0 --log LOG ARGV...`, until the block ends; then
    stopped, what it printed meanwhile in ``stopped``."""
    process = subprocess.Popen(
        [*RICHDOC, "local", "serve", "--port", "0", "--log", str(log), *argv],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    banner = []
    for line in process.stdout:
        banner.append(line)
        if line.startswith("Ctrl-C stops the stack."):
            break
    text = "".join(banner)
    assert "listening on http://127.0.0.1:" in text, text
    endpoint = text.split("listening on ", 1)[1].split()[0]
    session = boto3.Session(
        aws_access_key_id="any", aws_secret_access_key="any", region_name="us-east-1"
    )
    served = Served(process, text, endpoint, int(endpoint.rsplit(":", 1)[1]), log, session)
    try:
        yield served
    finally:
        process.send_signal(signal.SIGTERM)
        served.stopped, _ = process.communicate(timeout=120)
