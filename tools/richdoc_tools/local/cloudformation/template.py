"""template.yaml, translated by the SAM translator, as the embedded stack deploys it.

The embedded stack never keeps a second copy of the infrastructure: it reads
``template.yaml``, lets samtranslator expand the serverless resources exactly as
``sam deploy`` would, and provisions the resulting CloudFormation resources into moto.
Local paths (``CodeUri``, ``ContentUri``, ``DefinitionUri``) are swapped for what a
package step would upload, and each function remembers where its handler lives.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCAL_CODE_BUCKET = "richdoc-local-code"
LOCAL_IMAGE_REPO = "richdoc-local"


class TemplateError(ValueError):
    """The template uses something the embedded stack cannot deploy."""


@dataclass(frozen=True)
class HandlerSource:
    """Where a function's handler is in the repository."""

    logical_id: str
    code_dir: Path
    handler: str  # "module.function", as in the template or the image command
    image: bool = False  # a container-image function (the CPU-heavy parse tiers)
    # The checkout the code is in (its layers/docling is the layer); None: this process's.
    root: Path | None = None

    @property
    def layer_dir(self) -> Path | None:
        return self.root / "layers" / "docling" if self.root is not None else None

    @property
    def module_path(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return self.code_dir / (module.replace(".", "/") + ".py")

    @property
    def function_name(self) -> str:
        return self.handler.rpartition(".")[2]


@dataclass(frozen=True)
class Template:
    root: Path
    sam: dict[str, Any]  # as written
    cfn: dict[str, Any]  # after the SAM transform
    handlers: dict[str, HandlerSource]  # function logical id -> handler source

    @property
    def resources(self) -> dict[str, Any]:
        resources: dict[str, Any] = self.cfn["Resources"]
        return resources

    def parameter_defaults(self) -> dict[str, str]:
        return {
            name: str(spec["Default"])
            for name, spec in self.cfn.get("Parameters", {}).items()
            if "Default" in spec
        }


def repository_root() -> Path:
    """The checkout that holds template.yaml (the package lives in layers/docling/)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "template.yaml").is_file() and (parent / "statemachine").is_dir():
            return parent
    raise FileNotFoundError("template.yaml not found above " + str(here))


def _handler_sources(root: Path, resources: dict[str, Any]) -> dict[str, HandlerSource]:
    handlers = {}
    for logical_id, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties", {})
        if props.get("PackageType") == "Image":
            dockerfile = root / resource["Metadata"]["Dockerfile"]
            command = props["ImageConfig"]["Command"]
            handlers[logical_id] = HandlerSource(
                logical_id, dockerfile.parent, command[0], image=True, root=root
            )
        else:
            handlers[logical_id] = HandlerSource(
                logical_id, root / props["CodeUri"], props["Handler"], root=root
            )
    return handlers


def code_version(root: Path) -> str:
    """What names a checkout's code in the packaged template, as ``sam package`` names an
    upload by its content: another checkout (another release) is other code, and a stack
    update from one to the other updates every function and replaces the layer."""
    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]


def _packaged(root: Path, sam: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """What ``sam package`` would hand to CloudFormation: no local paths left."""
    packaged = copy.deepcopy(sam)
    version = code_version(root)
    for logical_id, resource in packaged["Resources"].items():
        props = resource.setdefault("Properties", {})
        kind = resource.get("Type")
        if kind == "AWS::Serverless::Function":
            if props.get("PackageType") == "Image":
                registry = f"{account}.dkr.ecr.{region}.amazonaws.com"
                tag = f"{logical_id.lower()}-{version}"
                props["ImageUri"] = f"{registry}/{LOCAL_IMAGE_REPO}:{tag}"
            else:
                props["CodeUri"] = f"s3://{LOCAL_CODE_BUCKET}/{logical_id}-{version}.zip"
        elif kind == "AWS::Serverless::LayerVersion":
            props["ContentUri"] = f"s3://{LOCAL_CODE_BUCKET}/{logical_id}-{version}.zip"
        elif kind == "AWS::Serverless::StateMachine" and "DefinitionUri" in props:
            definition_file = root / props.pop("DefinitionUri")
            props["Definition"] = json.loads(definition_file.read_text())
    return packaged


def load_template(
    root: Path | None = None, *, account: str = "123456789012", region: str = "us-east-1"
) -> Template:
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator
    from samtranslator.yaml_helper import yaml_parse

    root = root or repository_root()
    sam = yaml_parse((root / "template.yaml").read_text())
    session = boto3.Session(region_name=region)
    cfn = Translator(None, Parser(), boto_session=session).translate(
        _packaged(root, sam, account, region),
        parameter_values={},
        get_managed_policy_map=lambda: {},
    )
    return Template(root=root, sam=sam, cfn=cfn, handlers=_handler_sources(root, sam["Resources"]))
