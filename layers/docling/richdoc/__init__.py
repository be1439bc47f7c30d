"""richdoc: deterministic graph projection and temporal-ambiguity detection for documents
parsed by docling, orchestrated by AWS Step Functions."""

__version__ = "0.1.0"
