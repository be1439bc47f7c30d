"""Step Functions: the state machine, its definition substitutions applied as SAM does;
updated in place, running executions keeping the definition they started with."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import (
    Physical,
    deletes,
    provisions,
    tags,
    updates,
)
from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment


@provisions(
    "AWS::StepFunctions::StateMachine",
    consumes=(
        "DefinitionString",
        "DefinitionSubstitutions",
        "StateMachineName",
        "RoleArn",
        "StateMachineType",
        "LoggingConfiguration",
        "TracingConfiguration",
        "Tags",
    ),
)
def _state_machine(deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("StateMachineName") or deployment.physical_name(logical_id, 80)
    kwargs: dict[str, Any] = {
        "name": name,
        **_settings(logical_id, props),
        "type": props.get("StateMachineType", "STANDARD"),
    }
    if "Tags" in props:
        kwargs["tags"] = [{"key": t["Key"], "value": t["Value"]} for t in tags(props)]
    arn = deployment.client("stepfunctions").create_state_machine(**kwargs)["stateMachineArn"]
    deployment.created(logical_id, arn, Name=name, Arn=arn)


def _settings(logical_id: str, props: dict[str, Any]) -> dict[str, Any]:
    """What CreateStateMachine and UpdateStateMachine take alike: the definition with its
    substitutions, the role, logging and tracing."""
    definition = props["DefinitionString"]
    for key, value in props.get("DefinitionSubstitutions", {}).items():
        definition = definition.replace("${" + key + "}", str(value))
    leftover = re.findall(r"\$\{([A-Za-z0-9_]+)\}", definition)
    if leftover:
        raise TemplateError(f"{logical_id}: unsubstituted placeholders {leftover}")
    settings: dict[str, Any] = {"definition": definition, "roleArn": props["RoleArn"]}
    logging = props.get("LoggingConfiguration")
    if logging:
        settings["loggingConfiguration"] = {
            "level": logging["Level"],
            "includeExecutionData": logging.get("IncludeExecutionData", False),
            "destinations": [
                {
                    "cloudWatchLogsLogGroup": {
                        "logGroupArn": d["CloudWatchLogsLogGroup"]["LogGroupArn"]
                    }
                }
                for d in logging.get("Destinations", [])
            ],
        }
    if "TracingConfiguration" in props:
        settings["tracingConfiguration"] = {"enabled": props["TracingConfiguration"]["Enabled"]}
    return settings


@updates(
    "AWS::StepFunctions::StateMachine",
    replaces=("StateMachineName", "StateMachineType"),
    name_property="StateMachineName",
)
def _update_state_machine(
    deployment: Deployment, logical_id: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    """The definition, role, logging and tracing in place; executions already running
    keep the definition they started with (Step Functions' rule, and moto's)."""
    deployment.client("stepfunctions").update_state_machine(
        stateMachineArn=deployment.deployed.refs[logical_id], **_settings(logical_id, new)
    )


@deletes("AWS::StepFunctions::StateMachine")
def _delete_state_machine(
    deployment: Deployment, resource: Physical, props: dict[str, Any]
) -> None:
    deployment.client("stepfunctions").delete_state_machine(stateMachineArn=resource.ref)
