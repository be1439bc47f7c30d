"""The isolated worker: a single-threaded zygote that forks one child per task.

Why: a parse can exhaust memory, crash in native code or run forever, and the process
that asked for it (a Lambda handler, the CLI, or one thread of the embedded local stack)
must survive and report a typed failure. A fresh interpreter per task would pay
docling's 3.5 to 6.6 s import every time; forking the caller is unsafe because it may be
multi-threaded. So the caller starts a zygote once (a fresh interpreter, without cloud
credentials), the zygote imports and warms up the heavy modules, and forks a child per
task. Three processes, one module each, and the wire between them:

* ``client``: the caller's side (``ForkServer``): starts, feeds and replaces the zygote;
  turns how a child ended into a value or a ``richdoc.taxonomy`` error.
* ``zygote``: the single-threaded server (``python -m richdoc.worker.zygote``): the
  spare child, the timeout and memory ceiling of every child, reaping.
* ``child``: one task: privileges dropped, no core dumps, the target run, the result
  written, a taxonomy exit code.
* ``protocol``: frames, descriptor passing and the typed messages.

Nothing is imported here, so that ``python -m richdoc.worker.zygote`` loads only what
the zygote needs.
"""
