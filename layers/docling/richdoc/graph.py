"""The richdoc graph: the data model of ``projection.json`` (``richdoc.projection/v1``).

The contract is docs/projection.md. The models are published with the results
(``richdoc_client.projection``; JSON Schema ``schemas/projection.v1.schema.json``) so that
the pipeline writes exactly what applications read; this module names them inside the
pipeline. It lives apart from ``richdoc.projection`` (which builds the graph from a
DoclingDocument) so that readers of a projection, the detect handler first, never import
docling-core: that import is most of a cold start.
"""

from __future__ import annotations

from richdoc_client.projection import (
    Edge,
    Node,
    NodeLabel,
    NotProjected,
    Projection,
    SkippedFeature,
    Span,
    SpanKind,
)

__all__ = [
    "Edge",
    "Node",
    "NodeLabel",
    "NotProjected",
    "Projection",
    "SkippedFeature",
    "Span",
    "SpanKind",
]
