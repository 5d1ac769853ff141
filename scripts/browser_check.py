"""Lesson 00 run and a lesson's plots shown in JupyterLab in a real (headless) browser: `make browser-check`.

    python scripts/browser_check.py [--notebook notebooks/00_setup_and_survey.ipynb]
        [--plot-notebook notebooks/09_what_moved_the_needle.ipynb] [--run-plot-notebook] [--timeout 600]

Starts `jupyter lab` headless on a free localhost port with a random token, opens a COPY of the
notebook (under the git-ignored artifacts/browser-check/, so the lesson's committed outputs are
never touched) in Debian's `chromium` driven by Playwright, runs all cells, saves the copy and a
full-page screenshot there, and fails when:

- any cell ends in an error (read back from the saved copy);
- a progress widget does not render: a probe notebook with one tqdm.auto loop must show an
  ipywidgets progress bar, and so must every lesson cell tagged `progress-widget`;
- a plot does not render: a second lesson with matplotlib figures (lesson 09's forest plot by
  default) is opened as a teacher presents it, from a copy WITH its committed outputs
  (`--run-plot-notebook` runs a fresh copy instead), and every `image/png` output it holds must
  appear in the page as an <img> with a non-zero natural width and height. Its screenshot shows
  the first plot.

Needs `chromium` on PATH (Debian: apt-get install -y chromium; .ci/run installs it) and the
`playwright` package; Playwright's own browser download is never used.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "artifacts" / "browser-check"
PROGRESS_TAG = "progress-widget"
WIDGET = ".jp-OutputArea-output .widget-hprogress, .jp-OutputArea-output .widget-progress"
# JupyterLab settings for the check only: render every cell (JupyterLab 4 leaves off-screen cells
# out of the page by default, so their outputs could not be checked) and no news pop-up.
SETTINGS = {"@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"}}
PROBE = "from tqdm.auto import tqdm\n\nfor _ in tqdm(range(3), desc='widget probe'):\n    pass"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_lab(port: int, token: str, log: Path) -> subprocess.Popen:
    """jupyter lab on localhost only, app exposed to the page so commands can be run by name."""
    settings = OUT / "lab-settings"
    for name, values in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COURSE_OFFLINE_LLM": "1",
           "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
               "--LabApp.expose_app_in_browser=True", "--ServerApp.allow_root=True",
               # A fresh workspace: a layout restored from an earlier check would reopen stale tabs.
               f"--LabApp.workspaces_dir={tempfile.mkdtemp(prefix='lab-workspaces-')}"]
    return subprocess.Popen(command, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def wait_for(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer at {url} within {timeout:.0f} s")


# Busy while the notebook's kernel is missing or any code cell is queued or running; read from the
# cell models, not the page, and not from the kernel status alone (it is idle between two cells).
BUSY = """(path) => {
  const app = window.jupyterapp;
  if (!app) return true;
  const panel = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  const session = panel && panel.sessionContext.session;
  if (!session || !session.kernel || session.kernel.status !== 'idle') return true;
  return panel.content.widgets.some(c => c.model.type === 'code' && c.model.executionState === 'running');
}"""


def run_notebook(page, base: str, rel: str, token: str, timeout: float) -> float:
    """Open a notebook in the browser, run every cell, wait for the kernel, save; return seconds."""
    page.goto(f"{base}/lab/tree/{rel}?token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    idle = f"() => !({BUSY})({json.dumps(rel)})"
    page.wait_for_function(idle, timeout=120_000)  # kernel started and idle
    start = time.monotonic()
    page.evaluate("""(path) => {
      const app = window.jupyterapp;
      const panel = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
      app.shell.activateById(panel.id);
      return app.commands.execute('notebook:run-all-cells');
    }""", rel)
    page.wait_for_timeout(1000)
    page.wait_for_function(idle, timeout=timeout * 1000, polling=500)
    seconds = time.monotonic() - start
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_timeout(1500)
    return seconds


def errors_in(path: Path, *, ran: bool = True) -> list[str]:
    """Every error output in a saved notebook, and (when this check ran it) every code cell the
    run never reached; a notebook shown as committed is only searched for errors (nbval checks
    that its cells were executed)."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    errors = [f"code cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, cell in enumerate(cells)
              for o in cell.get("outputs", []) if o.output_type == "error"]
    return errors + [f"code cell {i}: not executed" for i, cell in enumerate(cells)
                     if ran and cell.execution_count is None and cell.source.strip()]


def fresh_copy(source: Path, target: Path) -> None:
    """The notebook without outputs or counts, so whatever is there afterwards came from this run."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    nbformat.write(nb, target)


def widget_problems(page, path: Path) -> list[str]:
    """Cells that should show a progress widget and do not, by index among this notebook's code cells.

    Cells are looked up inside this notebook's own panel: another notebook still open in a hidden
    tab would otherwise shift every index.
    """
    nb = nbformat.read(path, as_version=4)
    wanted = [i for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code")
              if PROGRESS_TAG in cell.metadata.get("tags", [])]
    rel = path.relative_to(ROOT).as_posix()
    panel_id = page.evaluate("""(path) => [...window.jupyterapp.shell.widgets('main')]
      .find(w => w.context && w.context.path === path).id""", rel)
    cells = page.query_selector_all(f"[id='{panel_id}'] .jp-Notebook .jp-CodeCell")
    return [f"code cell {i}: no progress widget rendered" for i in wanted
            if i >= len(cells) or cells[i].query_selector(WIDGET) is None]


def png_outputs(path: Path) -> int:
    """How many matplotlib images (`image/png` outputs) a saved notebook holds."""
    return sum("image/png" in output.get("data", {}) for cell in nbformat.read(path, as_version=4).cells
               if cell.cell_type == "code" for output in cell.get("outputs", []))


# Every image in the notebook's output areas, once each has loaded (or failed to), with its natural size.
IMAGES = """(panelId) => [...document.querySelectorAll(`[id='${panelId}'] .jp-OutputArea-output img`)]
  .map(img => ({loaded: img.complete, width: img.naturalWidth, height: img.naturalHeight}))"""


def plot_problems(page, path: Path, *, timeout_s: float = 60) -> list[str]:
    """Plots that did not render: fewer loaded <img> with a natural size than `image/png` outputs.

    Reads the notebook's own panel, after its images have loaded; scrolls the first plot into view
    so the screenshot shows it.
    """
    expected = png_outputs(path)
    if expected == 0:
        return ["no image/png output to check: pick a lesson with a plot (--plot-notebook)"]
    rel = path.relative_to(ROOT).as_posix()
    panel_id = page.evaluate("""(path) => [...window.jupyterapp.shell.widgets('main')]
      .find(w => w.context && w.context.path === path).id""", rel)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    loaded = f"(id) => ({IMAGES})(id).length >= {expected} && ({IMAGES})(id).every(i => i.loaded)"
    try:
        page.wait_for_function(loaded, arg=panel_id, timeout=timeout_s * 1000, polling=500)
    except PlaywrightTimeout:  # report what is there instead
        pass
    images = page.evaluate(IMAGES, panel_id)
    rendered = [i for i in images if i["loaded"] and i["width"] > 0 and i["height"] > 0]
    first = page.query_selector(f"[id='{panel_id}'] .jp-OutputArea-output img")
    if first is not None:
        first.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
    if len(rendered) < expected:
        return [f"{len(rendered)} of {expected} plots rendered (an <img> with a natural size)"]
    print(f"{path.name}: {len(rendered)} of {expected} plots rendered, e.g. "
          f"{rendered[0]['width']}x{rendered[0]['height']} px")
    return []


def open_notebook(page, base: str, rel: str, token: str) -> None:
    """Open a notebook as it was saved, outputs and all, and wait until its kernel is idle."""
    page.goto(f"{base}/lab/tree/{rel}?token={token}")
    # This notebook's own panel with its cells: a panel of the previous notebook may linger hidden.
    page.wait_for_function("""(path) => { const app = window.jupyterapp;
      const panel = app && [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
      return panel && panel.context.isReady && panel.content.widgets.length > 0; }""",
                           arg=rel, timeout=120_000, polling=500)
    page.wait_for_function(f"() => !({BUSY})({json.dumps(rel)})", timeout=120_000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", type=Path, default=ROOT / "notebooks" / "00_setup_and_survey.ipynb")
    parser.add_argument("--plot-notebook", type=Path,
                        default=ROOT / "notebooks" / "09_what_moved_the_needle.ipynb",
                        help="a lesson whose committed outputs hold matplotlib plots")
    parser.add_argument("--run-plot-notebook", action="store_true",
                        help="run a fresh copy of the plot lesson instead of showing its committed outputs")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for one notebook's run")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("chromium not found: apt-get update && apt-get install -y chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    lesson = OUT / args.notebook.name
    fresh_copy(args.notebook, lesson)
    plots = OUT / args.plot_notebook.name
    if args.run_plot_notebook:
        fresh_copy(args.plot_notebook, plots)
    else:
        shutil.copyfile(args.plot_notebook, plots)  # as committed: what a teacher presents
    probe = OUT / "widget_probe.ipynb"
    probe_cell = nbformat.v4.new_code_cell(PROBE, metadata={"tags": [PROGRESS_TAG]})
    nbformat.write(nbformat.v4.new_notebook(cells=[probe_cell], metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), probe)
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    lab = start_lab(port, token, OUT / "jupyterlab.log")
    problems: list[str] = []
    try:
        wait_for(f"{base}/api/status?token={token}", timeout=120)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                                 args=["--no-sandbox", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for path in (probe, lesson, plots):
                rel = path.relative_to(ROOT).as_posix()
                ran = path != plots or args.run_plot_notebook
                if ran:
                    how = f"ran in {run_notebook(page, base, rel, token, args.timeout):.0f} s"
                else:
                    open_notebook(page, base, rel, token)
                    how = "opened with its committed outputs"
                found = errors_in(path, ran=ran) + widget_problems(page, path)
                if path == plots:
                    found += plot_problems(page, path)
                shot = OUT / f"{path.stem}.png"
                page.screenshot(path=str(shot), full_page=True)
                found = [f"{path.name}: {p}" for p in found]
                problems += found
                print(f"{path.name}: {how}, {'OK' if not found else 'FAILED'}; "
                      f"screenshot {shot.relative_to(ROOT)}")
                page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
            browser.close()
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            lab.kill()
    (OUT / "result.json").write_text(json.dumps({"problems": problems}, indent=2))
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
