"""A real headless Chromium, driven over the DevTools protocol on a pipe (no extra packages).

`with Browser() as b: b.open(path, width=1366); b.eval("document.title")`. The browser is
$EVALCONV_CHROMIUM, else Debian's chromium or chromium-headless-shell, else one on the PATH, else a
Playwright download (`browser_candidates`). Locally a missing browser skips; in CI
(EVALCONV_REQUIRE_INTEROP=1) it fails, as the interop tests do.
"""
from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from interop import _missing

TIMEOUT_S = 60.0


def _playwright_browsers() -> list[str]:
    """Chromium builds Playwright downloaded ($PLAYWRIGHT_BROWSERS_PATH, else ~/.cache/ms-playwright)."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    found = sorted(root.glob("chromium_headless_shell-*/chrome-linux*/headless_shell"), reverse=True)
    found += sorted(root.glob("chromium-*/chrome-linux*/chrome"), reverse=True)
    return [str(path) for path in found]


def browser_candidates() -> list[str]:
    """Where a headless Chromium may be, in order: $EVALCONV_CHROMIUM, Debian's chromium and
    chromium-headless-shell packages, a Chromium on the PATH, then Playwright's browsers."""
    names = ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome", "headless_shell")
    return [c for c in (os.environ.get("EVALCONV_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-headless-shell",
                        *(shutil.which(name) for name in names), *_playwright_browsers()) if c]


def chromium_path() -> str | None:
    for candidate in browser_candidates():
        if Path(candidate).exists():
            return candidate
    return None


def require_chromium() -> str:
    found = chromium_path()
    if found is None:
        _missing("a headless Chromium (apt-get install -y chromium, or chromium-headless-shell; or set EVALCONV_CHROMIUM)")
    return found  # type: ignore[return-value]


class Browser:
    def __init__(self) -> None:
        self.binary = require_chromium()
        self._next = 0
        self._events: list[dict[str, Any]] = []
        self._buffer = b""

    def __enter__(self) -> "Browser":
        self._profile = tempfile.mkdtemp(prefix="evalconv-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds_3_and_4() -> None:  # the protocol pipe: Chromium reads fd 3 and writes fd 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-extensions", "--disable-sync", "--no-first-run", "--mute-audio", "--hide-scrollbars",
             "--disable-dev-shm-usage", f"--user-data-dir={self._profile}", "--remote-debugging-pipe",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds_3_and_4, pass_fds=(3, 4))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_chrome, data):]

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the protocol pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_event(self, method: str) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[i]
                    return
            self._events.append(self._receive(deadline))

    def open(self, path: str | Path, *, width: int = 1366, height: int = 900, fragment: str = "") -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self._events.clear()
        self.call("Page.navigate", session=True, url=Path(path).resolve().as_uri() + fragment)
        self._wait_event("Page.loadEventFired")

    def go(self, fragment: str) -> None:
        """Follow an in-page link (`#id`), as a click on it would."""
        self.eval(f"location.hash = {json.dumps(fragment)}")

    def eval(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, out: str | Path, *, width: int = 1366, max_height: int = 4000) -> None:
        height = min(int(self.eval("document.documentElement.scrollHeight")), max_height)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        shot = self.call("Page.captureScreenshot", session=True, format="png",
                         clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        Path(out).write_bytes(base64.b64decode(shot["data"]))


def cli_page(page: Path, *args: Any, exit_code: int) -> tuple[Path, Any]:
    """Run `evalconv ARGS --format json --html PAGE`; the page and the JSON the command printed."""
    from click.testing import CliRunner

    from evalconv.cli import cli
    result = CliRunner().invoke(cli, [str(a) for a in (*args, "--format", "json", "--html", page)], catch_exceptions=False)
    assert result.exit_code == exit_code, result.output
    return page, json.loads(result.stdout)


def page_data(page: str | Path) -> Any:
    """The data a page was made from, as it embeds it; the page must be one self-contained file
    (no network, no external scripts, styles or fonts)."""
    html = Path(page).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "<script src" not in html and "@import" not in html and "url(" not in html
    embedded = re.search(r'<script type="application/json" id="evalconv-data">(.*?)</script>', html, re.S)
    assert embedded, "the page embeds no data"
    return json.loads(embedded.group(1))


# What a person sees at a laptop's width: nothing sticks out of the page or its box.
OVERFLOW_JS = """(() => {
  const width = document.documentElement.clientWidth, bad = [];
  const scrolled = document.documentElement.scrollWidth;
  if (scrolled > width) bad.push('page scrolls sideways: ' + scrolled);
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (el.closest('.scroll') && !el.classList.contains('scroll')) continue;  // scrolls inside its box
    const name = el.tagName + '.' + (el.className.baseVal ?? el.className);
    if (r.right > width + 0.5 || r.left < -0.5) bad.push(name + ' ' + r.left + '..' + r.right);
  }
  return bad;
})()"""

# What a person sees at a width (issue 26: at 1280 px the round-trip table split "identic|al", at 390
# px it went one character a line, chart labels shrank to 7 px): the page does not scroll sideways
# (a table scrolls inside its own .scroll box), no run of letters or digits is broken across lines
# (runs over WORD_MAX characters, such as hashes, may wrap), and no visible text is under MIN_PX.
LAYOUT_JS = """((MIN_PX, WORD_MAX) => {
  const bad = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) bad.push('page scrolls sideways: ' + document.documentElement.scrollWidth);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest('script,style,title')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;  // not shown (a closed drill-down)
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (node.textContent.trim() && size < MIN_PX) bad.push('text under ' + MIN_PX + 'px (' + size + '): ' + node.textContent.slice(0, 40));
    for (const m of node.textContent.matchAll(/[\\p{L}\\p{N}]+/gu)) {
      if (m[0].length < 2 || m[0].length > WORD_MAX) continue;
      range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
      const tops = [...range.getClientRects()].filter(r => r.width > 0).map(r => r.top);
      if (Math.max(...tops) - Math.min(...tops) > size / 2) bad.push('word broken across lines: ' + m[0]);
    }
  }
  return bad;
})(11, 24)"""
