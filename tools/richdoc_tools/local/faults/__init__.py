"""The failures the embedded stack makes on purpose, two kinds with a word each:

* **injected faults** (``injected``): ``--faults RATE[,seed=N]``, AWS failing at a rate,
  each fault decided by a hash of the work, reproducibly;
* **scripted failures** (``scripted``): what a test scripts for chosen invocations and
  SendMessage requests, one failure consumed per matching invocation or request.

``invocations`` is the one place the Lambda runtime asks what an invocation meets."""
