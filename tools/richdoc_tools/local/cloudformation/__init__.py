"""CloudFormation's part of the embedded stack: template.yaml through samtranslator
(``template``), the intrinsic functions, conditions and order (``intrinsics``), and the
deployment (``deploy``), one provisioner per resource type (``provisioners``)."""
