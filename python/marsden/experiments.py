"""The papers' experiments (docs/experiments.md): list them and run one."""

from __future__ import annotations

import json
import os

from . import _core


def list_experiments() -> list[tuple[str, str]]:
    """(name, description) of every experiment, sorted by name."""
    return _core._list_experiments()


def run_experiment(name: str, out_dir: str | os.PathLike, quick: bool = False,
                   progress=None) -> dict:
    """Runs an experiment into out_dir (its data files, plots and results.json) and returns
    results.json as a dict: status ("ok" or "interrupted"), parameters, data_files, claims
    (each with measured, expected and holds) and all_claims_hold. ``quick`` runs the short
    version. ``progress(experiment, part, elapsed_s)``, if given, is called as parts start
    and about once a second. Ctrl-C stops the experiment at its next safe point: the files
    written so far are complete, and the status says "interrupted"."""
    results = _core._run_experiment(name, os.fspath(out_dir), bool(quick), progress)
    with open(results) as f:
        return json.load(f)
