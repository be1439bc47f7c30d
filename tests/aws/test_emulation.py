"""Canary: the server mode serves the application moto's own threaded server serves
(emulation.SERVER_APP_TARGET)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.emulation import SERVER_APP_TARGET


def test_server_patch_point_is_the_app_moto_serves() -> None:
    from moto.moto_server import threaded_moto_server

    assert SERVER_APP_TARGET == "moto.moto_server.werkzeug_app"
    source = inspect.getsource(threaded_moto_server.ThreadedMotoServer._server_entry)
    assert "app = DomainDispatcherApplication(create_backend_app)" in source
    assert "request_handler=MotoRequestHandler" in source
