"""Lambda: layers, functions, event source mappings, permissions, async invoke configs.

The emulated Lambda service stores a placeholder package for every function and layer;
invocations run the repository's handlers (see ``richdoc_tools.local.runtime.lambdas``).
"""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions, tags

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


def _placeholder_zip() -> bytes:
    """Code the emulated Lambda service stores; invocations run the repository's handlers."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "README.txt", "richdoc embedded stack: see richdoc_tools.local.runtime.lambdas\n"
        )
    return buffer.getvalue()


@provisions(
    "AWS::Lambda::LayerVersion",
    consumes=("LayerName", "CompatibleRuntimes"),
    inert=("Description", "CompatibleArchitectures", "LicenseInfo"),
    not_emulated={"Content": "the layer's code is imported from the checkout (layers/docling)"},
)
def _lambda_layer(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    layer = deployment.client("lambda").publish_layer_version(
        LayerName=props.get("LayerName", logical_id),
        Content={"ZipFile": _placeholder_zip()},
        CompatibleRuntimes=props.get("CompatibleRuntimes", []),
    )
    deployment.created(logical_id, layer["LayerVersionArn"])


@provisions(
    "AWS::Lambda::Function",
    consumes=(
        "FunctionName",
        "Role",
        "MemorySize",
        "Timeout",
        "Environment",
        "Tags",
        "TracingConfig",
        "PackageType",
        "Code",
        "ImageConfig",
        "Runtime",
        "Handler",
        "ReservedConcurrentExecutions",  # LambdaRuntime's slots per function
        "LoggingConfig",
        "Layers",
        "EphemeralStorage",
    ),
    inert=("Description",),
    not_emulated={"Architectures": "handlers run on this machine's CPU, in this process"},
)
def _lambda_function(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("FunctionName") or deployment.physical_name(logical_id, 64)
    kwargs: dict[str, Any] = {
        "FunctionName": name,
        "Role": props["Role"],
        "MemorySize": int(props.get("MemorySize", 128)),
        "Timeout": int(props.get("Timeout", 3)),
        "Environment": {
            "Variables": {
                k: str(v) for k, v in props.get("Environment", {}).get("Variables", {}).items()
            }
        },
        "Tags": {t["Key"]: t["Value"] for t in tags(props)},
        "TracingConfig": props.get("TracingConfig", {"Mode": "PassThrough"}),
    }
    if props.get("PackageType") == "Image":
        kwargs.update(
            PackageType="Image",
            Code={"ImageUri": props["Code"]["ImageUri"]},
            ImageConfig=props.get("ImageConfig", {}),
        )
    else:
        kwargs.update(
            Runtime=props["Runtime"],
            Handler=props["Handler"],
            Code={"ZipFile": _placeholder_zip()},
            Layers=props.get("Layers", []),
        )
    if "EphemeralStorage" in props:
        kwargs["EphemeralStorage"] = {"Size": int(props["EphemeralStorage"]["Size"])}
    if "LoggingConfig" in props:
        kwargs["LoggingConfig"] = props["LoggingConfig"]
    client = deployment.client("lambda")
    function = client.create_function(**kwargs)
    if "ReservedConcurrentExecutions" in props:
        # Read back by the Lambda runtime (richdoc_tools.local.runtime.lambdas) to size the
        # function's invocation slots.
        client.put_function_concurrency(
            FunctionName=name,
            ReservedConcurrentExecutions=int(props["ReservedConcurrentExecutions"]),
        )
    deployment.created(logical_id, name, Arn=function["FunctionArn"])


@provisions(
    "AWS::Lambda::EventSourceMapping",
    consumes=(
        "EventSourceArn",
        "FunctionName",
        "BatchSize",
        "MaximumBatchingWindowInSeconds",
        "FunctionResponseTypes",
        "ScalingConfig",  # one poller per mapping is always within MaximumConcurrency
        # Streams (richdoc_tools.local.runtime.streams reads them back from the mapping):
        "StartingPosition",
        "MaximumRetryAttempts",
        "MaximumRecordAgeInSeconds",
        "BisectBatchOnFunctionError",
        "FilterCriteria",
        "DestinationConfig",
    ),
)
def _lambda_event_source(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # Created disabled: moto delivers SQS messages synchronously inside SendMessage and
    # ignores batchItemFailures (and stream records inside the write:
    # patches.dynamodb_streams); richdoc_tools.local.runtime.events polls with the mapping's
    # settings.
    kwargs: dict[str, Any] = {
        "EventSourceArn": props["EventSourceArn"],
        "FunctionName": props["FunctionName"],
        "BatchSize": int(props.get("BatchSize", 10)),
        "MaximumBatchingWindowInSeconds": int(props.get("MaximumBatchingWindowInSeconds", 0)),
        "FunctionResponseTypes": props.get("FunctionResponseTypes", []),
        "Enabled": False,
    }
    for name in ("StartingPosition", "FilterCriteria", "DestinationConfig"):
        if name in props:
            kwargs[name] = props[name]
    for name in ("MaximumRetryAttempts", "MaximumRecordAgeInSeconds"):
        if name in props:
            kwargs[name] = int(props[name])
    if "BisectBatchOnFunctionError" in props:
        kwargs["BisectBatchOnFunctionError"] = bool(props["BisectBatchOnFunctionError"])
    if scaling := props.get("ScalingConfig"):
        kwargs["ScalingConfig"] = {"MaximumConcurrency": int(scaling["MaximumConcurrency"])}
    mapping = deployment.client("lambda").create_event_source_mapping(**kwargs)
    deployment.created(logical_id, mapping["UUID"])


@provisions(
    "AWS::Lambda::Permission", consumes=("FunctionName", "Action", "Principal", "SourceArn")
)
def _lambda_permission(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    kwargs = {
        "FunctionName": props["FunctionName"],
        "StatementId": logical_id,
        "Action": props["Action"],
        "Principal": props["Principal"],
    }
    if "SourceArn" in props:
        kwargs["SourceArn"] = props["SourceArn"]
    deployment.client("lambda").add_permission(**kwargs)
    deployment.created(logical_id, logical_id)


@provisions(
    "AWS::Lambda::EventInvokeConfig",
    consumes=(
        "FunctionName",
        "Qualifier",
        "MaximumRetryAttempts",
        "MaximumEventAgeInSeconds",
        "DestinationConfig",
    ),
)
def _lambda_event_invoke_config(
    deployment: Deployment, logical_id: str, props: dict[str, Any]
) -> None:
    # Read back by richdoc_tools.local.runtime.events, which invokes asynchronously the way Lambda
    # does: the retries, then the OnFailure destination.
    config = {
        key: props[key]
        for key in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds", "DestinationConfig")
        if key in props
    }
    deployment.client("lambda").put_function_event_invoke_config(
        FunctionName=props["FunctionName"], Qualifier=props.get("Qualifier", "$LATEST"), **config
    )
    deployment.created(logical_id, logical_id)
