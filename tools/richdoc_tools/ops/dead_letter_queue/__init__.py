"""The dead-letter queue, as operators see it: read without consuming (``reading``),
redrive and discard (``acting``).

Redrive is an SQS ``StartMessageMoveTask`` with the ingest queue as destination (messages
the state machine sent have no SQS-recorded source queue), on AWS and on the embedded
stack alike. What the messages carry is defined by ``richdoc.deadletter``.

Three kinds of message wait there, and ``dlq list`` and ``dlq redrive`` tell them apart:
a dead-lettered run (sent by the state machine with ``richdoc.*`` attributes; redriving
starts the job's next run); an S3 notification SQS moved after the starter failed on
every delivery (kind ``undelivered``; redriving starts or resumes its job); and a
malformed message that is no S3 notification at all (kind ``malformed``; redrive moves it
too, as AWS's move task would, and it fails again and comes back).

The console works the queue message by message: the dead-lettered jobs come from the job
records, which carry each message's id (``reading.waiting_dead_letters``), so listing
receives nothing and the age alarm keeps seeing the oldest message's age; only an action
on chosen messages (``acting.redrive_chosen``, ``acting.discard``) receives, to find them.
"""
