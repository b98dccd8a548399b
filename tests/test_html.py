"""The HTML report (claims/reports/html.py) of a published run: well-formed, every image and link
resolves, the provenance, findings and one section per claim are on the page, and a real
browser loads it (headless Chromium through chromedriver's W3C WebDriver protocol, spoken
with the standard library): every image has a non-zero natural size, the console shows no
error, and a screenshot of the first screen lands beside the report.

The browser test needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs
them); outside CI without them it skips with one line, in CI it fails.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dataclasses import replace

from claims.harness.reportfile import load_report
from claims.reports.findings import anchor
from claims.reports.report import _md, provenance, render_report
from claims.reports.summary import undecided
from claims.specs import CLAIMS

ROOT = Path(__file__).resolve().parents[1]
VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "source", "wbr"}


class _Checker(HTMLParser):
    """Nesting of open and close tags, ids, image sources and link targets."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.srcs, self.hrefs = [], [], set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append(f"duplicate id {a['id']}")
            self.ids.add(a["id"])
        if tag == "img":
            self.srcs.append(a.get("src"))
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()


def _render(out: Path):
    """docs/results/quick.json rendered into ``out``, with a provenance as a fresh run records it."""
    rep = load_report(ROOT / "docs" / "results" / "quick.json")
    rep = replace(rep, provenance=provenance(rep.profile_name, rep.run))
    render_report(rep, out)
    return rep, out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return _render(tmp_path_factory.mktemp("report"))


def _parse(path: Path) -> _Checker:
    c = _Checker()
    c.feed(path.read_text(encoding="utf-8"))
    c.close()
    return c


def test_page_is_well_formed_and_everything_it_points_to_exists(report):
    payload, out = report
    c = _parse(out / "index.html")
    assert not c.errors, c.errors[:5]
    assert [t for t, _ in c.stack] == [], c.stack
    assert c.srcs and all((out / s).is_file() for s in c.srcs), [s for s in c.srcs if not (out / s).is_file()]
    for h in c.hrefs:
        assert h.startswith("#") and h[1:] in c.ids, h
    assert len(set(c.srcs)) == len(list((out / "figures").glob("*.png")))     # every figure is placed


def test_page_groups_by_claim_with_provenance_findings_and_advice(report):
    payload, out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    c = _parse(out / "index.html")
    claims = {r.claim for r in payload.records}
    assert {anchor(x) for x in claims} <= c.ids
    assert payload.provenance["command"] in page and "git commit" in page
    assert "Findings" in page and "weakest check" in page
    decided = [r for r in payload.records if r.decide]
    assert decided and all(r.check_id in page for r in decided)
    # the sections follow the registry's order (claims.specs.CLAIMS), as the README does
    order = [s.name for s in CLAIMS if s.name in claims]
    assert order and sorted(page.index(f'<section id="{anchor(x)}">') for x in order) == \
        [page.index(f'<section id="{anchor(x)}">') for x in order]
    # a claim's figures sit in its own section
    sec = page[page.index('<section id="pcg-alignment">'):]
    sec = sec[:sec.index("</section>")]
    assert "figures/cosines-a.png" in sec and "figures/banding-a.png" not in sec


def test_a_fresh_render_heads_the_page_marks_a_missing_tolerance_source_and_writes_the_markdown(tmp_path):
    # rendered here, not by the module's fixture: mutmut runs for a mutant only the tests that
    # called its function, and a module fixture's call is counted for the first test alone
    payload, out = _render(tmp_path)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<title>Claims report</title>" in page and "<h2>Findings</h2>" in page
    import html
    head = page.index("<tr><th>check_id</th>")
    header = page[head:page.index("</tr>", head)].removeprefix("<tr><th>").removesuffix("</th>").split("</th><th>")
    col = header.index("tol. by")                       # the column as the page heads it
    for r in payload.records:
        start = page.index(f"<td>{html.escape(r.check_id)}</td>")
        cells = page[start:page.index("</tr>", start)].removeprefix("<td>").removesuffix("</td>").split("</td><td>")
        assert len(cells) == len(header) and html.unescape(cells[col]) == (r.tolerance_source or "-"), r.check_id
    assert any(r.tolerance_source is None for r in payload.records)
    md = (out / "claims.md").read_text(encoding="utf-8")
    assert f"- profile: `{payload.profile['name']}` -- {payload.profile['description']}" in md
    rows = undecided(payload.records)
    assert rows and all(r.decide and _md(r.decide) in md for r in rows)


def test_broken_pages_are_caught():
    """The checker itself: an unclosed and a misnested tag, a duplicate id."""
    c = _Checker()
    c.feed('<div id="x"><p>a</div><span id="x">')
    assert any("closes" in e for e in c.errors) and any("duplicate" in e for e in c.errors)


def test_provenance_outside_a_checkout(tmp_path):
    p = provenance("quick", {"retrain": True}, argv=["x"], root=tmp_path)
    assert p == {"commit": None, "dirty": None, "command": "pytest claims -n auto --retrain", "argv": "x"}
    here = provenance("quick", None, argv=[])
    assert here["commit"] is None or len(here["commit"]) == 40


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_provenance_in_a_checkout_names_its_commit_and_whether_it_is_dirty(tmp_path):
    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                               "-c", "commit.gpgsign=false", *args],
                              check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("commit", "-qm", "m")
    p = provenance("paper", None, argv=["a", "b"], root=tmp_path)
    assert p == {"commit": git("rev-parse", "HEAD"), "dirty": False,
                 "command": "pytest claims -n auto --profile paper", "argv": "a b"}
    (tmp_path / "f").write_text("y")
    assert provenance(root=tmp_path, argv=[])["dirty"] is True


# --------------------------------------------------------------------------- a real browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url, method="GET", body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())["value"]


def _browser():
    chrome = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if chrome and driver:
        return chrome, driver
    why = "headless Chromium not installed (Debian: apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(why + "; .ci/run installs them")
    pytest.skip(why)


def test_a_real_browser_loads_the_page(report):
    payload, out = report
    chrome, driver = _browser()
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if _call(base + "/status", timeout=2).get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": chrome, "args": ["--headless=new", "--no-sandbox",
                                                              "--disable-gpu", "--window-size=1280,900"]}}}}
        sid = _call(base + "/session", "POST", caps)["sessionId"]
        s = f"{base}/session/{sid}"
        try:
            _call(s + "/url", "POST", {"url": (out / "index.html").resolve().as_uri()})
            images = _call(s + "/execute/sync", "POST", {"script": (
                "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, "
                "i.naturalWidth, i.naturalHeight]);"), "args": []})
            title = _call(s + "/title")
            logs = _call(s + "/se/log", "POST", {"type": "browser"})
            shot = _call(s + "/screenshot")
        finally:
            _call(s, "DELETE")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    (out / "first-screen.png").write_bytes(base64.b64decode(shot))
    assert title == "Claims report"
    assert images and all(ok and w > 0 and h > 0 for _, ok, w, h in images), [i for i in images if not i[2]]
    errors = [e for e in logs if e.get("level") == "SEVERE"]
    assert not errors, errors
    assert (out / "first-screen.png").stat().st_size > 10_000
