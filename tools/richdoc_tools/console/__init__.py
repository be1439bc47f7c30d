"""The operator's console: a web application on 127.0.0.1 over a stack (``richdoc console``).

It shows what the command line shows (jobs, one job with its execution, the dead-letter
queue, a document's graph on its pages) and does what the command line does, through the
same ``Operator``. A Flask application (``app.create_app``) with its configuration
injected; one module per page group (``jobs``, ``job``, ``deadletters``, ``document``,
``fleet``), each page with a JSON twin (``twins``); the protections in one place
(``security``); ``server`` runs it on werkzeug's threaded server.
"""
