"""The page tests find the headless Chromium a machine has (issue 26: with only
chromium-headless-shell installed, 8 page tests skipped with "Chromium is not installed")."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import browser


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_page_tests_find_a_playwright_headless_shell(tmp_path, monkeypatch):
    shell = _executable(tmp_path / "chromium_headless_shell-1200" / "chrome-linux" / "headless_shell")
    full = _executable(tmp_path / "chromium-1200" / "chrome-linux" / "chrome")
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    candidates = browser.browser_candidates()
    assert str(shell) in candidates and str(full) in candidates
    assert candidates.index(str(shell)) < candidates.index(str(full))


def test_page_tests_look_for_debian_chromium_headless_shell():
    assert "/usr/bin/chromium-headless-shell" in browser.browser_candidates()


def test_evalconv_chromium_comes_first(tmp_path, monkeypatch):
    mine = _executable(tmp_path / "my-chrome")
    monkeypatch.setenv("EVALCONV_CHROMIUM", str(mine))
    assert browser.chromium_path() == str(mine)


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium-headless-shell"), reason="chromium-headless-shell is not installed")
def test_chromium_headless_shell_renders_a_page(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCONV_CHROMIUM", "/usr/bin/chromium-headless-shell")
    page = tmp_path / "p.html"
    page.write_text("<title>ok</title><p id=x>evalconv</p>", encoding="utf-8")
    with browser.Browser() as b:
        b.open(str(page), width=390)
        assert b.eval("document.getElementById('x').textContent") == "evalconv"
