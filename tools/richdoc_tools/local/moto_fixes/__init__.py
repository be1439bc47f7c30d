"""Changes to moto's own behaviour: debts to moto, kept apart from the stack's seams
(``local.patches``: where the stack's runtime, callers, gate and locks enter moto, boto3
and Powertools).

* ``fidelity``: where stock moto is kinder than AWS, or answers otherwise, made to
  behave as AWS documents. Each fix is one module that says what moto does, what AWS
  does (with the AWS documentation page) and how it is fixed, and has a behavioural
  test against stock moto (``tests/aws/moto_fixes/test_fidelity_<fix>.py``) that is
  expected to fail while moto still differs and fails the suite once a moto release
  behaves as AWS does: then the fix is deleted. docs/moto-fixes.md lists them.
* ``speed``: where moto repeats work or does work that grows with what it holds, done
  once or in proportion, with the same answers (each has a test comparing its answers
  with moto's own), kept only where it pays (docs/benchmarks.md, item 5).
"""
