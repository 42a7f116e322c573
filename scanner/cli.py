"""The command line: a thin Click layer that parses, calls, prints and maps errors to exit codes.

Exit codes: 0 clean; 1 findings that should fail; 2 usage, config or policy error;
3 the scan finished but some sources failed; 4 the database was lost (unreachable, or its
connection dropped or stopped answering): nothing is wrong with the command, run it again.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import os
import sys
import threading

import click

from scanner import __version__
from scanner.errors import DatabaseLostError, ScannerError
from scanner.scan.processes import collect_less_often, exit_on_terminate

# Sub-commands are imported only when used, so `scanner test` starts fast.
COMMANDS: dict[str, str] = {
    "test": "scanner.commands.test:test",
    "apply": "scanner.commands.apply:apply",
    "scan": "scanner.commands.scan:scan",
    "schedule": "scanner.commands.schedule:schedule",
    "report": "scanner.commands.report:report",
    "db": "scanner.commands.db:db",
    "runs": "scanner.commands.runs:runs",
    "jp": "scanner.commands.jp:jp",
    "enqueue": "scanner.commands.distributed:enqueue",
    "worker": "scanner.commands.distributed:worker",
}

EXIT_USAGE = 2
EXIT_DATABASE_LOST = 4


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scanner")
def cli() -> None:
    """Scan Kubernetes manifests from Git repositories and cluster exports with Kyverno policies."""


def main(argv: list[str] | None = None) -> int:
    try:
        result = cli.main(args=argv, prog_name="scanner", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.Abort:
        click.echo("aborted", err=True)
        return 130
    except DatabaseLostError as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_DATABASE_LOST
    except ScannerError as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    return int(result or 0)


def run() -> None:
    """The ``scanner`` program: ``main`` with the garbage collector tuned for batch work.

    SIGTERM ends it as Ctrl-C does (``scan.processes.exit_on_terminate``), its child processes with
    it. Collections run less often, and the program ends without tearing the interpreter down
    object by object: once its exit hooks ran and its output is flushed, the system reclaims
    the memory at once. (With another thread still running it ends the usual way, which
    waits for that thread.)
    """
    collect_less_often()
    exit_on_terminate()
    atexit.register(gc.freeze)  # exit hooks run in reverse order: this one after those of the run
    code = main()
    run_exit_hooks = getattr(atexit, "_run_exitfuncs", None)  # CPython's
    if run_exit_hooks is None or threading.active_count() > 1:
        sys.exit(code)
    run_exit_hooks()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush to
            stream.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
