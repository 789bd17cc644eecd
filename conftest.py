"""The root conftest: pytest loads it before parsing the command line, so the options of the
plugins it names (--gate-budget, tests/gate_budget.py) work with or without a path argument."""

pytest_plugins = ["gate_budget"]
