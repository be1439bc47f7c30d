"""``richdoc deploy check``'s reading of an upgrade: what updating the deployed stack (or a
previous release's template, ``--previous-template``) to this template asks of AWS, and
the changes AWS applies in more than one step or refuses:

* more than one global secondary index created or deleted in one table update: DynamoDB
  builds one index at a time and CloudFormation refuses the update ("Cannot perform more
  than one GSI creation or deletion in a single update"), so the stack rolls back;
* an index whose key schema or projection changes under the same name (CloudFormation
  updates an index's throughput only);
* a table replaced: its key schema, name or local indexes changed, or an attribute's type
  (a new, empty table; the old one kept only by its DeletionPolicy), or the table gone
  from the template;
* an output gone that consumers read (docs/consumers.md names them); any other output gone
  is a warning (a script of the operator's may read it).

When the direct update would be refused, the template's own ``Metadata.richdoc.
UpgradeSteps`` (parameter values for each deploy) are tried from the deployed tables, step
by step; when every step is one the update accepts, the finding's fix is those steps, with
the wait for each new index to be ACTIVE between them (CloudFormation does not wait for an
index's backfilling, and DynamoDB takes no other index change on the table until it ends).

Pure: templates (as written, SAM or CloudFormation) and parameter values in, findings out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from richdoc_tools.local.cloudformation.intrinsics import sections_resolver
from richdoc_tools.local.cloudformation.provisioners.dynamodb import (
    MORE_THAN_ONE_GSI,
    index_changes,
)
from richdoc_tools.local.cloudformation.template import TemplateError
from richdoc_tools.preflight import Finding, Status

# The stack's outputs consumers read (docs/consumers.md): removing one breaks them.
CONSUMER_OUTPUTS = frozenset(
    {
        "ArtifactBucketName",
        "IngestBucketName",
        "EventBusName",
        "EventBusArn",
        "EventArchiveArn",
        "EventLogGroupName",
        "ConsumerPolicyArn",
        "WebhookDeadLetterQueueUrl",
    }
)
# Table properties whose change replaces the table (CloudFormation's reference,
# AWS::DynamoDB::Table).
REPLACING = ("TableName", "KeySchema", "LocalSecondaryIndexes")
CHECK = "upgrade"


@dataclass(frozen=True)
class StackState:
    """A template with its parameter values, as far as an upgrade is concerned: each
    table's properties (resolved) and policy, and the outputs."""

    tables: dict[str, dict[str, Any]]
    retained: frozenset[str]  # tables whose DeletionPolicy keeps them
    outputs: frozenset[str]


def state_of(template: Mapping[str, Any], parameters: Mapping[str, str]) -> StackState:
    """The template's tables and outputs with these parameter values (its defaults for
    the rest), as CloudFormation would resolve them; a TemplateError when a table's
    properties name what only a deployment knows."""
    specs: Mapping[str, Any] = template.get("Parameters", {})
    resolver = sections_resolver(template, {k: v for k, v in parameters.items() if k in specs})
    tables, retained = {}, set()
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::DynamoDB::Table":
            continue
        if "Condition" in resource and not resolver.condition(resource["Condition"]):
            continue
        tables[logical_id] = resolver.resolve(resource.get("Properties", {}))
        if resource.get("DeletionPolicy") == "Retain":
            retained.add(logical_id)
    outputs = {
        name
        for name, spec in template.get("Outputs", {}).items()
        if "Condition" not in spec or resolver.condition(spec["Condition"])
    }
    return StackState(tables, frozenset(retained), frozenset(outputs))


@dataclass(frozen=True)
class Refusal:
    """What makes one update fail: the table (or output) and why."""

    subject: str
    says: str
    blocking: bool = True  # False: it deploys, but something outside may break


def refusals(previous: StackState, current: StackState) -> list[Refusal]:
    """What in the update from ``previous`` to ``current`` AWS refuses or applies in more
    than one step (and the outputs gone)."""
    found = []
    for table, old in previous.tables.items():
        new = current.tables.get(table)
        if new is None:
            kept = (
                "kept by its DeletionPolicy, but no longer the stack's"
                if (table in previous.retained)
                else "deleted, with every item"
            )
            found.append(Refusal(table, f"{table} is not in the new template: the table is {kept}"))
            continue
        replaced = [p for p in REPLACING if old.get(p) != new.get(p)]
        edited = _edited_attributes(old, new)
        if replaced or edited:
            why = ", ".join(replaced + ([f"the type of {edited}"] if edited else []))
            found.append(
                Refusal(
                    table,
                    f"{table}: {why} changed, which replaces the table: a new, empty table "
                    "(the old one kept only by its DeletionPolicy)",
                )
            )
            continue
        created, deleted, changed = index_changes(old, new)
        if changed:
            found.append(
                Refusal(
                    table,
                    f"{table}: the key schema or projection of {', '.join(changed)} changes; "
                    "CloudFormation updates an index's throughput only (create one under "
                    "another name, then delete the old, one per deploy)",
                )
            )
        if len(created) + len(deleted) > 1:
            made = [f"creates {', '.join(created)}"] if created else []
            made += [f"deletes {', '.join(deleted)}"] if deleted else []
            found.append(
                Refusal(
                    table,
                    f"{table}: this update {' and '.join(made)}: "
                    f"{len(created) + len(deleted)} global secondary indexes in one table "
                    "update; DynamoDB builds one at a time and CloudFormation refuses more "
                    f'("{MORE_THAN_ONE_GSI}"): the update would fail and roll back',
                )
            )
    gone = sorted(previous.outputs - current.outputs)
    for output in gone:
        if output in CONSUMER_OUTPUTS:
            found.append(Refusal(output, f"output {output} is gone, and consumers read it by name"))
        else:
            found.append(
                Refusal(
                    output,
                    f"output {output} is gone (no consumer reads it; a script of yours might)",
                    blocking=False,
                )
            )
    return found


def _edited_attributes(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    before = {a["AttributeName"]: a["AttributeType"] for a in old.get("AttributeDefinitions", [])}
    after = {a["AttributeName"]: a["AttributeType"] for a in new.get("AttributeDefinitions", [])}
    return ", ".join(sorted(n for n in before.keys() & after.keys() if before[n] != after[n]))


def upgrade_steps(template: Mapping[str, Any]) -> list[dict[str, str]]:
    """The template's own steps for an upgrade that needs several deploys."""
    steps = template.get("Metadata", {}).get("richdoc", {}).get("UpgradeSteps", [])
    return [{str(k): str(v) for k, v in step.items()} for step in steps]


def stepped(
    previous: StackState,
    template: Mapping[str, Any],
    parameters: Mapping[str, str],
    steps: Sequence[Mapping[str, str]],
) -> list[tuple[dict[str, str], list[str]]] | None:
    """The steps (each one's parameter values over ``parameters``, and the indexes it
    creates) when every one is an update AWS accepts from the one before; None if not."""
    done: list[tuple[dict[str, str], list[str]]] = []
    at = previous
    for step in steps:
        values = {**parameters, **step}
        then = state_of(template, values)
        if any(r.blocking for r in refusals(at, then)):
            return None
        created = [
            index
            for table, new in then.tables.items()
            for index in index_changes(at.tables.get(table, new), new)[0]
        ]
        done.append((dict(step), created))
        at = then
    return done


def assess_upgrade(
    previous: Mapping[str, Any],
    previous_parameters: Mapping[str, str],
    template: Mapping[str, Any],
    parameters: Mapping[str, str],
    *,
    source: str,
) -> list[Finding]:
    """The upgrade's findings: from ``previous`` (deployed with ``previous_parameters``,
    read from ``source``) to ``template`` with ``parameters``."""
    try:
        before = state_of(previous, previous_parameters)
        after = state_of(template, parameters)
    except TemplateError as exc:
        return [
            Finding(
                CHECK,
                Status.CHECK,
                f"the tables of {source} cannot be compared with this template's ({exc})",
                "compare the two templates' AWS::DynamoDB::Table resources by hand",
            )
        ]
    found = refusals(before, after)
    blocking = [r for r in found if r.blocking]
    findings = [Finding(CHECK, Status.WARN, r.says) for r in found if not r.blocking]
    if not blocking:
        says = f"from {source}, nothing changes that AWS applies in more than one step or refuses"
        return [*findings, Finding(CHECK, Status.OK, says)]
    steps = stepped(before, template, parameters, upgrade_steps(template))
    fix = (
        _steps_fix(steps)
        if steps
        else "split the change: at most one index created or deleted per table and deploy, "
        'each ACTIVE before the next (docs/operations.md, "Upgrading a deployed stack")'
    )
    return [
        *findings,
        *(Finding(CHECK, Status.FAIL, f"from {source}: {r.says}", fix) for r in blocking),
    ]


def _steps_fix(steps: Sequence[tuple[dict[str, str], list[str]]]) -> str:
    said = []
    for number, (values, created) in enumerate(steps, start=1):
        overrides = " ".join(f"{k}={v}" for k, v in values.items())
        deploy = f"sam deploy --parameter-overrides {overrides}" if overrides else "sam deploy"
        line = f"{number}. {deploy}"
        if created:
            line += f" (creates {', '.join(created)}), then wait until it is ACTIVE"
        said.append(line)
    return (
        f'deploy in {len(steps)} steps (docs/operations.md, "Upgrading a deployed stack"): '
        + "; ".join(said)
        + " (an index's status: aws dynamodb describe-table --table-name <JobsTableName> "
        '--query "Table.GlobalSecondaryIndexes[].[IndexName,IndexStatus]")'
    )


def index_readiness(statuses: Mapping[str, str]) -> Finding:
    """The deployed jobs table's indexes (name -> IndexStatus): an update that changes an
    index, or code that reads one, waits until every one is ACTIVE (CloudFormation does not
    wait for an index's backfilling, and DynamoDB takes no other index change until it
    ends)."""
    building = sorted(name for name, status in statuses.items() if status != "ACTIVE")
    if not building:
        return Finding("indexes", Status.OK, "every index of the deployed jobs table is ACTIVE")
    said = ", ".join(f"{name} is {statuses[name]}" for name in building)
    return Finding(
        "indexes",
        Status.FAIL,
        f"the deployed jobs table's {said}: DynamoDB takes no other index change on the table "
        "until it is ACTIVE, and admission cannot read it yet",
        "wait until aws dynamodb describe-table --table-name <JobsTableName> --query "
        '"Table.GlobalSecondaryIndexes[].[IndexName,IndexStatus]" shows every one ACTIVE, '
        "then deploy the next step",
    )
