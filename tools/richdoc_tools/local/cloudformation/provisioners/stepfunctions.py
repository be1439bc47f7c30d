"""Step Functions: the state machine, its definition substitutions applied as SAM does."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.provisioners.registry import provisions, tags
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
    definition = props["DefinitionString"]
    for key, value in props.get("DefinitionSubstitutions", {}).items():
        definition = definition.replace("${" + key + "}", str(value))
    leftover = re.findall(r"\$\{([A-Za-z0-9_]+)\}", definition)
    if leftover:
        raise TemplateError(f"{logical_id}: unsubstituted placeholders {leftover}")
    name = props.get("StateMachineName") or deployment.physical_name(logical_id, 80)
    kwargs: dict[str, Any] = {
        "name": name,
        "definition": definition,
        "roleArn": props["RoleArn"],
        "type": props.get("StateMachineType", "STANDARD"),
    }
    logging = props.get("LoggingConfiguration")
    if logging:
        kwargs["loggingConfiguration"] = {
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
        kwargs["tracingConfiguration"] = {"enabled": props["TracingConfiguration"]["Enabled"]}
    if "Tags" in props:
        kwargs["tags"] = [{"key": t["Key"], "value": t["Value"]} for t in tags(props)]
    arn = deployment.client("stepfunctions").create_state_machine(**kwargs)["stateMachineArn"]
    deployment.created(logical_id, arn, Name=name, Arn=arn)
