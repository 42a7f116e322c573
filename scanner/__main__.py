"""``python -m scanner``: the ``scanner`` command."""

from scanner.cli import run

if __name__ == "__main__":
    run()
