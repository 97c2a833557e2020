"""The documentation site as a person sees it.

One strict build (``mkdocs build --strict``: notebooks executed, every snippet's figures
drawn, the gallery drawn), served on loopback and opened page by page in headless Chromium:
no broken image, no console error, no dead internal link; every notebook and every
tutorial/how-to page that draws shows its figures. Screenshots of the home page, the
tutorial and the gallery are kept in ``out/test-artifacts/site/``.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from ._ci import IN_CI
from ._parts import need
from ._user_env import user_env

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "out" / "test-artifacts" / "site"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [pytest.mark.alone, pytest.mark.xdist_group("site")]  # one build, shared below

# Figures each page must show at least (drawn at build: snippets, notebooks, gallery).
MIN_FIGURES = {
    "index.html": 1,
    "gallery/index.html": 10,
    "explanation/fork-join/index.html": 2,
    "tutorial/plots/index.html": 3,
    "how-to/bounds-vs-measured/index.html": 2,
    "how-to/what-if/index.html": 1,
    # every notebook of the repository is a page with its figures
    **{f"notebooks/{nb.stem}/index.html": 1 for nb in (ROOT / "notebooks").glob("*.ipynb")},
}
SCREENSHOTS = {"home": "", "tutorial": "tutorial/first-model/", "gallery": "gallery/"}


def _need(what: str, reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{what} is missing under CI: {reason}")
    pytest.skip(f"{what} not available: {reason}")


def _build_env() -> dict[str, str]:
    """A user's environment: the installed package, and notebooks drawing inline."""
    env = user_env(NO_MKDOCS_2_WARNING="1")
    env.pop("MPLBACKEND", None)  # the suite's Agg default would keep notebook figures out
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        _need("mkdocs", "install the 'docs' extra")
    out = tmp_path_factory.mktemp("site")
    # No --quiet: it raises the log level above WARNING, and strict mode would not see them.
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=2400,  # a hung notebook kernel, not a speed check: every notebook runs in it
        env=_build_env(),
    )
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("WARNING")]
    assert proc.returncode == 0 and not warnings, "\n".join(warnings) or proc.stderr[-6000:]
    return out


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


def test_build_is_strict_and_complete(site):
    assert (site / "index.html").exists()
    assert (site / "reference" / "api" / "index.html").exists()
    for page, least in MIN_FIGURES.items():
        html = (site / page).read_text(encoding="utf-8")
        n = len(re.findall(r"<img[^>]+src=\"data:image/png;base64,", html))
        assert n >= least, f"{page}: {n} figures drawn at build, expected at least {least}"
    # notebooks render with their outputs, and the repository copies stay output-free
    assert "Traceback" not in (site / "notebooks" / "tutorial" / "index.html").read_text()


def _pages(site: Path) -> list[str]:
    """URL paths of every page: "" for the home page, "gallery/", ..."""
    rels = (p.relative_to(site).parent.as_posix() for p in site.rglob("index.html"))
    return sorted("" if r == "." else r + "/" for r in rels)


def _failed(request, errors: list[str]) -> None:
    """A request that failed, except one the browser aborted itself on navigating away."""
    why = request.failure or ""
    if "ERR_ABORTED" not in why:
        errors.append(f"request failed ({why}): {request.url}")


def test_pages_in_a_real_browser(site, server):
    if not Path(CHROMIUM).exists():
        need("chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    links: set[str] = set()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: _failed(r, errors))
        pages = _pages(site)
        assert len(pages) >= 25, pages
        for rel in pages:
            url = urljoin(server, rel)
            errors.clear()
            resp = page.goto(url, wait_until="load")
            if resp is None or resp.status != 200:
                problems.append(f"{rel}: HTTP {resp and resp.status}")
                continue
            broken = page.eval_on_selector_all(
                "img",
                "imgs => imgs.filter(i => !i.complete || i.naturalWidth === 0)"
                ".map(i => i.currentSrc.slice(0, 80))",
            )
            if broken:
                problems.append(f"{rel}: broken images {broken}")
            if errors:
                problems.append(f"{rel}: console errors {errors[:3]}")
            for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)"):
                target = urldefrag(href).url
                if urlparse(target).netloc == urlparse(server).netloc:
                    links.add(target)
        for name, rel in SCREENSHOTS.items():
            page.goto(urljoin(server, rel), wait_until="load")
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        browser.close()
    for target in sorted(links):
        try:
            with urllib.request.urlopen(target, timeout=10) as r:
                ok = r.status == 200
        except urllib.error.HTTPError:
            ok = False
        if not ok:
            problems.append(f"dead internal link: {target}")
    assert not problems, "\n".join(problems)
    for name in SCREENSHOTS:
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 20_000
