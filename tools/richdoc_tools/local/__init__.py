"""The embedded stack: template.yaml deployed into an in-process AWS emulation (moto).

* ``settings``: ``StackSettings``, how a stack is started, built once by its user.
* ``stack``: ``EmbeddedStack``, what its users see: start and stop, upload, wait for jobs.
* ``emulation``: the AWS emulation it runs in: moto, in this process or served.
* ``clients``: its boto3 clients, one per service, typed per service.
* ``cloudformation``: template.yaml through samtranslator, deployed and updated as
  CloudFormation does, one provisioner per resource type.
* ``runtime``: the Lambda service as the stack runs it, and the deliveries AWS makes on
  its own.
* ``requests``: who makes each AWS request, and the request as the stack's checks see it.
* ``strict``: what AWS enforces and moto does not (IAM per role, transaction conflicts).
* ``patches``: the stack's own seams, where it enters moto, boto3 and Powertools.
* ``moto_fixes``: changes to moto's own behaviour, debts to moto kept apart from the
  seams.
* ``faults``: the failures the stack makes on purpose.
* ``patch_targets``: a patch target named by a dotted path, replaced until the stack
  stops (what ``patches`` and ``moto_fixes`` both patch with).
"""
