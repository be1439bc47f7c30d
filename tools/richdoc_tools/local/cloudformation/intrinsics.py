"""CloudFormation's side of a deployment: intrinsic functions, conditions, the order.

``Resolver`` evaluates the template's intrinsic functions (``Ref``, ``Fn::GetAtt``,
``Fn::Sub``, ``Fn::Join``, ``Fn::Select``, ``Fn::Split``, ``Fn::If``) and its
``Conditions`` the way CloudFormation does, against what is deployed so far (``Deployed``);
``deployment_order`` creates every resource after the resources it references. Anything
else (another ``Fn::``, an unknown name) is a ``TemplateError``, never a silent default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from typing import TYPE_CHECKING, Any, TypeAlias

from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.template import Template

# A value of a template as written: a string, number, list or mapping of any depth, any of
# which may be an intrinsic function ({"Ref": ...}, {"Fn::Sub": ...}). The functions below
# take any of them and narrow as CloudFormation does, by shape, so no closer type serves.
TemplateValue: TypeAlias = Any


@dataclass
class Deployed:
    """Physical ids (what Ref returns) and attributes (what GetAtt returns)."""

    refs: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    # Event source mappings (their UUIDs) the template does not enable: never polled.
    disabled_mappings: set[str] = field(default_factory=set)


# What ``Ref: AWS::NoValue`` resolves to: the property or list item is left out.
_NO_VALUE = object()


class Resolver:
    def __init__(
        self,
        *,
        stack_name: str,
        stack_id: str,
        region: str,
        account: str,
        parameters: Mapping[str, str],
        deployed: Deployed,
        conditions: Mapping[str, TemplateValue] | None = None,
    ) -> None:
        self.pseudo = {
            "AWS::Region": region,
            "AWS::AccountId": account,
            "AWS::StackName": stack_name,
            "AWS::StackId": stack_id,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }
        self.parameters = dict(parameters)
        self.deployed = deployed
        self.conditions = dict(conditions or {})  # the template's Conditions section

    def condition(self, name: str) -> bool:
        """A named condition of the template, evaluated as CloudFormation does."""
        if name not in self.conditions:
            raise TemplateError(f"unknown Condition {name}")
        return self._truth(self.conditions[name])

    def holds(self, value: TemplateValue) -> bool:
        """A condition expression (a Rules assertion's too), evaluated."""
        return self._truth(value)

    def _truth(self, value: TemplateValue) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, dict) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Condition":
                return self.condition(arg)
            if key == "Fn::Equals":
                left, right = (self.resolve(a) for a in arg)
                return str(left) == str(right)
            if key == "Fn::Not":
                return not self._truth(arg[0])
            if key == "Fn::And":
                return all(self._truth(a) for a in arg)
            if key == "Fn::Or":
                return any(self._truth(a) for a in arg)
        raise TemplateError(f"not a condition: {value!r}")

    def ref(self, name: str) -> str:
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in self.deployed.refs:
            return self.deployed.refs[name]
        raise TemplateError(f"unresolved Ref {name}")

    def get_att(self, logical_id: str, attribute: str) -> str:
        try:
            return self.deployed.attributes[logical_id][attribute]
        except KeyError:
            raise TemplateError(f"unresolved GetAtt {logical_id}.{attribute}") from None

    def sub(self, template: str, variables: Mapping[str, TemplateValue]) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return str(self.resolve(variables[name]))
            if "." in name and name.split(".", 1)[0] not in self.pseudo:
                logical_id, attribute = name.split(".", 1)
                return self.get_att(logical_id, attribute)
            return self.ref(name)

        return re.sub(r"\$\{([^}]+)\}", replace, template)

    def resolve(self, value: TemplateValue) -> TemplateValue:
        if isinstance(value, list):
            return [v for v in (self.resolve(v) for v in value) if v is not _NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return _NO_VALUE if arg == "AWS::NoValue" else self.ref(arg)
            if key == "Fn::GetAtt":
                logical_id, attribute = arg if isinstance(arg, list) else arg.split(".", 1)
                return self.get_att(logical_id, attribute)
            if key == "Fn::Sub":
                if isinstance(arg, str):
                    return self.sub(arg, {})
                return self.sub(arg[0], arg[1])
            if key == "Fn::Join":
                return str(arg[0]).join(str(v) for v in self.resolve(arg[1]))
            if key == "Fn::Select":
                return self.resolve(arg[1])[int(self.resolve(arg[0]))]
            if key == "Fn::Split":
                return str(self.resolve(arg[1])).split(arg[0])
            if key == "Fn::If":
                name, if_true, if_false = arg
                return self.resolve(if_true if self.condition(name) else if_false)
            if key.startswith("Fn::") or key == "Condition":
                raise TemplateError(f"intrinsic {key} is not supported by the embedded stack")
        return {
            k: r for k, r in ((k, self.resolve(v)) for k, v in value.items()) if r is not _NO_VALUE
        }


def _references(value: TemplateValue) -> set[str]:
    """Logical ids a property value depends on."""
    found: set[str] = set()
    if isinstance(value, list):
        for v in value:
            found |= _references(v)
    elif isinstance(value, dict):
        for key, arg in value.items():
            if key == "Ref" and isinstance(arg, str):
                found.add(arg)
            elif key == "Fn::GetAtt":
                found.add(arg[0] if isinstance(arg, list) else arg.split(".", 1)[0])
            elif key == "Fn::Sub":
                text = arg if isinstance(arg, str) else arg[0]
                for name in re.findall(r"\$\{([^}!][^}]*)\}", text):
                    found.add(name.split(".", 1)[0])
                if isinstance(arg, list):
                    found |= _references(arg[1])
            elif key == "Fn::If":  # the condition's name is not a resource
                found |= _references(arg[1:])
            else:
                found |= _references(arg)
    return found


def deployment_order(resources: Mapping[str, TemplateValue]) -> list[str]:
    graph: dict[str, set[str]] = {}
    for logical_id, resource in resources.items():
        deps = _references(resource.get("Properties", {}))
        depends_on = resource.get("DependsOn", [])
        deps |= set([depends_on] if isinstance(depends_on, str) else depends_on)
        graph[logical_id] = {d for d in deps if d in resources}
    return list(TopologicalSorter(graph).static_order())


def parameters_resolver(template: Template, parameters: Mapping[str, str]) -> Resolver:
    """A resolver of the template's parameter-only properties (memory, reserved
    concurrency, lifecycle rules) with these parameter values and the defaults for the
    rest, as CloudFormation would deploy them (nothing deployed yet: no GetAtt)."""
    return sections_resolver(template.cfn, parameters)


def sections_resolver(
    sections: Mapping[str, TemplateValue], parameters: Mapping[str, str]
) -> Resolver:
    """The same for a template's sections as written (``Parameters``, ``Conditions``):
    another release's template, say."""
    specs: Mapping[str, TemplateValue] = sections.get("Parameters", {})
    defaults = {name: str(spec["Default"]) for name, spec in specs.items() if "Default" in spec}
    return Resolver(
        stack_name="richdoc",
        stack_id="arn:aws:cloudformation:us-east-1:123456789012:stack/richdoc/0-1-2",
        region="us-east-1",
        account="123456789012",
        parameters={**defaults, **parameters},
        deployed=Deployed(),
        conditions=sections.get("Conditions", {}),
    )
