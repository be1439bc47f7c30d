"""One provisioner per CloudFormation resource type, in one module per AWS service.

Importing this package registers every provisioner (``registry.PROVISIONERS``); the
registry module holds what each must declare (see ``registry``).
"""

from richdoc_tools.local.cloudformation.provisioners import (
    awslambda,
    cloudwatch,
    dynamodb,
    events,
    iam,
    kms,
    logs,
    s3,
    sns,
    sqs,
    stepfunctions,
)
from richdoc_tools.local.cloudformation.provisioners.registry import (
    PROVISIONERS,
    NotEmulated,
    ResourceProvisioner,
    provisioner_for,
)

__all__ = [
    "PROVISIONERS",
    "NotEmulated",
    "ResourceProvisioner",
    "awslambda",
    "cloudwatch",
    "dynamodb",
    "events",
    "iam",
    "kms",
    "logs",
    "provisioner_for",
    "s3",
    "sns",
    "sqs",
    "stepfunctions",
]
