"""The config file: the shipped example loads, every user error is located and typed."""

from __future__ import annotations

import pathlib

import pytest

from scanner.config import load_config
from scanner.errors import ConfigError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_config_example_loads_with_every_section() -> None:
    config = load_config(ROOT / "config.example.yaml", env={})
    assert config.database_url == f"sqlite:///{ROOT / 'scanner.db'}"
    assert [s.name for s in config.sources] == ["example-gitops", "example-cluster"]
    assert config.sources[0].git is not None and config.sources[0].git.url == str(ROOT)
    assert config.sources[1].paths == (str(ROOT / "examples" / "cluster-export.yaml"),)
    assert config.policies[0].path == str(ROOT / "examples" / "policies")
    assert config.reports.formats == ("html", "json")
    assert (config.reports.keep, config.reports.findings_only) == (90, False)
    assert [(e.cron, e.timezone) for e in config.schedule] == [("0 2 * * *", "UTC")]
    assert config.scan.fail_on == "enforce" and config.scan.strict_policies is False
    assert (config.policies[0].include, config.policies[0].exclude) == ((), ())
    assert config.digest.startswith("sha256:")


def test_config_database_url_environment_override() -> None:
    config = load_config(ROOT / "config.example.yaml", env={"SCANNER_DATABASE_URL": "postgresql+psycopg://h/db"})
    assert config.database_url == "postgresql+psycopg://h/db"


BASE = "policies: [{path: p}]\nsources: [{name: a, export: {path: e.yaml}}]\n"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param(BASE + "databse: {url: x}\n", ":3:", "unknown key 'databse'", id="unknown-top-level-key"),
        pytest.param("database: {url: 3}\n" + BASE, ":1:17", "database.url: must be a non-empty string", id="wrong-type"),
        pytest.param("policies: [{path: p}]\nsources:\n  - name: a\n    exprt: {path: y}\n", ":4:",
                     "sources[0].exprt: unknown key", id="unknown-source-key"),
        pytest.param("policies: [{path: p}]\nsources: [{name: a, export: {path: x}}, {name: a, export: {path: y}}]\n",
                     ":2:", "duplicate source name", id="duplicate-source"),
        pytest.param(BASE + "schedule: [{cron: '0 2 * *'}]\n", ":3:", "5-field cron", id="bad-cron"),
        pytest.param(BASE + "schedule:\n- cron: '0 2 * * *'\n  timezone: Mars/Olympus\n", ":5:13",
                     "schedule[0].timezone: unknown time zone 'Mars/Olympus'", id="unknown-timezone"),
        pytest.param(BASE + "reports: {formats: [pdf]}\n", ":3:", "unknown format 'pdf'", id="unknown-report-format"),
        pytest.param(BASE + "scan: {fail_on: sometimes}\n", ":3:", "scan.fail_on", id="bad-fail-on"),
        pytest.param("sources: [{name: a, export: {path: x}}]\n", ":1:", "policies: must be a non-empty list",
                     id="missing-policies"),
        pytest.param("policies: [\n", ":2:", "invalid YAML", id="unparseable"),
        pytest.param("policies: [{path: p}]\nsources: [{name: a, git: {url: r, ref: 1.10}}]\n", ":2:",
                     "sources[0].git.ref: must be a string, not a number: quote it",
                     id="unquoted-numeric-ref"),
        pytest.param("policies: [{path: p}]\nsources: [{name: a, git: {url: r, path: apps}}]\n", ":2:",
                     "sources[0].git.path: unknown key", id="git-source-path"),
        pytest.param("policies: [{path: p}]\nsources: [{name: a, directory: {paths: [x, y]}}]\n", ":2:",
                     "sources[0].directory.paths: unknown key", id="directory-paths"),
        pytest.param("policies: [{path: p, include: '*.yaml'}]\nsources: [{name: a, export: {path: e.yaml}}]\n",
                     ":1:", "policies[0].include: must be a list of strings", id="policy-include-not-a-list"),
        pytest.param("policies: [{path: p, exclude: [1]}]\nsources: [{name: a, export: {path: e.yaml}}]\n",
                     ":1:", "policies[0].exclude: must be a list of strings", id="policy-exclude-not-strings"),
        pytest.param(BASE + "scan: {strict_policies: yes please}\n", ":3:", "scan.strict_policies: must be true or "
                     "false", id="strict-policies-not-a-boolean"),
    ],
)
def test_config_errors_are_located(tmp_path: pathlib.Path, text: str, where: str, message: str) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert where in str(info.value) and message in str(info.value), str(info.value)


def test_config_missing_file_is_a_config_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.yaml", env={})


def test_config_unquoted_kustomize_off_means_off(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text("policies: [{path: p}]\nsources: [{name: a, directory: {path: d}, kustomize: off}]\n")
    assert load_config(path, env={}).sources[0].kustomize == "off"


def test_config_database_url_from_the_environment_is_relative_to_the_working_directory(tmp_path: pathlib.Path) -> None:
    (tmp_path / "conf").mkdir()
    path = tmp_path / "conf" / "scanner.yaml"
    path.write_text("database: {url: 'sqlite:///in-config.db'}\n" + BASE)
    assert load_config(path, env={}).database_url == f"sqlite:///{tmp_path / 'conf' / 'in-config.db'}"
    assert load_config(path, env={"SCANNER_DATABASE_URL": "sqlite:///env.db"}).database_url == "sqlite:///env.db"


@pytest.mark.parametrize(("entry", "include", "exclude", "strict"), [
    pytest.param("{path: p}", (), (), "", id="no-globs-no-strict"),
    pytest.param("{path: p, include: ['team/**'], exclude: ['**/*-test.yaml']}", ("team/**",), ("**/*-test.yaml",),
                 "scan: {strict_policies: true}\n", id="path-globs-and-strict"),
    pytest.param("{git: {url: https://example.com/p.git, path: pss}, exclude: [old/]}", (), ("old/",), "",
                 id="git-location-globs"),
])
def test_config_policy_globs_and_strict_policies(tmp_path: pathlib.Path, entry: str, include: tuple, exclude: tuple,
                                                 strict: str) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(f"policies: [{entry}]\nsources: [{{name: a, export: {{path: e.yaml}}}}]\n{strict}")
    config = load_config(path, env={})
    assert (config.policies[0].include, config.policies[0].exclude) == (include, exclude)
    assert config.scan.strict_policies is bool(strict)


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("[GitHub.com, git.example.org]", ("github.com", "git.example.org"), id="hosts-lowercased"),
    pytest.param("[https://github.com]", r"sources\[0\].kustomize_remote_hosts\[0\]: must be a host name", id="url-refused"),
    pytest.param("[github.com/org]", r"sources\[0\].kustomize_remote_hosts\[0\]: must be a host name", id="path-refused"),
    pytest.param("github.com", r"sources\[0\].kustomize_remote_hosts: must be a list of strings", id="not-a-list-refused"),
])
def test_config_kustomize_remote_hosts(tmp_path: pathlib.Path, value: str, expected: object) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(f"policies: [{{path: p}}]\nsources: [{{name: a, directory: {{path: d}}, kustomize_remote_hosts: {value}}}]\n")
    if isinstance(expected, tuple):
        assert load_config(path, env={}).sources[0].kustomize_remote_hosts == expected
    else:
        with pytest.raises(ConfigError, match=expected):
            load_config(path, env={})


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("[apps/base, ./team/]", ("apps/base", "team"), id="kustomize-roots-are-normalised-folders"),
    pytest.param("[../outside]", r"scanner.yaml:2:61: sources\[0\].kustomize_roots\[0\]: must be a folder relative", id="root-outside-refused"),
    pytest.param("[/abs]", r"scanner.yaml:2:61: sources\[0\].kustomize_roots\[0\]: must be a folder relative", id="absolute-root-refused"),
    pytest.param("apps/base", r"scanner.yaml:2:60: sources\[0\].kustomize_roots: must be a list of strings", id="root-not-a-list-refused"),
])
def test_config_kustomize_roots(tmp_path: pathlib.Path, value: str, expected: object) -> None:
    path = tmp_path / "scanner.yaml"
    path.write_text(f"policies: [{{path: p}}]\nsources: [{{name: a, directory: {{path: d}}, kustomize_roots: {value}}}]\n")
    if isinstance(expected, tuple):
        assert load_config(path, env={}).sources[0].kustomize_roots == expected
    else:
        with pytest.raises(ConfigError, match=expected):
            load_config(path, env={})
