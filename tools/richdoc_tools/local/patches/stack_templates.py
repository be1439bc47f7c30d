"""GetTemplate answers the template the embedded stack deployed, as submitted (what
CloudFormation's ``TemplateStage`` ``Original`` returns): ``richdoc deploy check --stack``
compares it with the template it is given, as against a stack on AWS.

The stack publishes its outputs and parameters under its name with a placeholder template
(moto's own CloudFormation would otherwise create every resource again:
``cloudformation.deploy``), so moto alone answers the placeholder. Other stacks are
moto's.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.cloudformation.models import CloudFormationBackend

TARGET = "moto.cloudformation.models.CloudFormationBackend.get_template"
PATCHED = (TARGET,)

# A stack's name or id -> the template it was deployed with (None: not the embedded stack).
DeployedTemplate = Callable[[str], "str | None"]


def install(exit_stack: contextlib.ExitStack, deployed_template: DeployedTemplate) -> None:
    get: Callable[[CloudFormationBackend, str], str | dict[str, Any]] = original(TARGET)

    @functools.wraps(get)
    def get_template(backend: CloudFormationBackend, name_or_stack_id: str) -> str | dict[str, Any]:
        text = deployed_template(name_or_stack_id)
        return text if text is not None else get(backend, name_or_stack_id)

    replace(exit_stack, TARGET, get_template)
