"""``richdoc deploy``: before deploying to AWS.

``richdoc deploy check`` says what would make ``sam build && sam deploy`` fail on this
account and what fixes it (``richdoc_tools.preflight``); it exits 1 when something would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from richdoc_tools.cli.errors import EXIT_FAILED, UsageError
from richdoc_tools.cli.options import example, json_option

if TYPE_CHECKING:
    import boto3


@click.group(short_help="before deploying to AWS")
def deploy() -> None:
    """Before deploying to AWS."""


@deploy.command(
    short_help="what would make a deploy fail on this account, and what fixes it",
    epilog=example("richdoc deploy check --parameter-overrides AccountProfile=small"),
)
@click.option(
    "--stack",
    default=None,
    metavar="NAME",
    help="stack name; when deployed, its parameter values are the starting point "
    "(default: samconfig.toml's stack_name, else richdoc)",
)
@click.option("--region", default=None, metavar="REGION", help="defaults to the usual AWS settings")
@click.option("--profile", default=None, metavar="PROFILE", help="AWS profile")
@click.option(
    "--endpoint-url", default=None, metavar="URL", help="AWS endpoint (richdoc local serve)"
)
@click.option(
    "--parameter-overrides",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="template parameter values, as sam deploy takes them (repeatable)",
)
@click.option(
    "--config-file",
    type=click.Path(path_type=Path),
    default=Path("samconfig.toml"),
    show_default=True,
    help="sam's config: its deploy parameter_overrides and region are read",
)
@click.option(
    "--previous-template",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="the template the stack runs now (the previous release's), when no deployed "
    "stack says (default: the deployed stack's own, read with GetTemplate)",
)
@click.option(
    "--memory-quota-mb",
    type=click.IntRange(min=128),
    default=None,
    help="the account's function memory limit, when you know it (no API shows it)",
)
@json_option()
def check(
    stack: str | None,
    region: str | None,
    profile: str | None,
    endpoint_url: str | None,
    overrides: tuple[str, ...],
    config_file: Path,
    previous_template: Path | None,
    memory_quota_mb: int | None,
    as_json: bool,
) -> int:
    """Say what would make `sam build && sam deploy` fail on this account, in plain
    words, and which parameter values or quota increase fix it: the region, Docker, the
    concurrency the functions reserve against the account's quota (GetAccountSettings),
    and the memory they ask for; for a stack already deployed (or --previous-template),
    what the update changes that AWS applies in more than one step or refuses (more than
    one index per table update, a replaced table, an output consumers read removed), and
    the steps that upgrade it. It also warns when one large PDF would take the
    concurrency the functions share, and when nobody gets the alarms. Exits 1 when
    something would fail."""
    import boto3
    from samtranslator.yaml_helper import yaml_parse

    from richdoc_tools import preflight, upgrades
    from richdoc_tools.cli.render import deploy as render
    from richdoc_tools.local.cloudformation.template import load_template

    try:
        configured, config_region = preflight.samconfig(config_file)
        given = preflight.parse_overrides(list(overrides))
    except (preflight.BadParameters, ValueError) as exc:
        raise UsageError(f"richdoc deploy check: {exc}") from exc
    session = boto3.Session(profile_name=profile, region_name=region or config_region)
    stack_name = stack or _stack_name(config_file)
    template = load_template()
    deployed_as = _deployed_parameters(session, endpoint_url, stack_name)
    deployed = deployed_as
    if deployed is not None:  # a parameter the template no longer has is not passed
        deployed = {k: v for k, v in deployed.items() if k in template.cfn["Parameters"]}
    # As sam deploy: the deployed values, then samconfig.toml's, then the command line's.
    parameters = {**(deployed or {}), **configured, **given}
    try:
        preflight.check_parameters(template, parameters)
    except preflight.BadParameters as exc:
        raise UsageError(f"richdoc deploy check: {exc}") from exc
    sizing = preflight.sizing(template, parameters)
    account = preflight.read_account(session, endpoint_url)
    readings = preflight.Readings(
        region=session.region_name,
        docker=preflight.docker_problem(),
        concurrency_limit=account.get("concurrency_limit"),
        unreserved=account.get("unreserved"),
        settings_error=account.get("error"),
        memory_quota_mb=memory_quota_mb,
        reserved_by_stack=(
            preflight.sizing(template, deployed).total_reserved if deployed is not None else 0
        ),
        parameters=parameters,
    )
    findings = preflight.assess(readings, sizing)
    previous = _previous(session, endpoint_url, stack_name, previous_template)
    if previous is not None:
        text, source = previous
        findings += upgrades.assess_upgrade(
            yaml_parse(text), deployed_as or {}, template.sam, parameters, source=source
        )
    statuses = _index_statuses(session, endpoint_url, stack_name)
    if statuses is not None:
        findings.append(upgrades.index_readiness(statuses))
    render.deploy_check(findings, preflight.report(readings, sizing, findings), as_json=as_json)
    failed = any(f.status is preflight.Status.FAIL for f in findings)
    return EXIT_FAILED if failed else 0


def _stack_name(config_file: Path) -> str:
    import tomllib

    if config_file.is_file():
        config = tomllib.loads(config_file.read_text())
        name = config.get("default", {}).get("global", {}).get("parameters", {})
        if name.get("stack_name"):
            return str(name["stack_name"])
    return "richdoc"


def _deployed_parameters(
    session: boto3.Session, endpoint_url: str | None, stack: str
) -> dict[str, str] | None:
    """The deployed stack's parameter values; None when it is not deployed (or unreadable)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        [found] = session.client("cloudformation", endpoint_url=endpoint_url).describe_stacks(
            StackName=stack
        )["Stacks"]
    except (ClientError, BotoCoreError, ValueError):
        return None
    return {p["ParameterKey"]: p.get("ParameterValue", "") for p in found.get("Parameters", [])}


def _previous(
    session: boto3.Session, endpoint_url: str | None, stack: str, file: Path | None
) -> tuple[str, str] | None:
    """The template the stack runs now, and where it was read: ``file``, else the deployed
    stack's as submitted (GetTemplate, TemplateStage Original); None when neither."""
    from botocore.exceptions import BotoCoreError, ClientError

    if file is not None:
        return file.read_text(), str(file)
    try:
        body = session.client("cloudformation", endpoint_url=endpoint_url).get_template(
            StackName=stack, TemplateStage="Original"
        )["TemplateBody"]
    except (ClientError, BotoCoreError):
        return None
    # boto3 hands a JSON template back decoded, a YAML one as its text.
    text = body if isinstance(body, str) else json.dumps(body)
    return text, f"the deployed stack {stack}"


def _index_statuses(
    session: boto3.Session, endpoint_url: str | None, stack: str
) -> dict[str, str] | None:
    """The deployed jobs table's indexes and their IndexStatus (its name from the stack's
    outputs); None when there is no deployed stack to ask."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        [found] = session.client("cloudformation", endpoint_url=endpoint_url).describe_stacks(
            StackName=stack
        )["Stacks"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}
        table = session.client("dynamodb", endpoint_url=endpoint_url).describe_table(
            TableName=outputs["JobsTableName"]
        )["Table"]
    except (ClientError, BotoCoreError, ValueError, KeyError):
        return None
    return {i["IndexName"]: i["IndexStatus"] for i in table.get("GlobalSecondaryIndexes", [])}
