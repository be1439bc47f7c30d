"""richdoc's tools for people: the ``richdoc`` command line (``cli``), the embedded AWS
stack (``local``), the operator's web console (``console``) and the operator's services
that the command line and the console share (``ops``).

Nothing here runs in Lambda: the functions ship only the ``richdoc`` package (the layer
and the parse image). These modules may use what Lambda lacks (moto, samtranslator,
rich).

Beside them: ``run`` (the main job, locally: files -> the whole pipeline -> results),
``terminal`` (user text on the terminal: data, never markup or control), ``preflight``
and ``upgrades`` (``richdoc deploy check``: what would make a deploy fail, and what an
update of the deployed stack asks of AWS), ``weights`` (model weights for docling's
standard PDF pipeline made here, with no model hub) and ``torchvision_compat`` (PyPI's
torchvision beside the CPU build of torch, in development).
"""
