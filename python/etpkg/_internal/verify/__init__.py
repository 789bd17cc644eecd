"""`etpkg verify`: prove that an SDK wheel made by etpkg works for a C++ consumer.

wheel.py reads the wheel back into the Sdk model; workspace.py installs it into a fresh venv;
consumers.py renders the consumer projects from templates/; each module of contracts/ proves
one contract; suite.py runs them and collects the results; cli.py is `etpkg verify`.
"""
