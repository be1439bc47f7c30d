"""CloudFormation's part of the embedded stack: template.yaml through samtranslator
(``template``), the intrinsic functions, conditions and order (``intrinsics``), and the
deployment (``deploy``), one provisioner per resource type (``provisioners``).

``parameters`` checks parameter values as CloudFormation does before it creates or updates
anything; ``update`` updates the embedded stack as CloudFormation updates a stack.
"""
