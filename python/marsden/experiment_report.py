"""The report of an experiment: DIR/report.html from DIR/results.json (docs/viewer.md).

One self-contained page: the claims as a table (holds or not, measured against expected,
source in the paper), the parameters, the data files and the figures (each PNG the
experiment wrote, inlined). Needs the standard library only, so that the ``marsden``
command can run its ``main``.
"""
from __future__ import annotations

import base64
import html
import json
import os
import sys
from pathlib import Path


class ReportError(ValueError):
    """An experiment folder the report cannot read; the message names what and where."""


def _text(value) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return "" if value is None else str(value)


def report_html(run_dir) -> str:
    """The report page of an experiment folder (``marsden experiment run NAME --out DIR``)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: no such experiment folder")
    path = run_dir / "results.json"
    if not path.is_file():
        raise ReportError(f"{path}: missing; `marsden experiment run NAME --out DIR` writes it")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
        name = str(results["experiment"])
        claims = list(results.get("claims", []))
        parameters = dict(results.get("parameters", {}))
        data_files = list(results.get("data_files", []))
    except (ValueError, KeyError, TypeError) as e:
        raise ReportError(f"{path}: malformed results ({e!r})") from None
    e = html.escape
    held = sum(1 for c in claims if c.get("holds"))
    rows = []
    for c in claims:
        ok = bool(c.get("holds"))
        rows.append(f'<tr class="{"holds" if ok else "fails"}"><td>{"holds" if ok else "does not hold"}</td>'
                    f'<td>{e(_text(c.get("id")))}</td><td>{e(_text(c.get("statement")))}</td>'
                    f'<td>{e(_text(c.get("measured")))}</td><td>{e(_text(c.get("expected")))}</td>'
                    f'<td>{e(_text(c.get("source")))}</td></tr>')
    params = "".join(f"<tr><td>{e(k)}</td><td>{e(_text(v))}</td></tr>" for k, v in parameters.items())
    files, figures = [], []
    for f in data_files:
        rel = str(f.get("path", ""))
        files.append(f"<li><code>{e(rel)}</code> {e(_text(f.get('description')))}</li>")
        png = run_dir / rel
        if rel.lower().endswith(".png") and png.is_file():
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            figures.append(f'<figure><img alt="{e(rel)}" src="data:image/png;base64,{data}">'
                           f"<figcaption>{e(rel)}: {e(_text(f.get('description')))}</figcaption></figure>")
    status = _text(results.get("status", ""))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{e(name)} - Marsden report</title>
<style>
body {{ font: 14px sans-serif; margin: 2em; max-width: 70em; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }}
tr.holds td:first-child {{ background: #d8f0d8; }}
tr.fails td:first-child {{ background: #f6d0d0; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>{e(name)}</h1>
<p id="summary">{held} of {len(claims)} claims hold; status {e(status)}{", quick run" if results.get("quick") else ""}.
{e(_text(results.get("message", "")))}</p>
<h2>Claims</h2>
<table id="claims"><tr><th>result</th><th>claim</th><th>statement</th><th>measured</th><th>expected</th><th>source</th></tr>
{"".join(rows)}</table>
<h2>Parameters</h2>
<table id="parameters">{params}</table>
<h2>Figures</h2>
{"".join(figures) or "<p>none</p>"}
<h2>Data files</h2>
<ul>{"".join(files)}</ul>
</body></html>
"""


def write_report(run_dir, out=None) -> Path:
    """Writes DIR/report.html (or OUT), through a hidden .part file renamed when complete."""
    out = Path(out) if out is not None else Path(run_dir) / "report.html"
    text = report_html(run_dir)
    if not out.parent.is_dir():
        raise ReportError(f"{out.parent}: no such folder for the report")
    part = out.with_name("." + out.name + ".part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, out)
    return out


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="marsden report",
                                     description="Write an experiment's report.html")
    parser.add_argument("run_dir")
    parser.add_argument("--out", default=None, help="the page (default RUN_DIR/report.html)")
    args = parser.parse_args(argv)
    try:
        path = write_report(args.run_dir, args.out)
    except ReportError as e:
        print(f"marsden: error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
