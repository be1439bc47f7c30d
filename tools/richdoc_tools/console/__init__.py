"""The operator's console: a web application on 127.0.0.1 over a stack (``richdoc console``).

It shows what the command line shows (jobs, one job with its execution, the dead-letter
queue, a document's graph on its pages) and does what the command line does, through the
same ``Operator`` and the same functions of ``richdoc_tools.ops``. A Flask application
(``app.create_app``, the one module that knows every page group) with its settings
injected (``settings``); one blueprint module per page group (``jobs``, ``job``,
``deadletters``, ``document``, ``fleet``), each page with a JSON twin (``twins``); what a
request says read in one place (``forms``); the protections in one place (``security``);
``server`` runs it on werkzeug's threaded server. The page groups import those leaves,
never the factory or each other, and nothing here imports the embedded stack
(``tests/unit/test_package_boundaries.py``).

The pages' helpers: ``app`` (the application made by ``create_app``), ``summaries`` (a
job as the lists and headers show it), ``execution`` (what an execution's history says of
each state), ``diagram`` (the state machine drawn as the Step Functions console draws
it), ``overlay`` (the graph laid over the document's pages and text) and ``rendering``
(PDF pages rendered to PNG, for the overlay).
"""
