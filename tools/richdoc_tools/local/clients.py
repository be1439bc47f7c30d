"""The embedded stack's boto3 clients: one per service, typed per service.

boto3 clients are thread-safe and cost more to create than most calls made with them, so
the stack, its deployment and its event loops share one client per service for the
stack's life. ``clients("s3")`` is typed as types-boto3's ``S3Client``, and so on for every
service the stack uses (the stubs are imported for the type checker only).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Literal, overload

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from botocore.client import BaseClient
    from types_boto3_cloudformation import CloudFormationClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_dynamodb import DynamoDBClient
    from types_boto3_dynamodb.service_resource import Table
    from types_boto3_dynamodbstreams import DynamoDBStreamsClient
    from types_boto3_events import EventBridgeClient
    from types_boto3_iam import IAMClient
    from types_boto3_kms import KMSClient
    from types_boto3_lambda import LambdaClient
    from types_boto3_logs import CloudWatchLogsClient
    from types_boto3_s3 import S3Client
    from types_boto3_secretsmanager import SecretsManagerClient
    from types_boto3_sns import SNSClient
    from types_boto3_sqs import SQSClient
    from types_boto3_stepfunctions import SFNClient

Service = Literal[
    "cloudformation",
    "cloudwatch",
    "dynamodb",
    "dynamodbstreams",
    "events",
    "iam",
    "kms",
    "lambda",
    "logs",
    "s3",
    "secretsmanager",
    "sns",
    "sqs",
    "stepfunctions",
]


# botocore sends DynamoDB Streams requests that name an ARN to the ARN's account endpoint
# (<account>.streams-ddb.<region>.amazonaws.com), which the in-process emulation does not
# serve; the regional endpoint answers the same API.
CLIENT_CONFIG = Config(account_id_endpoint_mode="disabled")


class Clients:
    """``clients(service)``: the client of one service, made on first use and kept."""

    def __init__(
        self, session: boto3.Session, *, region: str, endpoint_url: str | None = None
    ) -> None:
        self.session = session
        self.region = region
        self.endpoint_url = endpoint_url
        self._made: dict[str, BaseClient] = {}
        self._lock = threading.Lock()  # a boto3 session is not thread-safe

    @overload
    def __call__(self, service: Literal["cloudformation"]) -> CloudFormationClient: ...
    @overload
    def __call__(self, service: Literal["cloudwatch"]) -> CloudWatchClient: ...
    @overload
    def __call__(self, service: Literal["dynamodb"]) -> DynamoDBClient: ...
    @overload
    def __call__(self, service: Literal["dynamodbstreams"]) -> DynamoDBStreamsClient: ...
    @overload
    def __call__(self, service: Literal["events"]) -> EventBridgeClient: ...
    @overload
    def __call__(self, service: Literal["iam"]) -> IAMClient: ...
    @overload
    def __call__(self, service: Literal["kms"]) -> KMSClient: ...
    @overload
    def __call__(self, service: Literal["lambda"]) -> LambdaClient: ...
    @overload
    def __call__(self, service: Literal["logs"]) -> CloudWatchLogsClient: ...
    @overload
    def __call__(self, service: Literal["s3"]) -> S3Client: ...
    @overload
    def __call__(self, service: Literal["secretsmanager"]) -> SecretsManagerClient: ...
    @overload
    def __call__(self, service: Literal["sns"]) -> SNSClient: ...
    @overload
    def __call__(self, service: Literal["sqs"]) -> SQSClient: ...
    @overload
    def __call__(self, service: Literal["stepfunctions"]) -> SFNClient: ...

    def __call__(self, service: Service) -> BaseClient:
        with self._lock:
            client = self._made.get(service)
            if client is None:
                client = self._made[service] = self.session.client(
                    service,
                    region_name=self.region,
                    endpoint_url=self.endpoint_url,
                    config=CLIENT_CONFIG,
                )
        return client

    def table(self, name: str) -> Table:
        """A DynamoDB table resource, new on every call: boto3 resources are not
        thread-safe, so each thread keeps its own."""
        with self._lock:
            return self.session.resource(
                "dynamodb", region_name=self.region, endpoint_url=self.endpoint_url
            ).Table(name)
