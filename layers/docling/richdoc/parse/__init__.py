"""The parse step, split by where each part runs.

* ``settings``: limits, the PDF pipeline choice and the processor contract (pure).
* ``step``: the caller's side (the Lambda handler's S3 step, the CLI's file step); it
  never imports docling.
* ``convert``: what runs inside the isolated worker (``richdoc.worker``): docling's
  converters, built once in the zygote, and one conversion per forked child.
* ``reports``: what the child and the caller report.
"""
