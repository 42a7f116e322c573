"""``scanner report``: render any stored run in any report format."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from scanner.commands.db import database_options, open_store
from scanner.config import ReportsConfig
from scanner.errors import ReportError, StoreError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

FORMATS = ("html", "json", "audit-html", "audit-json", "sarif", "junit", "policy-report", "openreports")


@click.group("report", invoke_without_command=True)
@database_options
@click.option("--run", "run", default="latest", show_default=True, help="Run id, or 'latest'.")
@click.option("--source", default=None, help="With --run latest: the latest run that scanned this source.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None, help="Report format (required).")
@click.option("--out", type=click.Path(allow_dash=True), default=None,
              help="Output file or folder, or - for standard output "
                   "(default: the config's reports.out, else ./reports).")
@click.option("--history", type=click.IntRange(min=1), default=None,
              help="Runs shown in trend charts (default: the config's reports.history, else 30).")
@click.option("--sign", "sign", default=None, metavar="KEY",
              help="Sign an audit report with this Ed25519 key: a PEM file, or env:NAME for an environment "
                   "variable holding one (default: the config's reports.signing_key). Writes <report>.sig.")
@click.option("--findings-only/--every-result", "findings_only", default=None,
              help="junit, policy-report, openreports: list only the fail, warn and error results "
                   "(default: the config's reports.findings_only, else every result).")
@click.pass_context
def report(ctx: click.Context, database_url: str | None, config_path: str | None, run: str, source: str | None,
           fmt: str | None, out: str | None, history: int | None, sign: str | None,
           findings_only: bool | None) -> int:
    """Render the report of a stored run (`scanner report verify FILE` checks a signed one)."""
    if ctx.invoked_subcommand is not None:
        return 0
    if fmt is None:
        raise click.UsageError("Missing option '--format'.")
    if sign is not None and not fmt.startswith("audit-"):
        raise click.BadParameter("only audit reports (audit-json, audit-html) are signed", param_hint="--sign")
    from scanner.config import load_config
    from scanner.report.render import default_file_name, lists_every_result, render_report, render_text
    from scanner.scan.report_data import build_report_data
    from scanner.store import COMPLETED_STATUSES

    into_folder = out is None  # the default, like the scan's reports.out, is a folder
    defaults = load_config(config_path).reports if config_path else ReportsConfig()
    out = defaults.out if out is None else out
    history = defaults.history if history is None else history
    findings_only = defaults.findings_only if findings_only is None else findings_only
    key = _signing_key(sign, defaults) if fmt.startswith("audit-") else None
    with open_store(database_url, config_path) as store:
        if run == "latest":
            run_id = store.latest_run_id(source)
            if run_id is None:
                what = f" for source {source!r}" if source else ""
                raise StoreError(f"no finished run{what} in {store.describe()}")
        else:
            try:
                run_id = int(run)
            except ValueError:
                raise click.BadParameter("must be a run id or 'latest'", param_hint="--run") from None
        data = build_report_data(store, run_id, history=history,
                                 findings_only=not lists_every_result(fmt, findings_only))
    if data.run.status not in COMPLETED_STATUSES:  # what a CI gate reads must not pass for a full run
        click.echo(f"warning: run {run_id} is {data.run.status}: its results are incomplete", err=True)
    if out == "-" and not into_folder:
        if sign is not None:
            raise click.BadParameter("a signed report is written to a file (its signature beside it)",
                                     param_hint="--out")
        click.echo(render_text(data, fmt, findings_only=findings_only), nl=False)
        return 0
    target = Path(out)
    if into_folder or (not target.suffix and not target.exists()):
        target = target / default_file_name(data, fmt)  # the folder is made when the file is written
    written = render_report(data, fmt, target, findings_only=findings_only)
    click.echo(written)
    if key is not None:
        from scanner.report.signing import write_signature

        click.echo(write_signature(written, data, key))
    return 0


def _signing_key(sign: str | None, defaults: ReportsConfig) -> Ed25519PrivateKey | None:
    """The key an audit report is signed with: ``--sign``, else the config's, else none."""
    if sign is None and defaults.signing_key is None:
        return None
    from scanner.report.signing import read_signing_key, signing_key_option

    if sign is not None:
        return signing_key_option(sign)
    assert defaults.signing_key is not None
    return read_signing_key(file=defaults.signing_key.file, env=defaults.signing_key.env)


@report.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The signer's public key (PEM): without it only the report's integrity is checked, "
                   "not who signed it.")
@click.option("--signature", "signature_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The signature file (default: FILE.sig).")
def verify(file: str, key_path: str | None, signature_path: str | None) -> int:
    """Check a signed audit report offline: exit 0 when it verifies, 1 when it does not."""
    from scanner.report.signing import SIGNATURE_SUFFIX, load_public_key, verify_report

    signature = Path(signature_path or file + SIGNATURE_SUFFIX)
    try:
        report_bytes, signature_bytes = Path(file).read_bytes(), signature.read_bytes()
        trusted = load_public_key(Path(key_path).read_bytes(), f"file {key_path}") if key_path else None
    except OSError as e:
        raise ReportError(f"cannot read {e.filename}: {e.strerror or type(e).__name__}") from None
    result = verify_report(report_bytes, signature_bytes, trusted)
    if not result.ok:
        for problem in result.problems:
            click.echo(f"{file}: NOT VERIFIED: {problem}")
        return 1
    click.echo(f"{file}: verified: run {result.run_id}, signed by key {result.key_id}")
    click.echo(f"  content {result.content_digest}")
    click.echo(f"  chain   {result.chain_digest or '(the run is not in the chain)'}")
    if not result.trusted:
        click.echo("warning: no --key given: the report is intact, but its signer's key was not checked",
                   err=True)
    return 0
