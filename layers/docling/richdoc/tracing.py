"""The handlers' X-Ray tracer (Powertools), patched for the one client library they use."""

from __future__ import annotations

from aws_lambda_powertools import Tracer

# The handlers reach AWS through boto3 only. Patching every module X-Ray supports (the
# default) imports httpx, requests and their CLIs at each cold start.
TRACED_MODULES = ("botocore",)


def handler_tracer() -> Tracer:
    return Tracer(patch_modules=TRACED_MODULES)
