"""The parse step, split by where each part runs.

* ``settings``: limits, the PDF pipeline choice and the processor contract (pure).
* ``step``: the caller's side (the Lambda handler's S3 step, the CLI's file step); it
  never imports docling.
* ``tasks``: what the caller asks of a worker child (convert, inspect).
* ``convert``: what runs inside the isolated worker (``richdoc.worker``): docling's
  converters, built once in the zygote, and one task per forked child; ``ocr.engine``
  (OCR, and the native and standard pipelines with it) and ``light_pipeline`` (with
  ``cdla_layout``, ``slanet_tables``: the light pipeline; ``text_grid``: the columns and
  rows a table's words form on the page, which check SLANet-plus's) extend docling there.
* ``paragraphs``, ``light_rules``: which lines make a paragraph, and the light
  pipeline's rules on its layout model's regions (pure); ``headings``: heading levels
  over a whole document (docling-core only: the merge runs it too).
* ``reports``: what the child and the caller report.
* ``shard_plan``: how a long document splits into page-range shards (pure).
* ``plan_step`` and ``merge_step``: the Plan and Merge states around shard parses;
  ``merge``: joining the shards' DoclingDocuments (docling-core only).
* ``ocr``: OCR of the pages without a text layer (its map names its modules: the mode,
  the record, the pages it reads, the engine).
* ``onnx_sessions``: the light pipeline's onnxruntime sessions, built in the child.
* ``workbook``: docling's XLSX backend, each sheet's name its heading, dates as ISO dates
  (inside the worker).
* ``classify``: what an exception raised while docling converts means for the job.
* ``escalation``: a tier escalated to must have more memory than the one that ran out.
"""
