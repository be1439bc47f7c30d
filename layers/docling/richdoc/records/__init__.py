"""The records function's logic: the job record transitions the state machine asks for
(``actions``), the backstops that finish a run the definition could not (``backstops``:
the reconciler of executions that ended outside the definition's routes, and the sweep of
jobs left open), and what the function is asked (``requests``).

``functions/records/app.py`` is the Lambda adapter: it parses the event
(``requests.parse_request``) and hands it to the ``answer`` of the half it is for.

``calls`` holds the models of what the state machine asks the function and what it
answers (the failure path's payloads, one action per call), apart from the steps'
contracts.

``sweep_walk`` is the sweep's walk over the open jobs: a page at a time, to a time budget,
resumed where the last sweep stopped.
"""
