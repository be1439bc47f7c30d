"""Changes to moto's own behaviour: debts to moto.

``patches`` holds the embedded stack's seams (where the stack's runtime, IAM, faults and
clock enter moto). A module here instead changes what moto itself answers, because moto
answers otherwise than AWS: each says what moto does, what AWS does (with the AWS
documentation that says so), and has a behavioural test against stock moto
(``tests/aws/moto_fixes/``) that tells when a moto release makes it unnecessary.

* ``fidelity``: where moto is kinder than AWS, made as strict as AWS documents.
"""
