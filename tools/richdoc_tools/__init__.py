"""richdoc's tools for people: the ``richdoc`` command line, the embedded AWS stack
(``richdoc_tools.local``) and the operator commands.

Nothing here runs in Lambda: the functions ship only the ``richdoc`` package (the layer
and the parse image). These modules may use what Lambda lacks (moto, samtranslator,
rich).
"""
