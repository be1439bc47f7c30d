"""richdoc's tools for people: the ``richdoc`` command line (``cli``), the embedded AWS
stack (``local``), the operator's web console (``console``) and the operator's services
that the command line and the console share (``ops``).

Nothing here runs in Lambda: the functions ship only the ``richdoc`` package (the layer
and the parse image). These modules may use what Lambda lacks (moto, samtranslator,
rich).
"""
