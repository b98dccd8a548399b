"""The HTML report (claims/reports/html.py) of a published run: well-formed, every image and link
resolves, every figure links to its full-size PNG, every table sits in its scroll wrapper, the
provenance, the findings grouped by kind of statement and one section per claim are on the
page, and a real browser loads it (headless Chromium through chromedriver's W3C WebDriver
protocol, spoken with the standard library) at a phone's width (420 px) and a desktop's
(1280 px): the page never scrolls sideways, every image has a non-zero natural size, every
table scrolls inside its wrapper, the console shows no error, and a screenshot of the first
screen at each width lands beside the report (``screen-420.png``, ``screen-1280.png``).  The
control: the same page without the wrappers scrolls sideways at 420 px.

The browser test needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs
them); outside CI without them it skips with one line, in CI it fails.
"""
from __future__ import annotations

import base64
import html
import io
import json
import re
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

from collections import Counter
from dataclasses import replace

from claims.harness.reportfile import load_report
from claims.harness.spec import KINDS
from claims.reports.findings import OUTCOMES, anchor, findings
from claims.reports.report import _md, provenance, render_report
from claims.reports.summary import undecided
from claims.specs import CLAIMS

ROOT = Path(__file__).resolve().parents[1]
VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "source", "wbr"}


class _Checker(HTMLParser):
    """Nesting of open and close tags, ids, image sources and link targets; for each image
    the link around it (``img_links``: (src, href of the enclosing <a> or None)), for each
    table the classes of its parent element (``table_parents``)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.srcs, self.hrefs = [], [], set(), [], []
        self.img_links, self.table_parents, self.attrs = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append(f"duplicate id {a['id']}")
            self.ids.add(a["id"])
        if tag == "img":
            self.srcs.append(a.get("src"))
            link = next((x.get("href") for (t, _), x in zip(reversed(self.stack), reversed(self.attrs)) if t == "a"), None)
            self.img_links.append((a.get("src"), link))
        if tag == "table":
            parent = (self.stack[-1][0], self.attrs[-1].get("class", "")) if self.stack else (None, "")
            self.table_parents.append(parent)
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))
            self.attrs.append(a)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        self.attrs.pop()


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
    for h in c.hrefs:                       # an anchor on the page, or a figure's full-size PNG
        assert (h.startswith("#") and h[1:] in c.ids) or (h in c.srcs and (out / h).is_file()), h
    assert len(set(c.srcs)) == len(list((out / "figures").glob("*.png")))     # every figure is placed
    # every image is a link to its own file (full size), and the page says so
    assert c.img_links and all(src == href for src, href in c.img_links), [i for i in c.img_links if i[0] != i[1]]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "click a figure for its full size" in page.lower()
    # every table sits in its scroll wrapper; the viewport follows the device
    assert len(c.table_parents) > 10 and set(c.table_parents) == {("div", "scroll")}, set(c.table_parents)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


def test_page_groups_by_claim_with_provenance_findings_and_advice(report):
    payload, out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    c = _parse(out / "index.html")
    claims = {r.claim for r in payload.records}
    assert {anchor(x) for x in claims} <= c.ids
    assert payload.provenance["command"] in page and "git commit" in page
    assert (payload.provenance.get("training_sources") or "git commit") in page
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


def test_a_fresh_render_heads_the_page_marks_a_missing_tolerance_source_and_writes_the_markdown(
        tmp_path, monkeypatch):
    # rendered here, not by the module's fixture: mutmut runs for a mutant only the tests that
    # called its function, and a module fixture's call is counted for the first test alone;
    # without the figures, which the module's fixture and tests/test_figures.py draw
    monkeypatch.setattr("claims.reports.report.render_figures", lambda records, directory: [])
    payload, out = _render(tmp_path)
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<title>Claims report</title>" in page and "<h2>Findings</h2>" in page
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
    """The checker itself: an unclosed and a misnested tag, a duplicate id, an image without
    its link or linking elsewhere, a table outside its wrapper."""
    c = _Checker()
    c.feed('<div id="x"><p>a</div><span id="x">')
    assert any("closes" in e for e in c.errors) and any("duplicate" in e for e in c.errors)
    c = _Checker()
    c.feed('<img src="f.png"><a href="g.png"><img src="f.png"></a><a href="f.png"><b><img src="f.png"></b></a>'
           '<div class="scroll"><table></table></div><p><table></table></p>')
    assert c.img_links == [("f.png", None), ("f.png", "g.png"), ("f.png", "f.png")]
    assert c.table_parents == [("div", "scroll"), ("p", "")]


def test_the_findings_group_the_statements_by_kind(report):
    """One table per kind of statement, in KINDS order, each under its heading with its count
    line, holding that kind's statements and no other."""
    payload, out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    part = page[page.index("<h2>Findings</h2>"):page.index("<h2>Provenance</h2>")]
    found = findings(payload)
    starts = [part.index(f'<h3 id="{k}">{html.escape(heading)}</h3>') for k, heading in KINDS.items()]
    assert starts == sorted(starts) and len(KINDS) == 3
    assert {f.kind for f in found} <= set(KINDS) and len({f.kind for f in found}) > 1
    for (kind, _), lo, hi in zip(KINDS.items(), starts, starts[1:] + [len(part)]):
        block = part[lo:hi]
        mine = [f for f in found if f.kind == kind]
        n = Counter(f.outcome for f in mine)
        count = ", ".join(f"{n[o]} {o}" for o in OUTCOMES if n[o]) or "none"
        assert f'<p class="count">{len(mine)} statement{"" if len(mine) == 1 else "s"}: {count}.</p>' in block
        rows = block.count("<tr class=")
        assert rows == len(mine), kind
        for f in found:
            assert (html.escape(f.headline.statement) in block) == (f.kind == kind), (kind, f.headline.statement)


def test_provenance_outside_a_checkout(tmp_path):
    p = provenance("quick", {"retrain": True}, argv=["x"], root=tmp_path)
    p.pop("training_sources", None)         # the training code's digest: not the checkout's
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
    p.pop("training_sources", None)
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


#: what the page must do at each width, read in the browser: no sideways scroll of the page,
#: every image loaded, every table inside a ``scroll`` wrapper that is what scrolls
_LAYOUT_JS = """
const tables = Array.from(document.querySelectorAll('table')).map(t => {
  const w = t.parentElement, wide = t.offsetWidth > w.clientWidth;
  let scrolls = false;
  if (wide) { w.scrollLeft = 40; scrolls = w.scrollLeft > 0; w.scrollLeft = 0; }
  return [w.tagName + '.' + w.className, getComputedStyle(w).overflowX, wide, scrolls];
});
return {inner: window.innerWidth, scroll: document.documentElement.scrollWidth, dpr: window.devicePixelRatio,
        images: Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth,
                                                       i.naturalHeight]),
        tables: tables};
"""
#: a phone's width and a desktop's
WIDTHS = (420, 1280)


def _unwrapped(page: str) -> str:
    """The page without its tables' scroll wrappers (the negative control of the layout check)."""
    bare = re.sub(r'<div class="scroll">(<table[^>]*>)', r"\1", page).replace("</table></div>", "</table>")
    assert bare != page and 'class="scroll"' not in bare
    return bare


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, decoded in full (Pillow, a dependency of matplotlib)."""
    from PIL import Image
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "PNG"
        im.load()
        return im.size


def test_a_real_browser_loads_the_page(report):
    """At a phone's and a desktop's width: the page does not scroll sideways, every image
    loads, every table scrolls inside its wrapper, no console error, a screenshot of the
    first screen lands beside the report; without the wrappers the page overflows at the
    phone's width (the control)."""
    payload, out = report
    (out / "unwrapped.html").write_text(_unwrapped((out / "index.html").read_text(encoding="utf-8")),
                                        encoding="utf-8")
    chrome, driver = _browser()
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    seen, shots = {}, {}
    try:
        for _ in range(100):
            try:
                if _call(base + "/status", timeout=2).get("ready"):
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {"binary": chrome, "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                                              "--force-device-scale-factor=1",
                                                              "--window-size=1280,900"]}}}}
        sid = _call(base + "/session", "POST", caps)["sessionId"]
        s = f"{base}/session/{sid}"
        try:
            _call(s + "/url", "POST", {"url": (out / "index.html").resolve().as_uri()})
            title = _call(s + "/title")
            for width in WIDTHS:
                _call(s + "/window/rect", "POST", {"width": width, "height": 900})
                seen[width] = _call(s + "/execute/sync", "POST", {"script": _LAYOUT_JS, "args": []})
                shots[width] = base64.b64decode(_call(s + "/screenshot"))
            logs = _call(s + "/se/log", "POST", {"type": "browser"})
            _call(s + "/url", "POST", {"url": (out / "unwrapped.html").resolve().as_uri()})
            _call(s + "/window/rect", "POST", {"width": WIDTHS[0], "height": 900})
            bare = _call(s + "/execute/sync", "POST", {"script": _LAYOUT_JS, "args": []})
        finally:
            _call(s, "DELETE")
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert title == "Claims report"
    errors = [e for e in logs if e.get("level") == "SEVERE"]
    assert not errors, errors
    for width, got in seen.items():
        assert width - 20 <= got["inner"] <= width, (width, got["inner"])     # the window took the width
        assert got["scroll"] <= got["inner"], (width, got["scroll"], got["inner"])      # no sideways page scroll
        images = got["images"]
        assert images and all(ok and w > 0 and h > 0 for _, ok, w, h in images), [i for i in images if not i[2]]
        tables = got["tables"]
        assert len(tables) > 10 and {(w, o) for w, o, _, _ in tables} == {("DIV.scroll", "auto")}, (width, tables)
        assert all(scrolls for _, _, wide, scrolls in tables if wide), (width, tables)
        path = out / f"screen-{width}.png"
        path.write_bytes(shots[width])
        assert _png_size(path.read_bytes())[0] == round(got["inner"] * got["dpr"]), width
        assert path.stat().st_size > 10_000
    assert any(wide for _, _, wide, _ in seen[WIDTHS[0]]["tables"])    # the phone's width needs the wrappers
    # control: the same page without the wrappers scrolls sideways at the phone's width
    assert bare["scroll"] > bare["inner"], bare["scroll"]
