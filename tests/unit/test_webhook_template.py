"""The webhook's part of template.yaml, and what the embedded stack's delivery decides
without a network (richdoc_tools.local.runtime.webhooks): a stack without a URL has none of it;
with one, a rule for every completion event targets the API destination with a retry
policy, a dead-letter queue the queue policy lets EventBridge send to, and a role that
may invoke the destination and nothing else; the secret is a NoEcho parameter."""

from __future__ import annotations

import base64
import re
import urllib.request
from pathlib import Path
from typing import Any

import boto3
import pytest
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.deploy import Deployment
from richdoc_tools.local.cloudformation.provisioners.events import endpoint_problem
from richdoc_tools.local.cloudformation.template import Template, TemplateError
from richdoc_tools.local.runtime.webhooks import authorization_headers

from tests.support.webhook_receiver import Authority, receiving

WEBHOOK_RESOURCES = {
    "WebhookConnection",
    "WebhookDestination",
    "WebhookDeadLetterQueue",
    "WebhookDeadLetterQueuePolicy",
    "WebhookRole",
    "WebhookRule",
    "WebhookDeadLettersAlarm",
}


def test_every_webhook_resource_and_output_exists_only_with_a_url(template: Template) -> None:
    resources = template.cfn["Resources"]
    webhook = {name for name in resources if name.startswith("Webhook")}
    assert webhook == WEBHOOK_RESOURCES
    assert {resources[name].get("Condition") for name in webhook} == {"HasWebhook"}
    outputs = template.cfn["Outputs"]
    assert {outputs[n].get("Condition") for n in outputs if n.startswith("Webhook")} == {
        "HasWebhook"
    }
    assert template.cfn["Conditions"]["HasWebhook"] == {
        "Fn::And": [
            {"Fn::Not": [{"Fn::Equals": [{"Ref": "WebhookUrl"}, ""]}]},
            {"Fn::Not": [{"Fn::Equals": [{"Ref": "WebhookAuthSecret"}, ""]}]},
        ]
    }
    assert template.cfn["Parameters"]["WebhookUrl"]["Default"] == ""


def _undeployed(template: Template, parameters: dict[str, str]) -> Deployment:
    """A deployment of the template with these parameters, not started: what it checks
    before creating anything."""
    return Deployment(
        Clients(boto3.Session(region_name="us-east-1"), region="us-east-1"),
        template,
        stack_name="checks",
        region="us-east-1",
        account="123456789012",
        parameters=parameters,
    )


@pytest.mark.parametrize(
    ("parameters", "refused"),
    [
        ({}, False),
        ({"WebhookUrl": "https://hooks.example.com/x", "WebhookAuthSecret": "k"}, False),
        ({"WebhookUrl": "https://hooks.example.com/x"}, True),
    ],
)
def test_a_url_without_its_secret_is_refused_before_anything_is_created(
    template: Template, parameters: dict[str, str], refused: bool
) -> None:
    deployment = _undeployed(template, parameters)
    if refused:
        with pytest.raises(TemplateError, match=r"WebhookNeedsItsSecret.*WebhookAuthSecret"):
            deployment.check_rules()
    else:
        deployment.check_rules()


def test_the_secret_is_a_no_echo_parameter_kept_by_the_connection(template: Template) -> None:
    parameters = template.cfn["Parameters"]
    assert parameters["WebhookAuthSecret"]["NoEcho"] is True
    assert parameters["WebhookAuthorization"]["AllowedValues"] == ["API_KEY", "BASIC"]
    auth = template.resources["WebhookConnection"]["Properties"]["AuthParameters"]
    api_key, basic = auth["Fn::If"][1:]
    assert api_key["ApiKeyAuthParameters"]["ApiKeyValue"] == {"Ref": "WebhookAuthSecret"}
    assert basic["BasicAuthParameters"]["Password"] == {"Ref": "WebhookAuthSecret"}


def test_the_url_is_refused_unless_eventbridge_takes_it(template: Template) -> None:
    """An https:// URL in the characters CreateApiDestination's InvocationEndpoint takes
    (botocore's model of it, the HttpsEndpoint shape), or empty: a plain-HTTP URL, even
    to this machine, is refused before anything is created, as EventBridge refuses it."""
    import botocore.session

    spec = template.cfn["Parameters"]["WebhookUrl"]
    endpoint = botocore.session.get_session().get_service_model("events").shape_for("HttpsEndpoint")
    assert spec["MaxLength"] == endpoint.metadata["max"]
    pattern = re.compile(spec["AllowedPattern"])
    for url in ("", "https://hooks.example.com/richdoc", "https://127.0.0.1:8443/hook?a=b%20c"):
        assert pattern.fullmatch(url), url
        assert not url or re.fullmatch(endpoint.metadata["pattern"], url)
    for url in (
        "http://127.0.0.1:8080/hook",
        "http://hooks.example.com/x",
        "ftp://127.0.0.1/",
        "https://hooks.example.com/a b",
        "https://",
    ):
        assert not pattern.fullmatch(url), url


def test_the_embedded_stack_refuses_a_url_aws_refuses_before_creating_anything(
    template: Template,
) -> None:
    parameters = {"WebhookUrl": "http://127.0.0.1:8080/hook", "WebhookAuthSecret": "k"}
    deployment = _undeployed(template, parameters)
    with pytest.raises(
        TemplateError, match=r"WebhookUrl=http://127\.0\.0\.1:8080/hook: an https://"
    ):
        deployment.check_parameters()


def test_every_completion_event_goes_to_the_destination_with_retries_and_a_dlq(
    template: Template,
) -> None:
    rule = template.resources["WebhookRule"]["Properties"]
    assert rule["EventBusName"] == {"Ref": "EventBus"}
    assert rule["EventPattern"] == {"source": ["richdoc"], "detail-type": ["Job Finished"]}
    [target] = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": ["WebhookDestination", "Arn"]}
    assert target["RoleArn"] == {"Fn::GetAtt": ["WebhookRole", "Arn"]}
    assert target["RetryPolicy"] == {
        "MaximumRetryAttempts": {"Ref": "WebhookMaximumRetryAttempts"},
        "MaximumEventAgeInSeconds": {"Ref": "WebhookMaximumEventAgeSeconds"},
    }
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": ["WebhookDeadLetterQueue", "Arn"]}}
    parameters = template.cfn["Parameters"]
    assert parameters["WebhookMaximumRetryAttempts"]["Default"] == 185  # AWS's defaults
    assert parameters["WebhookMaximumEventAgeSeconds"]["Default"] == 86400


def test_eventbridge_may_send_to_the_dlq_and_invoke_the_destination_only(
    template: Template,
) -> None:
    [statement] = template.resources["WebhookDeadLetterQueuePolicy"]["Properties"][
        "PolicyDocument"
    ]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Condition"] == {
        "ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": ["WebhookRule", "Arn"]}}
    }
    role: Any = template.resources["WebhookRole"]["Properties"]
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "events.amazonaws.com"}
    [policy] = role["Policies"]
    [allowed] = policy["PolicyDocument"]["Statement"]
    assert allowed == {
        "Effect": "Allow",
        "Action": "events:InvokeApiDestination",
        "Resource": {"Fn::GetAtt": ["WebhookDestination", "Arn"]},
    }


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://hooks.example.com/richdoc", True),
        ("https://127.0.0.1:9000/hook", True),
        ("http://127.0.0.1:9000/hook", False),
        ("http://hooks.example.com/hook", False),
        ("https:///no-host", False),
    ],
)
def test_the_embedded_stack_takes_https_endpoints_only(url: str, allowed: bool) -> None:
    assert (endpoint_problem(url) is None) is allowed


def test_the_connection_s_authorization_becomes_its_header() -> None:
    assert authorization_headers("API_KEY", {"api_key_name": "x-key", "api_key_value": "v"}) == {
        "x-key": "v"
    }
    [(name, value)] = authorization_headers("BASIC", {"username": "ada", "password": "p:w"}).items()
    assert name == "Authorization" and value == "Basic " + base64.b64encode(b"ada:p:w").decode()
    with pytest.raises(ValueError, match="OAUTH_CLIENT_CREDENTIALS"):
        authorization_headers("OAUTH_CLIENT_CREDENTIALS", {})


def test_the_command_line_takes_the_webhook_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, template: Template
) -> None:
    from richdoc_tools.cli.local import STACK_PARAMETERS_FROM_ENV, stack_parameters

    environment = {
        "RICHDOC_WEBHOOK_URL": "https://127.0.0.1:8443/hook",
        "RICHDOC_WEBHOOK_AUTHORIZATION": "BASIC",
        "RICHDOC_WEBHOOK_AUTH_NAME": "ada",
        "RICHDOC_WEBHOOK_SECRET": "s3cret",
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert stack_parameters() == {
        "WebhookUrl": "https://127.0.0.1:8443/hook",
        "WebhookAuthorization": "BASIC",
        "WebhookAuthName": "ada",
        "WebhookAuthSecret": "s3cret",
    }
    assert set(STACK_PARAMETERS_FROM_ENV.values()) <= set(template.cfn["Parameters"])


def test_the_delivery_verifies_the_endpoint_s_certificate(tmp_path: Path) -> None:
    """TLS as EventBridge uses it: a receiver's certificate is verified, against the
    system's authorities and the one the stack is told to trust, never skipped."""
    from richdoc_tools.local.runtime.webhooks import endpoint_opener, send

    with receiving("x-key", "the key", Authority.made_in(tmp_path)) as receiver:

        def request() -> urllib.request.Request:
            headers = {"x-key": "not the key", "Content-Type": "application/json"}
            return urllib.request.Request(receiver.url, data=b"{}", headers=headers)

        untrusted = send(endpoint_opener(None), request())
        assert (untrusted.delivered, untrusted.retried) == (False, True)
        assert "CERTIFICATE_VERIFY_FAILED" in untrusted.message
        assert receiver.requests == []  # the handshake failed: nothing was sent
        trusted = send(endpoint_opener(receiver.ca_file), request())
        assert trusted.code == "401"  # over TLS to the receiver, which refused the key
        assert [r.status for r in receiver.requests] == [401]
