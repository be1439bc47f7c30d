"""The operator's services over a stack, deployed or embedded: one module per thing an
operator does (find, show and delete jobs, cancel, redrive, watch, the failure groups,
the tier ladder, the dead-letter queue, executions, completion events), each a function
of one ``operator.Operator``: the stack's resources and clients, nothing else.

The command line (``richdoc jobs``, ``richdoc dlq``) and the console call the same
functions; nothing here imports either of them, or the embedded stack, and the modules
import each other in no circle, not even for type checking
(``tests/unit/test_package_boundaries.py`` holds that).
"""
