"""The compiled-template cache of the HTML reports: used when it works, skipped when it does not."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import jinja2
import pytest

from scanner.report.html import _TemplateCache

TEMPLATE = "{% for x in items %}<{{ x }}>{% endfor %}"


def _render(cache: _TemplateCache) -> str:
    env = jinja2.Environment(loader=jinja2.DictLoader({"t.j2": TEMPLATE}), bytecode_cache=cache, autoescape=True)
    return env.get_template("t.j2").render(items=["a", "b"])


def _damage(folder: Path) -> None:
    for file in folder.iterdir():
        file.write_bytes(file.read_bytes()[:20] + b"\x00garbage")


def _truncate(folder: Path) -> None:
    for file in folder.iterdir():
        file.write_bytes(file.read_bytes()[:-5])


def _remove(folder: Path) -> None:
    shutil.rmtree(folder)


@pytest.mark.parametrize("spoil", [_damage, _truncate, _remove], ids=["damaged", "truncated", "folder-removed"])
def test_a_broken_cache_only_means_compiling_again(tmp_path: Path, spoil: Callable[[Path], None]) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    cache = _TemplateCache(str(folder))
    assert _render(cache) == "<a><b>"
    assert len(list(folder.iterdir())) == 1  # the compiled template was kept
    spoil(folder)
    assert _render(cache) == "<a><b>"


def test_a_kept_template_is_loaded_not_compiled(tmp_path: Path) -> None:
    cache = _TemplateCache(str(tmp_path))
    _render(cache)
    assert cache.get_bucket(jinja2.Environment(), "t.j2", None, TEMPLATE).code is not None
