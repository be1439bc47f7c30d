"""A stack update of the embedded stack, as CloudFormation updates a stack
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/using-cfn-updating-stacks-update-behaviors.html).

``update_stack`` takes the deployed stack (``Deployment``) to another template and other
parameter values: the parameters and rules are checked first; then, in dependency order,
a resource the new template adds is created, one whose properties changed is updated in
place or replaced, as its type's reference says of each property (each provisioner
declares it: ``provisioners.registry``), and a resource whose properties are unchanged
is left alone. A replacement creates the new resource first and keeps a custom name only
if the name changes too (CloudFormation cannot replace a resource under the same custom
name). When any of it fails (a change AWS refuses, such as more than one global secondary
index per table update), what was done is undone in reverse order and the stack is as it
was (``UPDATE_ROLLBACK_COMPLETE``): ``StackUpdateFailed`` says which resource and why.
Once every resource is in place, the cleanup deletes the resources the template no longer
has and the ones replaced, in reverse dependency order, except where ``DeletionPolicy``
(``UpdateReplacePolicy`` for a replacement) is ``Retain``; a cleanup failure is recorded,
never undone, as in CloudFormation's ``UPDATE_COMPLETE_CLEANUP_IN_PROGRESS``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.cloudformation.intrinsics import deployment_order
from richdoc_tools.local.cloudformation.provisioners import NotEmulated, provisioner_for
from richdoc_tools.local.cloudformation.provisioners.registry import Physical
from richdoc_tools.local.cloudformation.template import TemplateError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from richdoc_tools.local.cloudformation.deploy import Deployment
    from richdoc_tools.local.cloudformation.intrinsics import Resolver
    from richdoc_tools.local.cloudformation.template import Template


class StackUpdateFailed(RuntimeError):
    """The update failed at ``logical_id`` for ``reason`` and was rolled back."""

    def __init__(self, logical_id: str, reason: str) -> None:
        self.logical_id = logical_id
        self.reason = reason
        super().__init__(f"{logical_id}: {reason} (the update was rolled back)")


@dataclass
class UpdateResult:
    """What the update did, by logical id."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    retained: list[str] = field(default_factory=list)  # no longer the stack's, kept
    cleanup_failures: list[str] = field(default_factory=list)  # "<logical id>: <why>"


@dataclass(frozen=True)
class _Retired:
    """A resource the cleanup deletes: removed from the template, or replaced."""

    logical_id: str
    resource: Mapping[str, Any]
    physical: Physical
    props: dict[str, Any]
    policy: str  # the attribute that decides whether it is kept


@dataclass(frozen=True)
class _Step:
    """One change made, and what undoes it."""

    kind: str  # "create", "update" or "replace"
    logical_id: str
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None


@dataclass
class _Snapshot:
    template: Template
    resolver: Resolver
    not_emulated: list[NotEmulated]
    resources: dict[str, dict[str, Any]]
    applied: dict[str, dict[str, Any]]
    generations: dict[str, int]
    refs: dict[str, str]
    attributes: dict[str, dict[str, str]]
    types: dict[str, str]
    disabled_mappings: set[str]


def update_stack(
    deployment: Deployment, template: Template, parameters: Mapping[str, str]
) -> UpdateResult:
    """Update the deployed stack to ``template`` with ``parameters`` (the template's
    defaults for the rest); raises ``StackUpdateFailed`` after rolling back."""
    before = _snapshot(deployment)
    deployment.template = template
    deployment.resolver = deployment.resolver_for(template, parameters)
    deployment.not_emulated = []  # said again by each resource of the new template
    try:
        deployment.check_parameters()
        deployment.check_rules()
    except TemplateError:
        _restore(deployment, before)
        raise
    result, steps, retired = UpdateResult(), list[_Step](), list[_Retired]()
    current = "(template)"
    try:
        for logical_id in deployment_order(template.resources):
            current = logical_id
            resource = template.resources[logical_id]
            if deployment.included(resource):
                _apply(deployment, logical_id, resource, result, steps, retired)
    except Exception as exc:
        _roll_back(deployment, steps, before)
        raise StackUpdateFailed(current, str(exc)) from exc
    for logical_id in before.resources:
        resource = template.resources.get(logical_id)
        if resource is None or not deployment.included(resource):
            retired.append(_removed(deployment, before, logical_id))
    _clean_up(deployment, retired, before, result)
    return result


def _apply(
    deployment: Deployment,
    logical_id: str,
    resource: dict[str, Any],
    result: UpdateResult,
    steps: list[_Step],
    retired: list[_Retired],
) -> None:
    if logical_id not in deployment.applied:
        deployment.create(logical_id, resource)
        steps.append(_Step("create", logical_id))
        result.created.append(logical_id)
        return
    if deployment.deployed.types[logical_id] != resource["Type"]:
        raise TemplateError(
            f"Update of resource type is not permitted ({deployment.deployed.types[logical_id]}"
            f" -> {resource['Type']})"
        )
    provisioner = provisioner_for(logical_id, resource)
    old, new = deployment.applied[logical_id], deployment.properties(logical_id, resource)
    changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    if not changed:
        deployment.resources[logical_id] = resource
        return
    why = sorted(changed & provisioner.replaces)
    edited = provisioner.replaced_when(old, new) if provisioner.replaced_when else None
    if why or edited:
        name = provisioner.name_property
        if name and name in new and old.get(name) == new.get(name):
            raise TemplateError(
                "CloudFormation cannot update a stack when a custom-named resource requires "
                f"replacing. Rename {new[name]} and update the stack again."
            )
        retired.append(
            _Retired(
                logical_id,
                deployment.resources[logical_id],
                _physical(deployment, logical_id),
                old,
                "UpdateReplacePolicy",
            )
        )
        deployment.generations[logical_id] = deployment.generations.get(logical_id, 0) + 1
        deployment.create(logical_id, resource)
        steps.append(_Step("replace", logical_id, old=old, new=new))
        result.replaced.append(logical_id)
        return
    if provisioner.update is None:
        raise TemplateError(
            f"{logical_id}: {resource['Type']} {sorted(changed)} changed, and the embedded "
            "stack does not declare how (@updates in its provisioner)"
        )
    provisioner.update(deployment, logical_id, old, new)
    steps.append(_Step("update", logical_id, old=old, new=new))
    deployment.resources[logical_id] = resource
    deployment.applied[logical_id] = new
    result.updated.append(logical_id)


def _physical(deployment: Deployment, logical_id: str) -> Physical:
    return Physical(
        deployment.deployed.refs[logical_id],
        dict(deployment.deployed.attributes.get(logical_id, {})),
    )


def _removed(deployment: Deployment, before: _Snapshot, logical_id: str) -> _Retired:
    """A resource the new template no longer has: forgotten by the stack, then deleted."""
    physical = Physical(before.refs[logical_id], before.attributes.get(logical_id, {}))
    for known in (deployment.resources, deployment.applied):
        known.pop(logical_id, None)
    deployment.deployed.refs.pop(logical_id, None)
    deployment.deployed.attributes.pop(logical_id, None)
    deployment.deployed.types.pop(logical_id, None)
    return _Retired(
        logical_id,
        before.resources[logical_id],
        physical,
        before.applied[logical_id],
        "DeletionPolicy",
    )


def _clean_up(
    deployment: Deployment, retired: list[_Retired], before: _Snapshot, result: UpdateResult
) -> None:
    order = deployment_order(before.resources)
    for gone in sorted(retired, key=lambda r: order.index(r.logical_id), reverse=True):
        if gone.resource.get(gone.policy) == "Retain":
            result.retained.append(gone.logical_id)
            continue
        provisioner = provisioner_for(gone.logical_id, gone.resource)
        try:
            if provisioner.delete is None:
                raise TemplateError(f"no @deletes for {gone.resource['Type']}")
            provisioner.delete(deployment, gone.physical, gone.props)
        except Exception as exc:  # CloudFormation records it and goes on
            result.cleanup_failures.append(f"{gone.logical_id}: {exc}")
        else:
            result.deleted.append(gone.logical_id)


def _roll_back(deployment: Deployment, steps: list[_Step], before: _Snapshot) -> None:
    """Undo every change made, newest first, then put the stack's state back."""
    for step in reversed(steps):
        provisioner = provisioner_for(step.logical_id, deployment.resources[step.logical_id])
        if step.kind == "update":
            assert provisioner.update is not None and step.old is not None and step.new
            provisioner.update(deployment, step.logical_id, step.new, step.old)
        else:  # what the update created (a replacement's new resource too) goes
            assert provisioner.delete is not None
            provisioner.delete(
                deployment,
                _physical(deployment, step.logical_id),
                deployment.applied[step.logical_id],
            )
    _restore(deployment, before)


def _snapshot(deployment: Deployment) -> _Snapshot:
    deployed = deployment.deployed
    return _Snapshot(
        template=deployment.template,
        resolver=deployment.resolver,
        not_emulated=list(deployment.not_emulated),
        resources=dict(deployment.resources),
        applied=dict(deployment.applied),
        generations=dict(deployment.generations),
        refs=dict(deployed.refs),
        attributes=copy.deepcopy(deployed.attributes),
        types=dict(deployed.types),
        disabled_mappings=set(deployed.disabled_mappings),
    )


def _restore(deployment: Deployment, before: _Snapshot) -> None:
    deployment.template, deployment.resolver = before.template, before.resolver
    deployment.not_emulated = before.not_emulated
    deployment.resources, deployment.applied = before.resources, before.applied
    deployment.generations = before.generations
    deployed = deployment.deployed
    deployed.refs, deployed.attributes = before.refs, before.attributes
    deployed.types, deployed.disabled_mappings = before.types, before.disabled_mappings
