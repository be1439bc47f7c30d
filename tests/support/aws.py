"""Single template resources created in moto, for tests that need one table or queue
rather than the whole embedded stack."""

from __future__ import annotations

from typing import Any

import boto3
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.deploy import Deployment
from richdoc_tools.local.provisioners import PROVISIONERS
from richdoc_tools.local.template import Template

REGION = "us-east-1"


def provision_one(template: Template, logical_id: str) -> Any:
    """Create a single resource of the template (its properties must not reference others)."""
    deployment = Deployment(
        Clients(boto3.Session(), region=REGION),
        template,
        stack_name="unit",
        region=REGION,
        account="123456789012",
    )
    resource = template.resources[logical_id]
    props = deployment.resolver.resolve(resource.get("Properties", {}))
    PROVISIONERS[resource["Type"]](deployment, logical_id, props)
    return deployment.deployed.refs[logical_id]
