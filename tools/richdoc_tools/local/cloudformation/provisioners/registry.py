"""The provisioners' registry and the rules every provisioner declares itself by.

Nothing in the template is dropped silently. Each resource type's provisioner declares,
with ``@provisions``, every property it knows: those it ``consumes`` (passes to the
emulation), the ``inert`` ones (descriptions and other metadata without behaviour) and the
``not_emulated`` ones (AWS behaviour the emulation lacks, with what differs; ``richdoc
local serve`` lists them). A resource type without a provisioner, a resource attribute
the deployment does not know, or a property none of these names, fails the deployment with
a ``TemplateError`` that says what to declare and where, so the emulation cannot drift
from the template.

A stack update (``Deployment.update``) needs two more declarations, as CloudFormation's
reference for each resource type states them ("Update requires"): ``@updates`` names
the properties whose change replaces the resource (a new one is created, the old deleted
once the update is complete) and the one that names it (a replacement that keeps a
custom name is refused, as CloudFormation refuses it), and registers how every other
change is made in place; ``@deletes`` registers how a removed or replaced resource is
deleted. A change the type does not declare fails the update with a ``TemplateError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from richdoc_tools.local.cloudformation.deploy import Deployment

# Resource attributes besides Type and Properties that the emulation may disregard.
# Condition is evaluated by the deployment (a false condition skips the resource).
RESOURCE_ATTRIBUTES = frozenset(
    {"Condition", "DependsOn", "Metadata", "DeletionPolicy", "UpdateReplacePolicy"}
)


class UpdateFailed(RuntimeError):
    """A resource's update that AWS refuses (CloudFormation's reason): the stack update
    fails and rolls back."""


@dataclass(frozen=True)
class NotEmulated:
    """Something the template asks of AWS that the emulation does without."""

    resource: str  # logical id
    item: str  # the property or statement
    why: str


Create = Callable[["Deployment", str, dict[str, Any]], None]
# (deployment, logical id, the properties as deployed, the new ones): the change in place.
Update = Callable[["Deployment", str, dict[str, Any], dict[str, Any]], None]


@dataclass(frozen=True)
class Physical:
    """A deployed resource as Ref and GetAtt name it."""

    ref: str
    attributes: Mapping[str, str]


# (deployment, the resource, its properties as deployed).
Delete = Callable[["Deployment", Physical, dict[str, Any]], None]


def _source(module: str) -> str:
    """A module of this package as a path in the repository."""
    return "tools/" + module.replace(".", "/") + ".py"


@dataclass(frozen=True)
class ResourceProvisioner:
    """How one resource type is deployed, and which of its properties that covers."""

    resource_type: str
    create: Create
    consumes: frozenset[str]
    inert: frozenset[str] = frozenset()
    not_emulated: Mapping[str, str] = field(default_factory=dict)  # property -> what differs
    update: Update | None = None
    replaces: frozenset[str] = frozenset()  # properties whose change replaces the resource
    # A change of the other properties that replaces it all the same (old, new -> why).
    replaced_when: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None
    name_property: str | None = None  # the property that gives it a custom name
    delete: Delete | None = None

    def __call__(self, deployment: Deployment, logical_id: str, props: dict[str, Any]) -> None:
        self.create(deployment, logical_id, props)

    def check(self, logical_id: str, resource: Mapping[str, Any]) -> list[NotEmulated]:
        """The resource's not-emulated notes; a TemplateError for anything undeclared."""
        for attribute in resource:
            if attribute not in ("Type", "Properties", *RESOURCE_ATTRIBUTES):
                raise TemplateError(
                    f"{logical_id}: resource attribute {attribute} is not supported by the "
                    f"embedded stack ({_source(__name__)})"
                )
        known = self.consumes | self.inert | set(self.not_emulated)
        for name in resource.get("Properties", {}):
            if name not in known:
                raise TemplateError(
                    f"{logical_id}: {self.resource_type} property {name} is not declared by "
                    "the embedded stack. Declare it at @provisions("
                    f"{self.resource_type!r}, ...) in {_source(self.create.__module__)}: "
                    f"in consumes= (and pass it to the emulation in {self.create.__name__}), "
                    "in inert= if it has no behaviour to emulate, or in not_emulated= with "
                    "what differs from AWS."
                )
        return [
            NotEmulated(logical_id, name, self.not_emulated[name])
            for name in resource.get("Properties", {})
            if name in self.not_emulated
        ]


PROVISIONERS: dict[str, ResourceProvisioner] = {}


def provisions(
    resource_type: str,
    *,
    consumes: Iterable[str],
    inert: Iterable[str] = (),
    not_emulated: Mapping[str, str] | None = None,
) -> Callable[[Create], Create]:
    """Register ``create`` as the provisioner of ``resource_type`` with its declarations."""

    def register(create: Create) -> Create:
        PROVISIONERS[resource_type] = ResourceProvisioner(
            resource_type, create, frozenset(consumes), frozenset(inert), dict(not_emulated or {})
        )
        return create

    return register


def updates(
    resource_type: str,
    *,
    replaces: Iterable[str] = (),
    name_property: str | None = None,
    replaced_when: Callable[[Mapping[str, Any], Mapping[str, Any]], str | None] | None = None,
) -> Callable[[Update], Update]:
    """Register ``update`` as how ``resource_type`` changes in place, and which of its
    properties replace it instead (``@provisions`` first)."""

    def register(update: Update) -> Update:
        PROVISIONERS[resource_type] = dataclasses.replace(
            PROVISIONERS[resource_type],
            update=update,
            replaces=frozenset(replaces),
            replaced_when=replaced_when,
            name_property=name_property,
        )
        return update

    return register


def replaced_on_any_change(resource_type: str, *, name_property: str | None = None) -> None:
    """``resource_type`` is replaced whatever property changes (it has no update in place)."""
    provisioner = PROVISIONERS[resource_type]
    PROVISIONERS[resource_type] = dataclasses.replace(
        provisioner,
        replaces=provisioner.consumes | provisioner.inert | set(provisioner.not_emulated),
        name_property=name_property,
    )


def deletes(resource_type: str) -> Callable[[Delete], Delete]:
    """Register ``delete`` as how ``resource_type`` is deleted (``@provisions`` first)."""

    def register(delete: Delete) -> Delete:
        PROVISIONERS[resource_type] = dataclasses.replace(
            PROVISIONERS[resource_type], delete=delete
        )
        return delete

    return register


def provisioner_for(logical_id: str, resource: Mapping[str, Any]) -> ResourceProvisioner:
    provisioner = PROVISIONERS.get(resource["Type"])
    if provisioner is None:
        package = _source(__name__).rpartition("/")[0]
        raise TemplateError(
            f"{logical_id}: resource type {resource['Type']} has no provisioner "
            f"(add one with @provisions in {package}/, in the module of its service)"
        )
    return provisioner


class Tag(TypedDict):
    Key: str
    Value: str


def tags(props: Mapping[str, Any]) -> list[Tag]:
    """A resource's CloudFormation ``Tags``, values as strings."""
    return [{"Key": t["Key"], "Value": str(t["Value"])} for t in props.get("Tags", [])]
