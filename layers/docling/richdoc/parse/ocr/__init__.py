"""OCR of the pages without a text layer, by where each part runs.

* ``mode``: ``OcrMode`` (``RICHDOC_OCR_MODE``), read from the environment, and what
  decides the OCR'd text: the engine's identity, its models and thresholds (pure).
* ``record``: what the DoclingDocument records of OCR (``Transcription`` on an item,
  ``OcrRecord`` on the body), its readers, and ``require_text`` (pure, light: the
  project step reads it).
* ``pages``: which pages of a document OCR reads by the mode, and what they cost the
  plan (pure).
* ``engine``: inside the parse worker only: docling's RapidOCR stage on those pages,
  the native and standard pipelines with it, and the record it writes.
"""
