"""Kyverno's JMESPath dialect: the compiler, the evaluator and its custom functions."""
