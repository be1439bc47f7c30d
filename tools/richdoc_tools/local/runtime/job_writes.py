"""Which jobs were written since the last look, read from the jobs table's stream.

Someone waiting for many jobs (``EmbeddedStack.wait_for_jobs``) needs to read again only
the jobs written since its last read: the stream has a record for every write of a job
item, in order. The stack reads the shard in process, as its operator would, unchecked.
"""

from __future__ import annotations

from richdoc.jobs.keys import JOB_SK, job_id_of
from richdoc_tools.local.runtime.shard_reader import MAX_RECORDS, ShardReader


class JobWrites:
    """The stream from the moment this is made on."""

    def __init__(self, reader: ShardReader, read_size: int = MAX_RECORDS) -> None:
        self.reader = reader
        self.read_size = read_size
        self.checkpoint = reader.last_sequence()

    def since_last(self) -> set[str]:
        """The jobs whose item was written since the last call (since this was made, the
        first time); attempts' items are not jobs'."""
        written: set[str] = set()
        while True:
            records = self.reader.records_after(self.checkpoint, self.read_size)
            for record in records:
                keys = record["dynamodb"]["Keys"]
                if keys["sk"]["S"] == JOB_SK:
                    written.add(job_id_of(keys["pk"]["S"]))
            if records:
                self.checkpoint = int(records[-1]["dynamodb"]["SequenceNumber"])
            if len(records) < self.read_size:
                return written
