"""The top floor of evaluation/: the evaluator registry and the dataset runner it drives, the report card,
the model comparison, the AML build, method cards and the protocols. It assembles the families; no family imports it."""
