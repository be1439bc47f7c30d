"""Where moto is kinder than AWS, made as strict as AWS documents (docs/moto-fixes.md).

* ``dynamodb_index_lag``: a global secondary index shows a write some time after its
  table does, as DynamoDB's do (moto updates them in the write);
* ``dynamodb_client_tokens``: a TransactWriteItems repeated with its
  ``ClientRequestToken`` within ten minutes changes nothing again, as DynamoDB's does
  (moto ignores the token).
"""
