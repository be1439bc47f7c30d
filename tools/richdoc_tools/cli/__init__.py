"""The ``richdoc`` command line (click).

``richdoc run`` is the main job: the whole pipeline on the embedded stack. The step
commands (parse, project, detect) run exactly the code the Lambda handlers run. The
operator commands (jobs, dlq) work against a deployed stack or ``richdoc local serve``
through the operator's services (``richdoc_tools.ops``); ``richdoc console`` serves them
in a browser (on either, or on an embedded stack it starts).

One module per command group (``run``, ``steps``, ``local``, ``jobs``, ``dlq``,
``console``; ``root`` is the ``richdoc`` group and ``--version``), shared options in
``options``, exit codes in ``errors`` and everything printed as a table or JSON in
``render`` (a module per group, the table helpers in ``render.tables``). Everything
user-controlled is shown through ``richdoc_tools.terminal`` (never as markup or raw
control characters).

Adding a command is one function in its group's module, decorated with
``@<group>.command(...)`` (and ``@with_operator`` when it works against a stack); a new
group is one module whose group ``root`` adds. Commands return their exit code and raise
``UsageError`` or ``Failed`` for the rest. Modules import only click and this package at
the top: what a command needs is imported in its body, since every ``richdoc``
invocation, ``--help`` included, imports all of them.

The other groups: ``deploy`` (before deploying to AWS), ``events`` (a stack's completion
events), ``models`` (``richdoc models synthesize``: weights made here) and ``reprocess``
(finished documents run again, through admission).
"""

from richdoc_tools.cli.root import main

__all__ = ["main"]
