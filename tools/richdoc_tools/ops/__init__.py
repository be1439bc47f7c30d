"""The operator's services over a stack, deployed or embedded: one module per thing an
operator does (cancel, redrive, watch, the failure groups, the tier ladder, the
dead-letter queue), all through one ``operator.Operator``.

The command line (``richdoc jobs``, ``richdoc dlq``) and the console call the same
functions; nothing here imports either of them, or the embedded stack
(``tests/unit/test_package_boundaries.py`` holds that).
"""
