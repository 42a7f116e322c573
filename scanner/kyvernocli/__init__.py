"""``kyverno apply`` and ``kyverno test`` compatibility: ``apply`` (policies against manifest
files), ``apply_report`` (its PolicyReport output), ``resource_files`` (manifest file and folder
arguments -> resources), ``suites`` (kyverno-test.yaml suites) and ``suite_cluster`` (a suite's
offline cluster). The commands in ``scanner.commands`` parse, call these and print."""
