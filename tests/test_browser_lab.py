"""The course in JupyterLab, end to end in a real browser.

A student edition with its notebooks (`trous notebooks`, in a temporary folder: the repository is
never touched) is served by a real JupyterLab started with `trous lab` from this venv, on localhost,
a free port and a token; headless Debian Chromium, driven by Playwright, does what a student does.
Screenshots land in tests/_artifacts/browser/ for a person to look at.

Chromium: /usr/bin/chromium (Debian's package; `scripts/install-browser.sh` installs it), or
TROUS_CHROMIUM. The test fails, rather than skips, without it: CI must run it.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import BIN, ROOT, run_trous

pytestmark = pytest.mark.slow

ARTIFACTS = ROOT / "tests" / "_artifacts" / "browser"
CHROMIUM = Path(os.environ.get("TROUS_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
START_TIMEOUT = 120  # seconds for JupyterLab to answer (2 shared cores, nbgrader's extensions load too)
UI_TIMEOUT = 90_000  # ms for a kernel to start and a cell to run


# -- the numbers a student computes by hand (the course's values, written the course's way) -----------
def fr(x: float, decimals: int = 2) -> str:
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text.replace(".", ",")


def softmax(scores: list[float]) -> list[float]:
    e = [math.exp(s) for s in scores]
    return [v / sum(e) for v in e]


# -- fixtures: the edition, the server, the browser ------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("lab") / "cours"
    done = run_trous(ROOT, "notebooks", str(dest))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (dest / "explorateur.ipynb").is_file() and (dest / "exercises" / "01_toux.ipynb").is_file()
    return dest


class Lab:
    def __init__(self, root: Path, port: int, token: str, process: subprocess.Popen, log: Path):
        self.root, self.port, self.token, self.process, self.log = root, port, token, process, log
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        # `reset`: a fresh workspace, without the tabs an earlier test left open
        return f"{self.base}/lab/tree/{path}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (localhost)
            body = response.read()
        return json.loads(body) if body else None


def _isolated_jupyter(home: Path) -> dict:
    """Jupyter's config, data, runtime and settings in a throw-away folder: nothing of the machine's
    user leaks in, nothing leaks out, and nothing is fetched from the network (news, updates)."""
    dirs = {name: home / name for name in ("config", "data", "runtime", "ipython", "settings", "workspaces")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    (dirs["config"] / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"ip": "127.0.0.1", "port_retries": 0, "open_browser": False, "allow_root": True},
        "LabApp": {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                   "extension_manager": "readonly"},
    }), encoding="utf-8")
    notification = dirs["settings"] / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    # A fresh JupyterLab may open a notebook before its kernel list arrives, and then asks which
    # kernel to start; this setting starts the notebook's own kernel (python3) instead.
    tracker = dirs["settings"] / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"autoStartDefaultKernel": True}),
                                                         encoding="utf-8")
    return {"JUPYTER_CONFIG_DIR": str(dirs["config"]), "JUPYTER_DATA_DIR": str(dirs["data"]),
            "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]), "IPYTHONDIR": str(dirs["ipython"]),
            "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]), "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"])}


@pytest.fixture(scope="module")
def lab(edition, tmp_path_factory):
    home = tmp_path_factory.mktemp("jupyter")
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, **_isolated_jupyter(home), "JUPYTER_TOKEN": token, "PYTHONDONTWRITEBYTECODE": "1"}
    log = home / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(BIN / "trous"), "-C", str(edition), "lab", "--no-browser", "--port", str(port)],
                                   cwd=edition, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = Lab(edition, port, token, process, log)
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab s'est arrêté (code {process.returncode}) :\n{log.read_text()[-3000:]}")
        try:
            server.api("status")
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"JupyterLab ne répond pas après {START_TIMEOUT} s :\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
    yield server
    try:
        for kernel in server.api("kernels"):
            server.api(f"kernels/{kernel['id']}", method="DELETE")
    except OSError:
        pass
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), f"{CHROMIUM} absent : lance scripts/install-browser.sh (apt-get install chromium)"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, lab, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT)
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT)
    # Only localhost: a request to anywhere else would be a leak (and a flaky test).
    outside = []
    page.on("request", lambda r: None if re.match(r"^(https?|wss?)://(127\.0\.0\.1|localhost)[:/]", r.url)
            or r.url.startswith(("data:", "blob:", "about:")) else outside.append(r.url))
    yield page
    page.screenshot(path=str(ARTIFACTS / f"fin_{request.node.name}.png"))  # the last state, pass or fail
    context.close()
    assert not outside, f"requêtes hors de localhost : {outside}"


def shot(page, name: str, locator=None) -> Path:
    path = ARTIFACTS / f"{name}.png"
    (locator or page).screenshot(path=str(path))
    return path


def open_notebook(page, lab: Lab, path: str) -> None:
    """Open a notebook and wait until its kernel is there: JupyterLab drops a run asked before."""
    from playwright.sync_api import expect

    page.goto(lab.url(path))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    deadline = time.monotonic() + UI_TIMEOUT / 1000
    while not any(s["path"].endswith(path) and s["kernel"]["execution_state"] == "idle" for s in lab.api("sessions")):
        assert time.monotonic() < deadline, f"pas de noyau prêt pour {path} : {lab.api('sessions')}"
        time.sleep(0.3)
    expect(page.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "idle")


def run_all(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.locator(".lm-Menu-itemLabel").get_by_text("Run All Cells", exact=True).click()


# -- the explorer ----------------------------------------------------------------------------------
def row(page, label: str):
    return page.locator(".tx-table tbody tr", has=page.locator("td.tx-label", has_text=re.compile(f"^{re.escape(label)}$")))


def cells(locator) -> list[str]:
    return [t.strip() for t in locator.all_inner_texts()]


def expect_text(locator, text: str) -> None:
    from playwright.sync_api import expect

    expect(locator).to_have_text(text)


def test_explorer_in_jupyterlab(page, lab):
    from playwright.sync_api import expect

    open_notebook(page, lab, "explorateur.ipynb")
    run_all(page)
    explorer = page.locator(".trous-explorer")
    explorer.locator(".tx-table").wait_for()
    page.set_viewport_size({"width": 1400, "height": 2600})  # the whole widget in the screenshots

    # « fièvre sans toux » as in the course: « toux » reads [1, 1, 2] → [0,21 ; 0,21 ; 0,58] → [0,79 ; 0,79]
    toux = row(page, "toux")
    expect_text(toux.locator(".tx-scores"), "1 ; 1 ; 2")
    expect_text(toux.locator(".tx-weights"), "0,21 ; 0,21 ; 0,58")
    expect_text(toux.locator(".tx-new"), "[0,79 ; 0,79]")
    expect(explorer.locator(".tx-steps.tx-empty")).to_be_visible()
    heat = explorer.locator(".tx-heatmap tr[data-heat-row='2'] td")
    assert cells(heat) == ["0,21", "0,21", "0,58"]
    shot(page, "01_explorateur_execute")

    # Click the « toux » row: its computation, step by step, with the numbers
    toux.click()
    steps = explorer.locator(".tx-steps[data-steps-for='2']")
    expect(steps).to_contain_text("Le calcul de « toux », pas à pas")
    text = steps.inner_text()
    e1, e2 = math.exp(1), math.exp(2)
    for expected in ("1 × 1 + 1 × 0 = 1", "1 × 0 + 1 × 1 = 1", "1 × 1 + 1 × 1 = 2",
                     f"exp(1) = {fr(e1)}", f"exp(2) = {fr(e2)}",
                     f"somme = {fr(e1)} + {fr(e1)} + {fr(e2)} = {fr(2 * e1 + e2)}",
                     f"{fr(e2)} / {fr(2 * e1 + e2)} = 0,58",
                     "0,21 × [1 ; 0] + 0,21 × [0 ; 1] + 0,58 × [1 ; 1] = [0,79 ; 0,79]"):
        assert expected in text, f"« {expected} » absent du calcul affiché :\n{text}"
    expect(toux).to_have_class(re.compile("tx-selected"))
    shot(page, "02_explorateur_toux", explorer)

    # The padding mask: the last token becomes <rempl> ([0 ; 0]) and gets weight exactly 0; the scores
    # column shows what the softmax receives, −∞ for the <rempl>
    page.get_by_label("Masque de remplissage").check()
    expect(row(page, "<rempl>")).to_have_count(1)
    for label in ("fièvre", "sans", "<rempl>"):
        expect(row(page, label).locator(".tx-weights")).to_have_text(re.compile(r" ; 0$"))
    assert cells(explorer.locator(".tx-heatmap tbody tr td:nth-of-type(3)")) == ["0", "0", "0"]
    expect(explorer.locator(".tx-steps")).to_contain_text("exp(−∞) = 0")
    row(page, "fièvre").click()  # the course's example: scores 1, 0, 0 and mask 1, 1, 0 → [0,73 ; 0,27 ; 0]
    expect(explorer.locator(".tx-steps[data-steps-for='0']")).to_contain_text("« <rempl> » : −∞")
    expect_text(row(page, "fièvre").locator(".tx-weights"), "0,73 ; 0,27 ; 0")
    expect_text(row(page, "fièvre").locator(".tx-scores"), "1 ; 0 ; −∞")
    expect(explorer.locator(".tx-scores-heading")).to_contain_text("−∞ pour les <rempl>")
    shot(page, "03_explorateur_masque", explorer)

    # Turned off, the mask gives back the token it made <rempl>
    page.get_by_label("Masque de remplissage").uncheck()
    expect(row(page, "toux")).to_have_count(1)
    expect(row(page, "<rempl>")).to_have_count(0)
    expect(page.get_by_label("toux composante 1")).to_be_enabled()
    expect(page.get_by_label("nom du token 3")).to_have_value("toux")
    expect_text(row(page, "fièvre").locator(".tx-scores"), "1 ; 0 ; 1")

    # A <rempl> without the mask keeps a big weight: exp(0) = 1
    page.get_by_label("toux devient <rempl>").check()
    unmasked = softmax([1, 0, 0])
    expect_text(row(page, "fièvre").locator(".tx-weights"), " ; ".join(fr(w) for w in unmasked))
    expect(page.get_by_label("toux composante 1")).to_be_disabled()  # a <rempl> is [0 ; 0], not editable
    page.get_by_label("toux devient <rempl>").uncheck()
    expect(row(page, "toux")).to_have_count(1)
    expect(page.get_by_label("toux composante 1")).to_be_enabled()

    # Place vectors [1 ; 0], [0 ; 0], [0 ; 1]: « toux » becomes [1 ; 2] and reads [1 ; 1,86]
    page.get_by_label("Vecteurs de place").check()
    toux = row(page, "toux")
    expect_text(toux.locator(".tx-new"), "[1 ; 1,86]")
    toux.click()
    expect(explorer.locator(".tx-steps[data-steps-for='2']")).to_contain_text("[1 ; 1] + place [0 ; 1] = [1 ; 2]")
    shot(page, "04_explorateur_places", explorer)

    # Division by √d (d = 2) before the softmax: the scores column shows the scores divided
    page.get_by_label("Division par √d").check()
    expect(explorer.locator(".tx-steps")).to_contain_text(f"Division par √d = √2 ≈ {fr(math.sqrt(2))}")
    scaled = softmax([s / math.sqrt(2) for s in (2, 2, 5)])
    expect_text(toux.locator(".tx-weights"), " ; ".join(fr(w) for w in scaled))
    expect_text(toux.locator(".tx-scores"), " ; ".join(fr(s / math.sqrt(2)) for s in (2, 2, 5)))
    expect(explorer.locator(".tx-scores-heading")).to_contain_text("scores ÷ √2")
    page.get_by_label("Division par √d").uncheck()
    page.get_by_label("Vecteurs de place").uncheck()

    # Editing a vector: « fièvre » = [2 ; 0] changes what « toux » reads
    component = page.get_by_label("fièvre composante 1")
    component.fill("2")
    component.press("Tab")
    edited = softmax([2, 1, 2])
    expect_text(row(page, "toux").locator(".tx-weights"), " ; ".join(fr(w) for w in edited))
    expect_text(row(page, "toux").locator(".tx-scores"), "2 ; 1 ; 2")

    # The RNN panel: at w = 0,5, 1/256 of « Pas » is left after 8 steps; its attention weight is 0,13
    rnn = explorer.locator(".tx-rnn")
    expect(rnn.locator(".tx-share")).to_have_text(fr(0.5 ** 8, 4))
    expect(rnn).to_contain_text("(1/256)")
    expect(rnn.locator(".tx-weight")).to_have_text("0,13")
    assert set(cells(rnn.locator(".tx-distances .tx-bar-att .tx-barvalue"))) == {"0,13"}
    slider = rnn.locator("input.tx-w")
    slider.focus()
    for _ in range(8):
        slider.press("ArrowRight")
    expect(rnn.locator(".tx-w-value")).to_have_text("0,9")
    expect(rnn.locator(".tx-share")).to_have_text(fr(0.9 ** 8, 3))
    expect(rnn.locator(".tx-weight")).to_have_text("0,13")
    shot(page, "05_explorateur_rnn_w09", explorer)
    slider.press("Home")
    expect(rnn.locator(".tx-w-value")).to_have_text("0")
    expect(rnn.locator(".tx-share")).to_have_text("0")
    expect(rnn.locator(".tx-weight")).to_have_text("0,13")

    # The caption names the student's exercises/02_places.py, and it is that file the explorer reads:
    # softmax with powers of 2 there, and « toux » reads [1, 1, 2] → 2, 2, 4 over 8
    source = explorer.locator(".tx-source")
    expect(source).to_contain_text("exercises/02_places.py")
    own = lab.root / "exercises" / "02_places.py"
    text = own.read_text(encoding="utf-8")
    try:
        own.write_text(text.replace("e = [math.exp(v) for v in s]", "e = [2 ** v for v in s]"), encoding="utf-8")
        component.fill("1")  # any control: the explorer computes again, with the file as it is now
        component.press("Tab")
        expect_text(row(page, "toux").locator(".tx-weights"), "0,25 ; 0,25 ; 0,5")
        expect(source).not_to_contain_text("modèle")
        own.write_text(text.replace("def softmax(s):", "def softmax(s:"), encoding="utf-8")
        page.get_by_label("Vecteurs de place").check()
        page.get_by_label("Vecteurs de place").uncheck()
        expect(source).to_contain_text("celles du modèle de l'exercice 2")  # and says why it does
        expect_text(row(page, "toux").locator(".tx-weights"), "0,21 ; 0,21 ; 0,58")
        shot(page, "05b_explorateur_fichier_casse", explorer)
    finally:
        own.write_text(text, encoding="utf-8")


# -- an exercise notebook --------------------------------------------------------------------------
def test_run_all_on_a_fresh_exercise_notebook_ends_in_the_french_verdict(page, lab):
    """A student opens a notebook nobody touched and clicks « Run All »: each cell that stops on a blank
    says so in French, on its line, and the run goes on to the check cell: the verdict of `pytest
    exercises/`, every blank to fill. No English NameError, no traceback."""
    from playwright.sync_api import expect

    open_notebook(page, lab, "exercises/06_moyenne.ipynb")
    run_all(page)
    check = page.locator(".jp-Notebook .jp-Cell").last
    report = check.locator(".trous-check")
    expect(report).to_contain_text("06_moyenne — La méthode la plus simple : la moyenne : 0/3 trous justes")
    for blank in ("triangle", "poids", "sortie"):
        expect(report.locator(f"li[data-blank='{blank}']")).to_have_attribute("data-status", "unfilled")
    code = page.locator(".jp-Notebook .jp-Cell").nth(2)
    expect(code.locator(".jp-OutputArea")).to_contain_text("✘ trou pas encore rempli (___) à la ligne 8 de sa cellule")
    shot(page, "06a_tout_executer", page.locator(".jp-Notebook"))
    text = page.locator(".jp-Notebook").inner_text()
    assert "name '___'" not in text and "Traceback" not in text, text[-3000:]



def select_fill(page, cell, line_text: str, fill_length: int) -> None:
    """Put the cursor at the end of the line showing `line_text` and select its last characters."""
    line = cell.locator(".cm-line", has_text=line_text)
    line.click()
    page.keyboard.press("End")
    for _ in range(fill_length):
        page.keyboard.press("Shift+ArrowLeft")


def run_cell(page, cell) -> None:
    """Run one cell and wait until it is done. (A cell sent while the one before is still running
    is dropped by the kernel when that one fails — as for a student clicking too fast.)"""
    from playwright.sync_api import expect

    prompt = cell.locator(".jp-InputPrompt")
    before = prompt.inner_text().strip()
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(prompt).not_to_have_text(before)
    expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"))


NUMBERS_ON_LINES = """root => {
    let wrapped = false;
    const split = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const lines = range => new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top))).size;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const whole = document.createRange();
        whole.selectNodeContents(node);
        if (lines(whole) > 1) wrapped = true;
        for (const m of node.data.matchAll(/\\d+,\\d+/g)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            if (lines(range) > 1) split.push(m[0]);
        }
    }
    return [wrapped, split];
}"""


def numbers_on_lines(locator) -> tuple[bool, list[str]]:
    """(whether any text of `locator` wraps, the decimal numbers the browser cut across two lines)."""
    wrapped, split = locator.evaluate(NUMBERS_ON_LINES)
    return wrapped, split


def test_exercise_notebook_check_cell(page, lab, edition):
    from playwright.sync_api import expect

    open_notebook(page, lab, "exercises/01_toux.ipynb")
    notebook = page.locator(".jp-Notebook .jp-Cell")
    setup, code, check = notebook.nth(1), notebook.nth(2), notebook.nth(4)
    expect(setup).to_contain_text("%load_ext trous.publish.notebooks")
    expect(check).to_contain_text('check("01_toux")')
    run_cell(page, setup)

    # A wrong fill first, typed and run but not saved
    select_fill(page, code, "total = ___", len("___"))
    page.keyboard.type("sum(e) + 1")
    run_cell(page, code)
    run_cell(page, check)
    report = check.locator(".trous-check")
    first = report.locator("li[data-blank='somme_exp']")
    expect(first).to_have_attribute("data-status", "failed")
    expect(first).to_contain_text("faux")
    expect(first).to_contain_text("softmax([1, 1, 2]) : attendu [0,21 ; 0,21 ; 0,58]")
    expect(first).to_contain_text("ligne 9 de la cellule 3")
    for blank in ("scores", "nouveau"):
        item = report.locator(f"li[data-blank='{blank}']")
        expect(item).to_have_attribute("data-status", "unfilled")
        expect(item).to_contain_text("pas encore rempli")
        expect(item.locator(".trous-hint")).to_contain_text("indice :")
    shot(page, "06_exercice_faux", check)
    # Narrower and narrower, the long lines wrap: between words, never inside « 0,21 » (JupyterLab's
    # output area breaks anywhere). Many widths, so that a break falls on every place of a line.
    wrapped_once, split = False, {}
    for width in range(560, 1000, 6):
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(50)
        wrapped, cut = numbers_on_lines(report)
        wrapped_once |= wrapped
        if cut:
            split[width] = cut
    assert wrapped_once, "aucune ligne du rapport ne passe à la ligne : le test ne vérifie rien"
    assert split == {}, f"nombres coupés entre deux lignes, par largeur de fenêtre : {split}"
    page.set_viewport_size({"width": 1400, "height": 1000})

    # The right fill: the check says so, still without saving
    select_fill(page, code, "total = sum(e) + 1", len("sum(e) + 1"))
    page.keyboard.type("sum(e)")
    run_cell(page, code)
    run_cell(page, check)
    expect(first).to_have_attribute("data-status", "passed")
    expect(first).to_contain_text("juste")
    expect(report).to_contain_text("Enregistre le notebook (Ctrl+S)")
    saved = json.loads((edition / "exercises" / "01_toux.ipynb").read_text(encoding="utf-8"))
    assert any("total = ___" in "".join(c["source"]) for c in saved["cells"]), "le notebook a été enregistré"
    shot(page, "07_exercice_juste", check)

    # Saving writes the paired .py, and the terminal's check agrees with the notebook's
    page.keyboard.press("Control+s")
    py = edition / "exercises" / "01_toux.py"
    deadline = time.monotonic() + 30
    while "total = sum(e)\n" not in py.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, "Ctrl+S n'a pas écrit exercises/01_toux.py"
        time.sleep(0.3)
    done = run_trous(edition, "check", "01_toux")
    assert "« somme_exp » : juste" in done.stdout, done.stdout
    assert done.stdout.count("pas encore rempli") == 2, done.stdout
