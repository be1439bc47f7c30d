"""Changes to moto's own behaviour: debts to moto, kept apart from the stack's seams
(``local.patches``).

``fidelity``: where stock moto is kinder than AWS, made as strict as AWS documents. Each
fix is one module that says what moto does, what AWS does (with the AWS documentation
page) and how it is fixed, and has a behavioural test against stock moto
(``tests/aws/moto_fixes/``) that is expected to fail while moto still differs and turns
into a failure of the suite once a moto release behaves as AWS does: then the fix is
deleted. docs/moto-fixes.md lists them.
"""
