"""Canary: every moto path that runs a function body goes through the method the Lambda
runtime replaces (patches.lambda_invoke)."""

from __future__ import annotations

import inspect

from richdoc_tools.local.patches import lambda_invoke


def test_lambda_invoke_patch_point_exists_with_the_expected_shape() -> None:
    import moto.awslambda.models

    # Read moto's source, not the class: the stack may already have patched it.
    assert lambda_invoke.TARGET == "moto.awslambda.models.LambdaFunction._invoke_lambda"
    source = inspect.getsource(moto.awslambda.models)
    assert "class LambdaFunction(" in source
    assert "def _invoke_lambda(self, event: str | None = None) -> tuple[str, bool, str]:" in source
    assert source.count("self._invoke_lambda(") >= 1
