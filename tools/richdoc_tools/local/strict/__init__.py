"""What AWS enforces and moto does not, as the strict stack decides it: IAM per role
(``access`` assumes the roles and decides each request, ``permissions`` says what a
request needs, ``policies`` evaluates identity-based policies) and DynamoDB transaction
conflicts (``transactions``). The patch points (``patches``) put these decisions in
moto's request path; docs/embedded-stack.md lists every rule.

``queue_policies`` decides a service principal's send by the SQS queue's resource-based
policy.
"""
