"""docs/tutorial.ipynb runs top to bottom (issue 41): nbclient executes it in a kernel on
this interpreter, with docs/ as its working directory, and fails on any cell's error (its
last cell asserts that the open loop misses and TV-LQR brings the pole up). The test also
checks that the 3-D player was shown inline and that the notebook is stored without
outputs."""

import json
import sys
from pathlib import Path

import ipykernel.kernelspec
import nbclient
import nbformat

import marsden

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTEBOOK = DOCS / "tutorial.ipynb"

# Appended to the notebook in memory: what the kernel ran on, and the closed loop's result.
REPORT = """import json, sys
print("REPORT " + json.dumps({"executable": sys.executable, "prefix": sys.prefix,
                             "marsden": marsden.__file__, "closed_error": float(closed_error),
                             "open_error": float(open_error)}))"""


def read():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    return nb


def tagged(nb, tag):
    cells = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{NOTEBOOK.name}: {len(cells)} cells tagged {tag!r}, expected 1"
    return cells[0]


def test_the_notebook_is_stored_without_outputs():
    for i, cell in enumerate(read().cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, \
                f"{NOTEBOOK.name}: cell {i} holds outputs; clear them before committing"


def test_the_tutorial_runs_and_shows_the_player_inline(tmp_path, monkeypatch):
    # A kernelspec of our own, first on JUPYTER_PATH, so that a user's "python3" kernel
    # cannot stand in for this interpreter; its temporary files (the run folder) go to
    # tmp_path. The kernel inherits the environment, PYTHONPATH included.
    ipykernel.kernelspec.write_kernel_spec(tmp_path / "jupyter" / "kernels" / "python3")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    nb = read()
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(DOCS)}})
    client.execute()  # CellExecutionError, naming the cell and its traceback, on any error

    viewer = tagged(nb, "inline-viewer")
    shown = [o["data"]["text/html"] for o in viewer.outputs
             if o.output_type in ("execute_result", "display_data") and "text/html" in o.get("data", {})]
    assert shown, "the viewer cell showed no HTML"
    assert "<iframe" in shown[0] and "srcdoc=" in shown[0] and len(shown[0]) > 100_000
    assert list(tmp_path.glob("marsden-tutorial-*/helicopter_turn/view.html"))

    assert tagged(nb, "checks").outputs[-1].get("text", "").strip() == "all good"
    lines = [line for o in nb.cells[-1].outputs if o.output_type == "stream"
             for line in o.text.splitlines() if line.startswith("REPORT ")]
    report = json.loads(lines[0][len("REPORT "):])
    assert report["executable"] == sys.executable and report["prefix"] == sys.prefix
    assert Path(report["marsden"]) == Path(marsden.__file__)
    assert abs(report["closed_error"]) < 0.02 < 1.0 < abs(report["open_error"])
