"""Signed audit reports: `scanner report --sign`, `scanner report verify`, the config's signing key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from scanner.cli import main
from scanner.config import load_config
from scanner.engine.types import RuleStatus
from scanner.errors import ReportError
from scanner.report.signing import load_private_key, read_signing_key
from scanner.scan.report_data import render_configured_reports
from scanner.store import Store
from tests.store.conftest import day
from tests.store.scan_helpers import pod, scan


def _write_key(path: Path, key: Ed25519PrivateKey | None = None) -> tuple[Path, Path]:
    """A private key file and its public key file."""
    key = key or Ed25519PrivateKey.generate()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    public = path.with_suffix(".pub")
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return path, public


@pytest.fixture
def database(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    with Store(url) as store:
        scan(store, day(0), {pod("web"): {("require-labels", "check"): RuleStatus.FAIL}})
        scan(store, day(1), {pod("web"): {("require-labels", "check"): RuleStatus.PASS},
                             pod("db"): {("require-labels", "check"): RuleStatus.SKIP}})
    return url


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _signed(tmp_path: Path, database: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    key, public = _write_key(tmp_path / "audit.key")
    report = tmp_path / f"run.{fmt}"
    code, out, _ = _main(capsys, "report", "--database", database, "--format", fmt, "--out", str(report),
                         "--sign", str(key))
    assert (code, out.splitlines()) == (0, [str(report), f"{report}.sig"])
    assert b"PRIVATE" not in (tmp_path / f"run.{fmt}.sig").read_bytes()
    return report, public


@pytest.mark.parametrize("fmt", [pytest.param("audit-json", id="audit-json"),
                                 pytest.param("audit-html", id="audit-html")])
def test_signing_signed_report_verifies_with_its_key(fmt: str, database: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    report, public = _signed(tmp_path, database, fmt, capsys)
    with Store(database) as store:
        link = store.chain_link(2)
    assert link is not None and link.chain_digest in report.read_text()
    code, out, err = _main(capsys, "report", "verify", str(report), "--key", str(public))
    assert code == 0 and out.startswith(f"{report}: verified: run 2, signed by key sha256:")
    assert f"chain   {link.chain_digest}" in out and err == ""
    code, _, err = _main(capsys, "report", "verify", str(report))
    assert code == 0 and "no --key given" in err


@pytest.mark.parametrize("fmt", [pytest.param("audit-json", id="audit-json"),
                                 pytest.param("audit-html", id="audit-html")])
@pytest.mark.parametrize("where", [pytest.param(0.1, id="near-the-start"), pytest.param(0.5, id="in-the-middle"),
                                   pytest.param(1.0, id="last-byte")])
def test_signing_one_changed_byte_fails(fmt: str, where: float, database: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    report, public = _signed(tmp_path, database, fmt, capsys)
    data = bytearray(report.read_bytes())
    at = min(int(len(data) * where), len(data) - 1)
    data[at] = data[at] ^ 0x01
    report.write_bytes(bytes(data))
    code, out, _ = _main(capsys, "report", "verify", str(report), "--key", str(public))
    assert code == 1 and "NOT VERIFIED: the report file changed since it was signed" in out


def test_signing_wrong_key_fails(database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = _signed(tmp_path, database, "audit-json", capsys)
    _, other = _write_key(tmp_path / "other.key")
    code, out, _ = _main(capsys, "report", "verify", str(report), "--key", str(other))
    assert code == 1 and "NOT VERIFIED: signed by key sha256:" in out and "not by the key given" in out


@pytest.mark.parametrize(("field", "value", "problem"), [
    pytest.param("chain_digest", "sha256:0", "the signature does not match its statement", id="chain-digest-swapped"),
    pytest.param("run_id", 1, "the signature does not match its statement", id="run-id-swapped"),
    pytest.param("signature", "AAAA", "the signature does not match its statement", id="signature-replaced"),
    pytest.param("schema", "urn:other", "not supported: signature schema", id="unknown-schema"),
])
def test_signing_edited_signature_file_fails(field: str, value: object, problem: str, database: str,
                                             tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, public = _signed(tmp_path, database, "audit-json", capsys)
    signature = Path(f"{report}.sig")
    document = json.loads(signature.read_text())
    document[field] = value
    signature.write_text(json.dumps(document))
    code, out, _ = _main(capsys, "report", "verify", str(report), "--key", str(public))
    assert code == 1 and problem in out


def test_signing_edited_record_fails_on_its_content_digest_too(database: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    report, public = _signed(tmp_path, database, "audit-json", capsys)
    document = json.loads(report.read_text())
    document["matrix"][0]["status"] = "pass"
    report.write_text(json.dumps(document))
    code, out, _ = _main(capsys, "report", "verify", str(report), "--key", str(public))
    assert code == 1 and "the audit record's content does not match its content_digest" in out


@pytest.mark.parametrize(("argv", "message"), [
    pytest.param(["--format", "json", "--sign", "{key}"], "only audit reports", id="not-an-audit-format"),
    pytest.param(["--format", "audit-json", "--out", "-", "--sign", "{key}"], "written to a file", id="stdout"),
    pytest.param(["--format", "audit-json", "--sign", "{tmp}/none.key"], "cannot read the signing key file",
                 id="missing-key-file"),
    pytest.param(["--format", "audit-json", "--sign", "env:SCANNER_TEST_NO_SUCH_KEY"],
                 "environment variable SCANNER_TEST_NO_SUCH_KEY is not set", id="unset-key-variable"),
    pytest.param(["--format", "audit-json", "--sign", "{tmp}/ec.key"], "not supported: EC keys",
                 id="not-an-ed25519-key"),
])
def test_signing_refusals(argv: list[str], message: str, database: str, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    key, _ = _write_key(tmp_path / "audit.key")
    (tmp_path / "ec.key").write_bytes(generate_private_key(SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    argv = [a.format(key=key, tmp=tmp_path) for a in argv]
    code, _, err = _main(capsys, "report", "--database", database, "--out", str(tmp_path / "r"), *argv)
    assert code == 2 and message in err
    assert "PRIVATE KEY" not in err


def test_signing_key_text_is_never_in_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n"
    monkeypatch.setenv("SCANNER_TEST_AUDIT_KEY", secret)
    with pytest.raises(ReportError) as raised:
        read_signing_key(env="SCANNER_TEST_AUDIT_KEY")
    assert "environment variable SCANNER_TEST_AUDIT_KEY" in str(raised.value)
    assert "c2VjcmV0" not in str(raised.value) and raised.value.__cause__ is None


def test_signing_config_key_signs_the_scan_audit_reports(database: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    key, public = _write_key(tmp_path / "audit.key")
    monkeypatch.setenv("SCANNER_TEST_AUDIT_KEY", key.read_text())
    config_path = tmp_path / "scanner.yaml"
    config_path.write_text(f'database: {{url: "{database}"}}\npolicies: [{{path: policies}}]\n'
                           "sources: [{name: repo, directory: {path: repo}}]\n"
                           "reports: {out: out, formats: [json, audit-json, audit-html], "
                           "signing_key: {env: SCANNER_TEST_AUDIT_KEY}}\n")
    config = load_config(config_path)
    with Store(database) as store:
        written, _ = render_configured_reports(store, 2, config)
    assert [Path(p).name for p in written] == ["scanner-run-2.json", "scanner-run-2.audit.json",
                                               "scanner-run-2.audit.html", "scanner-run-2.audit.json.sig",
                                               "scanner-run-2.audit.html.sig"]
    for name in ("scanner-run-2.audit.json", "scanner-run-2.audit.html"):
        assert _main(capsys, "report", "verify", str(tmp_path / "out" / name), "--key", str(public))[0] == 0
    assert key.read_text().splitlines()[1] not in "".join(p.read_text() for p in (tmp_path / "out").iterdir())


@pytest.mark.parametrize(("entry", "message"), [
    pytest.param("{}", "needs exactly one of file", id="neither"),
    pytest.param("{file: a.key, env: KEY}", "needs exactly one of file", id="both"),
    pytest.param("{path: a.key}", "path", id="unknown-key"),
])
def test_signing_config_key_entry_is_checked(entry: str, message: str, tmp_path: Path) -> None:
    config_path = tmp_path / "scanner.yaml"
    config_path.write_text("policies: [{path: policies}]\nsources: [{name: repo, directory: {path: repo}}]\n"
                           f"reports: {{signing_key: {entry}}}\n")
    with pytest.raises(Exception, match=message) as raised:
        load_config(config_path)
    assert "scanner.yaml" in str(raised.value)


def test_signing_private_key_loads_only_as_pem() -> None:
    with pytest.raises(ReportError, match="not an unencrypted PEM private key"):
        load_private_key(b"not a key", "file x.key")
