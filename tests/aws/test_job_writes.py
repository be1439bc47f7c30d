"""Which jobs were written since the last look (runtime.job_writes), from the jobs
table's stream: what someone waiting for many jobs reads again."""

from __future__ import annotations

import boto3
from richdoc_tools.local.runtime.job_writes import JobWrites
from richdoc_tools.local.runtime.shard_reader import ShardReader

from richdoc.jobs.keys import attempts_prefix, job_key
from tests.support.aws import table_with_stream

REGION = "us-east-1"


def write_job(job_id: str, status: str) -> None:
    key = {name: {"S": value} for name, value in job_key(job_id).items()}
    boto3.client("dynamodb", region_name=REGION).put_item(
        TableName="jobs", Item={**key, "job_status": {"S": status}}
    )


def test_only_the_jobs_written_since_the_last_look_are_named(aws: None) -> None:
    stream = table_with_stream("jobs", sort_key="sk")
    write_job("before", "QUEUED")
    writes = JobWrites(ShardReader(stream))
    assert writes.since_last() == set()  # what was written before it was made is not news
    write_job("a", "QUEUED")
    write_job("b", "QUEUED")
    write_job("a", "RUNNING")
    assert writes.since_last() == {"a", "b"}
    assert writes.since_last() == set()
    boto3.client("dynamodb", region_name=REGION).delete_item(
        TableName="jobs", Key={name: {"S": value} for name, value in job_key("b").items()}
    )
    assert writes.since_last() == {"b"}


def test_an_attempt_s_item_is_not_its_job_s(aws: None) -> None:
    stream = table_with_stream("jobs", sort_key="sk")
    writes = JobWrites(ShardReader(stream))
    attempt = {**job_key("a"), "sk": f"{attempts_prefix(1)}parse#1"}
    boto3.client("dynamodb", region_name=REGION).put_item(
        TableName="jobs", Item={name: {"S": value} for name, value in attempt.items()}
    )
    assert writes.since_last() == set()


def test_more_writes_than_one_read_returns_are_all_named(aws: None) -> None:
    stream = table_with_stream("jobs", sort_key="sk")
    writes = JobWrites(ShardReader(stream), read_size=3)
    for n in range(10):
        write_job(f"job-{n}", "QUEUED")
    assert writes.since_last() == {f"job-{n}" for n in range(10)}
    write_job("job-10", "QUEUED")
    assert writes.since_last() == {"job-10"}
