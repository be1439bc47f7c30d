"""Deploy a translated template into the AWS emulation, resource by resource.

moto's own CloudFormation drops properties this pipeline depends on (bucket
notifications and versioning, state machine definition substitutions, image functions),
so each resource is created here through the regular AWS APIs, in dependency order, with
the template's intrinsic functions resolved the way CloudFormation resolves them
(``intrinsics``), by the provisioner registered for its type (``provisioners``, which
also holds the rules for what each provisioner declares). The handlers' code always comes
from the checkout (see ``lambdas``), never from the packaged ``Code``/``Content``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings
from collections.abc import Mapping
from typing import Any

from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.intrinsics import Deployed, Resolver, deployment_order
from richdoc_tools.local.cloudformation.parameters import ParameterError, check_values
from richdoc_tools.local.cloudformation.provisioners import NotEmulated, provisioner_for
from richdoc_tools.local.cloudformation.template import LOCAL_CODE_BUCKET, Template, TemplateError

# What DescribeStacks shows for the value of a NoEcho parameter.
NO_ECHO_MASK = "****"


class Deployment:
    """Creates every resource of a translated template through boto3 (against moto);
    what each provisioner gets to work with."""

    def __init__(
        self,
        clients: Clients,
        template: Template,
        *,
        stack_name: str,
        region: str,
        account: str,
        parameters: Mapping[str, str] | None = None,
    ) -> None:
        self.client = clients
        self.template = template
        self.stack_name = stack_name
        self.region = region
        self.account = account
        self.deployed = Deployed()
        # Deterministic, CloudFormation-shaped stack id (its UUID names the ingest bucket).
        stack_uuid = uuid.UUID(hashlib.md5(stack_name.encode()).hexdigest())
        self.stack_id = f"arn:aws:cloudformation:{region}:{account}:stack/{stack_name}/{stack_uuid}"
        self.resolver = self.resolver_for(template, parameters or {})
        self.not_emulated: list[NotEmulated] = []
        # What is deployed, for an update to compare with (``update``): each resource's
        # definition and its properties as resolved, and how often it was replaced (a
        # replacement has a name of its own).
        self.resources: dict[str, dict[str, Any]] = {}
        self.applied: dict[str, dict[str, Any]] = {}
        self.generations: dict[str, int] = {}

    def resolver_for(self, template: Template, parameters: Mapping[str, str]) -> Resolver:
        """The template's intrinsics and conditions with these parameter values (the
        defaults for the rest), against what is deployed."""
        return Resolver(
            stack_name=self.stack_name,
            stack_id=self.stack_id,
            region=self.region,
            account=self.account,
            parameters={**template.parameter_defaults(), **parameters},
            deployed=self.deployed,
            conditions=template.cfn.get("Conditions", {}),
        )

    def deploy(self) -> Deployed:
        self.check_parameters()
        self.check_rules()
        self.client("s3").create_bucket(Bucket=LOCAL_CODE_BUCKET)
        resources = self.template.resources
        for logical_id in deployment_order(resources):
            resource = resources[logical_id]
            if self.included(resource):
                self.create(logical_id, resource)
        return self.deployed

    def included(self, resource: Mapping[str, Any]) -> bool:
        """Whether the template creates the resource (as CloudFormation: one whose
        Condition is false is not created)."""
        return "Condition" not in resource or self.resolver.condition(resource["Condition"])

    def properties(self, logical_id: str, resource: Mapping[str, Any]) -> dict[str, Any]:
        """The resource's properties resolved against what is deployed now; the
        provisioner's not-emulated notes kept, an undeclared property refused."""
        provisioner = provisioner_for(logical_id, resource)
        self.not_emulated.extend(provisioner.check(logical_id, resource))
        resolved: dict[str, Any] = self.resolver.resolve(resource.get("Properties", {}))
        return resolved

    def create(self, logical_id: str, resource: dict[str, Any]) -> None:
        props = self.properties(logical_id, resource)
        self.deployed.types[logical_id] = resource["Type"]
        provisioner_for(logical_id, resource)(self, logical_id, props)
        self.resources[logical_id] = resource
        self.applied[logical_id] = props

    def check_parameters(self) -> None:
        """Every parameter's value (the given ones and the defaults) against its
        constraints, as CloudFormation checks them before creating anything."""
        try:
            check_values(self.template.cfn.get("Parameters", {}), self.resolver.parameters)
        except ParameterError as exc:
            raise TemplateError(f"parameter refused: {exc}") from exc

    def check_rules(self) -> None:
        """The template's Rules, as CloudFormation checks them before creating anything:
        an assertion that fails under its rule's condition refuses the parameters."""
        for name, rule in self.template.cfn.get("Rules", {}).items():
            if "RuleCondition" in rule and not self.resolver.holds(rule["RuleCondition"]):
                continue
            for assertion in rule.get("Assertions", []):
                if not self.resolver.holds(assertion["Assert"]):
                    why = assertion.get("AssertDescription", "an assertion failed")
                    raise TemplateError(f"template rule {name}: {why}")

    def outputs(self) -> dict[str, str]:
        return {
            name: str(self.resolver.resolve(spec["Value"]))
            for name, spec in self.template.cfn.get("Outputs", {}).items()
            if "Condition" not in spec or self.resolver.condition(spec["Condition"])
        }

    def publish(self, outputs: Mapping[str, str], *, updated: bool = False) -> None:
        """Publish the stack's outputs and parameters under its name, as CloudFormation does
        on AWS, so operator commands find the resources (and settings) the same way locally
        and deployed (again after an update: ``updated``)."""
        packaged = json.dumps(self.template.cfn, sort_keys=True, default=str).encode()
        body = {
            # The placeholder stands for the packaged template, code included: an update
            # that changes only resources or code is an update, as on AWS (where an
            # unchanged template and parameters are refused: "No updates are to be
            # performed").
            "Metadata": {"PackagedTemplateSha256": hashlib.sha256(packaged).hexdigest()},
            "Parameters": {name: {"Type": "String"} for name in self.resolver.parameters},
            "Resources": {"Outputs": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
            "Outputs": {name: {"Value": value} for name, value in outputs.items()},
        }
        cloudformation = self.client("cloudformation")
        with warnings.catch_warnings():  # moto notes it does not model the placeholder
            warnings.simplefilter("ignore", UserWarning)
            (cloudformation.update_stack if updated else cloudformation.create_stack)(
                StackName=self.stack_name,
                TemplateBody=json.dumps(body),
                # As on AWS, DescribeStacks says what the stack was deployed with, and
                # shows a NoEcho parameter as asterisks.
                Parameters=[
                    {"ParameterKey": name, "ParameterValue": self._shown(name, value)}
                    for name, value in self.resolver.parameters.items()
                ],
            )

    def _shown(self, name: str, value: object) -> str:
        spec = self.template.cfn.get("Parameters", {}).get(name, {})
        return NO_ECHO_MASK if str(spec.get("NoEcho", "")).lower() == "true" else str(value)

    # ---- for the provisioners ----------------------------------------------------------

    def physical_name(self, logical_id: str, max_length: int = 64, lower: bool = False) -> str:
        """A generated name, as CloudFormation gives one: the stack's and the resource's
        names and a suffix (another one for each replacement)."""
        generation = self.generations.get(logical_id, 0)
        seed = f"{self.stack_name}/{logical_id}" + (f"/{generation}" if generation else "")
        suffix = hashlib.sha256(seed.encode()).hexdigest()[:12]
        name = f"{self.stack_name}-{logical_id}"[: max_length - 13] + "-" + suffix.upper()
        return name.lower() if lower else name

    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{self.account}:{resource}"

    def created(self, logical_id: str, ref: str, **attributes: str) -> None:
        """Record what Ref (``ref``) and GetAtt (``attributes``) return for a resource."""
        self.deployed.refs[logical_id] = ref
        self.deployed.attributes[logical_id] = attributes
