"""One provisioner per CloudFormation resource type, in one module per AWS service.

Importing this package registers every provisioner (``registry.PROVISIONERS``); the
registry module holds what each must declare (see ``registry``).

The services: ``awslambda`` (layers, functions, event source mappings, permissions),
``cloudwatch`` (alarms), ``dynamodb`` (tables, indexes, streams), ``events`` (buses,
archives, rules, connections and API destinations), ``iam`` (roles and policies),
``kms`` (the alarm topic's key), ``logs`` (log groups, resource policies), ``s3``
(buckets and their policies), ``sns`` (the alarm topic), ``sqs`` (queues and their
policies) and ``stepfunctions`` (the state machine).
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
