"""Lambda: layers, functions, event source mappings, permissions, async invoke configs.

The emulated Lambda service stores a placeholder package for every function and layer;
invocations run the repository's handlers (see ``richdoc_tools.local.runtime.lambdas``).
"""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    replaced_on_any_change,
    tags,
    updates,
)

if TYPE_CHECKING:
    from types_boto3_lambda import LambdaClient

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


replaced_on_any_change("AWS::Lambda::LayerVersion")  # every change publishes a version


@deletes("AWS::Lambda::LayerVersion")
def _delete_layer(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    name, _, version = resource.ref.rpartition(":")
    layer = name.rpartition(":layer:")[2]
    deployment.client("lambda").delete_layer_version(LayerName=layer, VersionNumber=int(version))


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
        "ReservedConcurrentExecutions",  # LambdaRuntime's reserved concurrency per function
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
        **_configuration(props),
        "Tags": {t["Key"]: t["Value"] for t in tags(props)},
        "Code": _code(props),
    }
    if props.get("PackageType") == "Image":
        kwargs["PackageType"] = "Image"
    client = deployment.client("lambda")
    function = client.create_function(**kwargs)
    _concurrency(client, name, props)
    deployment.created(logical_id, name, Arn=function["FunctionArn"])


def _configuration(props: dict[str, Any]) -> dict[str, Any]:
    """What CreateFunction and UpdateFunctionConfiguration take alike."""
    configuration: dict[str, Any] = {
        "Role": props["Role"],
        "MemorySize": int(props.get("MemorySize", 128)),
        "Timeout": int(props.get("Timeout", 3)),
        "Environment": {
            "Variables": {
                k: str(v) for k, v in props.get("Environment", {}).get("Variables", {}).items()
            }
        },
        "TracingConfig": props.get("TracingConfig", {"Mode": "PassThrough"}),
    }
    if props.get("PackageType") == "Image":
        configuration["ImageConfig"] = props.get("ImageConfig", {})
    else:
        configuration.update(
            Runtime=props["Runtime"], Handler=props["Handler"], Layers=props.get("Layers", [])
        )
    if "EphemeralStorage" in props:
        configuration["EphemeralStorage"] = {"Size": int(props["EphemeralStorage"]["Size"])}
    if "LoggingConfig" in props:
        configuration["LoggingConfig"] = props["LoggingConfig"]
    return configuration


def _code(props: dict[str, Any]) -> dict[str, Any]:
    if props.get("PackageType") == "Image":
        return {"ImageUri": props["Code"]["ImageUri"]}
    return {"ZipFile": _placeholder_zip()}


def _concurrency(
    client: LambdaClient, name: str, props: dict[str, Any], *, had: bool = False
) -> None:
    """Reserved concurrency as the template asks (``had``: the function has one now); read
    back by the Lambda runtime (richdoc_tools.local.runtime.lambdas), which throttles the
    function's invocations beyond it."""
    if "ReservedConcurrentExecutions" in props:
        client.put_function_concurrency(
            FunctionName=name,
            ReservedConcurrentExecutions=int(props["ReservedConcurrentExecutions"]),
        )
    elif had:
        client.delete_function_concurrency(FunctionName=name)


@updates(
    "AWS::Lambda::Function", replaces=("FunctionName", "PackageType"), name_property="FunctionName"
)
def _update_function(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """Its configuration and code in place (invocations already running finish on the
    code they started with: richdoc_tools.local.runtime.lambdas)."""
    client, name = deployment.client("lambda"), deployment.deployed.refs[logical_id]
    client.update_function_configuration(FunctionName=name, **_configuration(new))
    if old.get("Code") != new.get("Code"):
        client.update_function_code(FunctionName=name, **_code(new))
    arn = deployment.deployed.attributes[logical_id]["Arn"]
    before, after = (
        {t["Key"]: t["Value"] for t in tags(old)},
        {t["Key"]: t["Value"] for t in tags(new)},
    )
    if before != after:
        if gone := sorted(before.keys() - after.keys()):
            client.untag_resource(Resource=arn, TagKeys=gone)
        if after:
            client.tag_resource(Resource=arn, Tags=after)
    _concurrency(client, name, new, had="ReservedConcurrentExecutions" in old)


@deletes("AWS::Lambda::Function")
def _delete_function(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("lambda").delete_function(FunctionName=resource.ref)


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
        "Enabled",  # the emulation's pollers poll only the enabled mappings
    ),
)
def _lambda_event_source(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    # Created disabled: moto delivers SQS messages synchronously inside SendMessage and
    # ignores batchItemFailures (and stream records inside the write:
    # patches.dynamodb_streams); richdoc_tools.local.runtime.event_delivery polls with the
    # mapping's settings, the mappings the template enables (Deployed.disabled_mappings: the
    # others).
    kwargs: dict[str, Any] = {
        "EventSourceArn": props["EventSourceArn"],
        **_mapping_settings(props),
    }
    if "StartingPosition" in props:
        kwargs["StartingPosition"] = props["StartingPosition"]
    mapping = deployment.client("lambda").create_event_source_mapping(**kwargs)
    deployment.created(logical_id, mapping["UUID"])
    _enabled(deployment, mapping["UUID"], props)


def _mapping_settings(props: dict[str, Any]) -> dict[str, Any]:
    """What CreateEventSourceMapping and UpdateEventSourceMapping take alike."""
    kwargs: dict[str, Any] = {
        "FunctionName": props["FunctionName"],
        "BatchSize": int(props.get("BatchSize", 10)),
        "MaximumBatchingWindowInSeconds": int(props.get("MaximumBatchingWindowInSeconds", 0)),
        "FunctionResponseTypes": props.get("FunctionResponseTypes", []),
        "Enabled": False,
    }
    for name in ("FilterCriteria", "DestinationConfig"):
        if name in props:
            kwargs[name] = props[name]
    for name in ("MaximumRetryAttempts", "MaximumRecordAgeInSeconds"):
        if name in props:
            kwargs[name] = int(props[name])
    if "BisectBatchOnFunctionError" in props:
        kwargs["BisectBatchOnFunctionError"] = bool(props["BisectBatchOnFunctionError"])
    if scaling := props.get("ScalingConfig"):
        kwargs["ScalingConfig"] = {"MaximumConcurrency": int(scaling["MaximumConcurrency"])}
    return kwargs


def _enabled(deployment: Deployment, uuid: str, props: dict[str, Any]) -> None:
    """Whether Lambda polls the mapping: ``Enabled`` (true unless the template says not)."""
    if str(props.get("Enabled", True)).lower() == "false":
        deployment.deployed.disabled_mappings.add(uuid)
    else:
        deployment.deployed.disabled_mappings.discard(uuid)


@updates("AWS::Lambda::EventSourceMapping", replaces=("EventSourceArn", "StartingPosition"))
def _update_event_source(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    uuid = deployment.deployed.refs[logical_id]
    deployment.client("lambda").update_event_source_mapping(UUID=uuid, **_mapping_settings(new))
    _enabled(deployment, uuid, new)


@deletes("AWS::Lambda::EventSourceMapping")
def _delete_event_source(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("lambda").delete_event_source_mapping(UUID=resource.ref)
    deployment.deployed.disabled_mappings.discard(resource.ref)


@provisions(
    "AWS::Lambda::Permission", consumes=("FunctionName", "Action", "Principal", "SourceArn")
)
def _lambda_permission(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    statement = deployment.physical_name(logical_id, 100)
    kwargs = {
        "FunctionName": props["FunctionName"],
        "StatementId": statement,
        "Action": props["Action"],
        "Principal": props["Principal"],
    }
    if "SourceArn" in props:
        kwargs["SourceArn"] = props["SourceArn"]
    deployment.client("lambda").add_permission(**kwargs)
    deployment.created(logical_id, statement)


replaced_on_any_change("AWS::Lambda::Permission")


@deletes("AWS::Lambda::Permission")
def _delete_permission(deployment: Deployment, resource: Physical, props: dict[str, Any]) -> None:
    deployment.client("lambda").remove_permission(
        FunctionName=props["FunctionName"], StatementId=resource.ref
    )


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
    # Read back by richdoc_tools.local.runtime.async_invocations, which invokes asynchronously
    # the way Lambda does: the retries, then the OnFailure destination.
    config = {
        key: props[key]
        for key in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds", "DestinationConfig")
        if key in props
    }
    deployment.client("lambda").put_function_event_invoke_config(
        FunctionName=props["FunctionName"], Qualifier=props.get("Qualifier", "$LATEST"), **config
    )
    deployment.created(logical_id, logical_id)


@updates("AWS::Lambda::EventInvokeConfig", replaces=("FunctionName", "Qualifier"))
def _update_event_invoke_config(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    _lambda_event_invoke_config(deployment, logical_id, new)  # Put replaces the whole config


@deletes("AWS::Lambda::EventInvokeConfig")
def _delete_event_invoke_config(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    deployment.client("lambda").delete_function_event_invoke_config(
        FunctionName=props["FunctionName"], Qualifier=props.get("Qualifier", "$LATEST")
    )
