"""What the commands print: every table and JSON document of the command line, one
module per command group (``run``, ``jobs``, ``dlq``, ``events``, ``deploy``; ``admission``
for the backlog and ``reprocess``), and the
table and JSON helpers they share (``tables``).

These are the modules that read the fields of job and attempt records (``Job``,
``Attempt``) for display. The JSON documents keep their keys and shapes: scripts read
them. Every user-controlled value reaches the terminal through ``richdoc_tools.terminal``.

``detection`` prints ``richdoc detect --explain``: every date mention, and why it counts.
"""
