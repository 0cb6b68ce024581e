"""The 3-D player (docs/viewer.md): pages written by `marsden simulate --view` and
`marsden view`, checked for what they must hold and played in a real browser (Debian's
chromium, headless, WebGL through SwiftShader, driven by selenium and chromedriver).

Per system kind: the page loads with no console error, the 3-D canvas is not blank,
moving the time slider moves the drawn bodies, and the strip chart is drawn. Screenshots
go to $MARSDEN_SCREENSHOTS (the build folder's viewer-screenshots under ctest).
"""

import io
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("MARSDEN_BIN", ROOT / "build" / "release" / "apps" / "marsden"))
SHOTS = pathlib.Path(os.environ.get("MARSDEN_SCREENSHOTS", ROOT / "build" / "viewer-screenshots"))

from marsden import experiment_report as report, viewer  # noqa: E402  (the build tree's package, on PYTHONPATH)

# One scene per kind the player draws: SE(3) vehicles, a planar nonholonomic vehicle on
# the ground, a tree (links between frames, masses), a maximal mechanism (boxes, joints).
KINDS = {"rigid_body": "rigid_body.json", "helicopter": "helicopter_turn.json",
         "boat": "boat_wind_current.json", "car": "car_parallel_park.json",
         "snakeboard": "snakeboard_gait.json", "sleigh": "sleigh.json", "tree": "double_pendulum.json",
         "marionette": "marionette.json", "maximal": "maximal_chain.json",
         "urdf_visuals": "urdf_visuals.json"}

needs_bin = pytest.mark.skipif(not BIN.exists(), reason=f"marsden binary not built: {BIN}")


def marsden(*args):
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Each kind's run with --view: its folder (model.json, view.html beside the outputs)."""
    if not BIN.exists():
        pytest.skip(f"marsden binary not built: {BIN}")
    base = tmp_path_factory.mktemp("runs")
    out = {}
    for kind, scene in KINDS.items():
        r = marsden("simulate", ROOT / "examples" / "scenes" / scene, "--out", base / kind, "--view")
        assert r.returncode == 0, r.stderr
        out[kind] = base / kind
    return out


# --- The page and its inputs, without a browser.

def fake_run(folder, bodies=20, seconds=10.0, fps=100):
    """A maximal-style run folder: bodies moving for `seconds` at `fps` rows per second."""
    folder.mkdir(parents=True, exist_ok=True)
    t = np.linspace(0.0, seconds, int(seconds * fps) + 1)
    pos = np.zeros((t.size, bodies, 3))
    quat = np.zeros((t.size, bodies, 4))
    for b in range(bodies):
        pos[:, b, 0] = 0.3 * b + 0.1 * np.sin(t + b)
        pos[:, b, 2] = np.cos(0.5 * t + 0.1 * b)
        quat[:, b, 0], quat[:, b, 3] = np.cos(t / 2), np.sin(t / 2)
    np.savez(folder / "trajectory.npz", t=t, position=pos, quaternion=quat, energy=np.cos(t),
             constraint_violation=1e-9 * t, controls=np.sin(t)[:, None])
    box = {"shape": "box", "semi_axes": [0.1, 0.05, 0.02], "rotation": [1, 0, 0, 0], "offset": [0, 0, 0]}
    model = {"bodies": [{"name": f"b{b}", "geometry": [box],
                         "pose": {"position": "position", "quaternion": "quaternion", "index": b}}
                        for b in range(bodies)]}
    (folder / "model.json").write_text(json.dumps({"format": "marsden-view-1", "system": "maximal",
                                                   "trajectory": "trajectory.npz", "model": model}))
    return folder


def test_twenty_bodies_ten_seconds_at_100_fps_fit_in_3_mb(tmp_path):
    page = viewer.view(fake_run(tmp_path / "run")).path
    assert page == tmp_path / "run" / "view.html"
    assert page.stat().st_size <= 3_000_000
    assert not list((tmp_path / "run").glob(".*.part"))


def test_page_is_self_contained(tmp_path):
    text = viewer.view(fake_run(tmp_path / "run", bodies=2)).html
    assert "<script src" not in text and "<link" not in text
    assert "MeshCat" in text and "MARSDEN_DATA" in text


def test_long_runs_are_decimated_to_the_frame_limit(tmp_path):
    data = viewer.scene_data(fake_run(tmp_path / "run", bodies=1, seconds=60.0))
    text = viewer.page(data)
    frames = json.loads(text.split("const MARSDEN_DATA = ", 1)[1].split(";</script>", 1)[0])["frames"]
    assert frames <= viewer.MAX_FRAMES + 1 and frames > viewer.MAX_FRAMES // 2


def test_missing_run_folder_is_named(tmp_path):
    with pytest.raises(viewer.ViewError, match="no such run folder"):
        viewer.scene_data(tmp_path / "nowhere")


def test_run_without_model_description_is_named(tmp_path):
    run = fake_run(tmp_path / "run")
    (run / "model.json").unlink()
    with pytest.raises(viewer.ViewError, match=r"model\.json: missing"):
        viewer.scene_data(run)


@pytest.mark.parametrize("text", ["{not json", '{"system": "maximal"}',
                                  '{"system": "maximal", "model": {"bodies": [{"name": "b"}]}}'])
def test_malformed_model_description_is_named(tmp_path, text):
    run = fake_run(tmp_path / "run")
    (run / "model.json").write_text(text)
    with pytest.raises(viewer.ViewError, match=r"model\.json: malformed"):
        viewer.scene_data(run)


def test_malformed_trajectory_is_named(tmp_path):
    run = fake_run(tmp_path / "run")
    (run / "trajectory.npz").write_bytes(b"not an archive")
    with pytest.raises(viewer.ViewError, match=r"trajectory\.npz: not a readable"):
        viewer.scene_data(run)


def test_view_of_an_in_memory_trajectory(tmp_path):
    import marsden
    scene = marsden.load_scene(str(ROOT / "examples" / "scenes" / "helicopter_turn.json"))
    run = marsden.simulate(marsden.make_system(scene), dt=scene.dt, steps=scene.steps)
    page = marsden.view(run, out=tmp_path / "helicopter.html")
    assert page.path == tmp_path / "helicopter.html" and page.path.read_text() == page.html
    assert page._repr_html_().startswith("<iframe") and "MARSDEN_DATA" in page._repr_html_()
    assert marsden.view(run).path is None  # shown inline only
    tree = marsden.load_scene(str(ROOT / "examples" / "scenes" / "double_pendulum.json"))
    run = marsden.simulate(marsden.make_system(tree), dt=tree.dt, steps=10)
    with pytest.raises(marsden.ViewError, match="no poses"):
        marsden.view(run)


@needs_bin
def test_view_command_names_a_run_without_model(tmp_path):
    run = fake_run(tmp_path / "run")
    (run / "model.json").unlink()
    r = marsden("view", run)
    assert r.returncode == 2
    assert "model.json: missing" in r.stderr
    assert not (run / "view.html").exists()


@needs_bin
def test_view_command_writes_out(tmp_path):
    run = fake_run(tmp_path / "run", bodies=3)
    r = marsden("view", run, "--out", tmp_path / "page.html")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "page.html").stat().st_size > 100_000


@needs_bin
def test_optimize_view_plays_the_optimum(tmp_path):
    out = tmp_path / "acrobot"
    r = marsden("optimize", ROOT / "examples" / "problems" / "acrobot_swing_up.json", "--out", out, "--view")
    assert r.returncode == 0, r.stderr
    assert (out / "view.html").stat().st_size > 100_000
    resim = np.load(out / "resimulation" / "trajectory.npz")
    optimum = np.load(out / "trajectory.npz")
    # The page plays the re-simulation, which ends where the optimum ends.
    q_names = [k for k in optimum.files if k.startswith("q_")]
    assert q_names
    final = np.array([optimum[k][-1] for k in q_names])
    assert np.allclose(resim["q"][-1], final, atol=1e-6)
    # --force replaces the earlier run's page and re-simulation.
    assert marsden("optimize", ROOT / "examples" / "problems" / "acrobot_swing_up.json",
                   "--out", out, "--view", "--force").returncode == 0


@needs_bin
def test_report_shows_claims_parameters_and_figures(tmp_path, driver):
    out = tmp_path / "rba"
    r = marsden("experiment", "run", "rigid-body-accuracy", "--quick", "--out", out)
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "results.json").read_text())
    r = marsden("report", out)
    assert r.returncode == 0, r.stderr
    driver.get((out / "report.html").as_uri())
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    rows = driver.execute_script("return [...document.querySelectorAll('#claims tr')]"
                                 ".slice(1).map(r => [r.cells[0].textContent, r.cells[1].textContent])")
    expected = [["holds" if c["holds"] else "does not hold", c["id"]] for c in results["claims"]]
    assert rows == expected and rows
    params = driver.execute_script("return [...document.querySelectorAll('#parameters tr')]"
                                   ".map(r => r.cells[0].textContent)")
    assert params == list(results["parameters"])
    pngs = [f["path"] for f in results["data_files"] if f["path"].endswith(".png")]
    shown = driver.execute_script("return [...document.images].filter(i => i.naturalWidth > 0).length")
    assert shown == len(pngs)
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / "report-rigid-body-accuracy.png"))


def test_report_names_a_folder_without_results(tmp_path):
    with pytest.raises(report.ReportError, match=r"results\.json: missing"):
        report.write_report(tmp_path)
    (tmp_path / "results.json").write_text('{"claims": []}')
    with pytest.raises(report.ReportError, match=r"results\.json: malformed"):
        report.write_report(tmp_path)
    assert not (tmp_path / "report.html").exists()


def test_runs_write_model_and_page(pages):
    for kind, run in pages.items():
        model = json.loads((run / "model.json").read_text())
        assert model["model"]["bodies"], kind
        assert (run / "view.html").is_file(), kind
        assert (run / "frames.npz").is_file() == (kind in ("tree", "marionette", "urdf_visuals")), kind


# --- URDF <visual> geometry.

URDF = ROOT / "examples" / "urdf" / "visual_pendulum.urdf"


def quat_matrix(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def world_visuals(run):
    """Every drawn visual shape of a run at its first row: (shape, world centre, world z
    axis), from model.json and the run's poses, as the page places them."""
    desc = json.loads((run / "model.json").read_text())
    traj = np.load(run / "trajectory.npz")
    frames = np.load(run / "frames.npz") if "frames_file" in desc else None
    out = []
    for b in desc["model"]["bodies"]:
        src = b["pose"]
        if "frame" in src:
            p, q = frames["position"][0, src["frame"]], frames["quaternion"][0, src["frame"]]
        elif "fixed" in src:
            p, q = np.array(src["fixed"][:3]), np.array(src["fixed"][3:])
        else:
            p, q = traj["position"][0, src["index"]], traj["quaternion"][0, src["index"]]
        for g in b["geometry"]:
            if g.get("visual"):
                R = quat_matrix(q) @ quat_matrix(g["rotation"])
                out.append((g["shape"], p + quat_matrix(q) @ np.array(g["offset"]), R[:, 2]))
    return sorted(out, key=lambda v: (v[0], *np.round(v[1], 6)))


@needs_bin
@pytest.mark.parametrize("base", ["fixed", "floating"])
def test_urdf_visuals_stand_where_both_engines_put_the_links(tmp_path, driver, base):
    """visual_pendulum.urdf in the tree engine (each visual on its link's frame) and in
    maximal coordinates (on the rigid body's frame, the paddle welded to the lower link; a
    fixed base standing still, a floating one a body): at the same initial configuration
    every shape is at the same place and axis, and the shapes are the file's seven. The
    maximal page plays too (one base is enough)."""
    scene = json.loads((ROOT / "examples" / "scenes" / "urdf_visuals.json").read_text())
    scene["system"].update(urdf=str(URDF), base=base)
    scene["duration"] = 0.2
    runs = {}
    for engine in ("tree", "maximal"):
        s = dict(scene, system=dict(scene["system"], type=engine))
        if engine == "maximal":
            del s["integrator"]
        (tmp_path / f"{engine}.json").write_text(json.dumps(s))
        view = ["--view"] if engine == "maximal" and base == "fixed" else []
        r = marsden("simulate", tmp_path / f"{engine}.json", "--out", tmp_path / engine, *view)
        assert r.returncode == 0, r.stderr
        runs[engine] = world_visuals(tmp_path / engine)
    if base == "fixed":
        check_page_plays(driver, tmp_path / "maximal" / "view.html", "urdf-maximal")
    tree, maximal = runs["tree"], runs["maximal"]
    assert [v[0] for v in tree] == ["box", "cylinder", "cylinder", "cylinder", "ellipsoid", "mesh", "mesh"]
    assert [v[0] for v in maximal] == [v[0] for v in tree]
    for (shape, p_t, z_t), (_, p_m, z_m) in zip(tree, maximal):
        assert np.allclose(p_t, p_m, atol=1e-9) and np.allclose(z_t, z_m, atol=1e-9), shape
    # The elbow's sphere at 1 m from the shoulder, on the upper rod turned by q = 1 rad
    # about x (the initial state): at (0, sin 1, -cos 1).
    (sphere,) = [v for v in tree if v[0] == "ellipsoid"]
    assert np.allclose(sphere[1], [0, np.sin(1.0), -np.cos(1.0)], atol=1e-12)
    desc = json.loads((tmp_path / "tree" / "model.json").read_text())
    meshes = [g for b in desc["model"]["bodies"] for g in b["geometry"] if g["shape"] == "mesh"]
    assert sorted(pathlib.Path(g["file"]).name for g in meshes) == ["paddle.obj", "weight.stl"]
    assert "warnings" not in desc
    # <material> colours as 0xRRGGBB: the robot's steel (0.6, 0.6, 0.65) and the orange
    # (0.9, 0.5, 0.1) of both rods; the others take the page's palette.
    colours = sorted((g["shape"], hex(g["color"])) for b in desc["model"]["bodies"]
                     for g in b["geometry"] if "color" in g)
    assert colours == [("box", "0x9999a6"), ("cylinder", "0xe6801a"), ("cylinder", "0xe6801a")]


def test_meshes_read_binary_and_ascii_stl_and_obj(tmp_path):
    binary = viewer.read_mesh(ROOT / "examples" / "urdf" / "meshes" / "weight.stl")
    assert binary.shape == (8, 3, 3)
    # The octahedron's faces are outward: each normal points away from the centre.
    normals = np.cross(binary[:, 1] - binary[:, 0], binary[:, 2] - binary[:, 0])
    assert np.all(np.einsum("ij,ij->i", normals, binary.mean(axis=1)) > 0)
    ascii_stl = "solid w\n" + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x:.9g} {y:.9g} {z:.9g}\n" for x, y, z in t)
        + "endloop\nendfacet\n" for t in binary) + "endsolid w\n"
    (tmp_path / "w.stl").write_text(ascii_stl)
    assert np.allclose(viewer.read_mesh(tmp_path / "w.stl"), binary, atol=1e-7)
    obj = viewer.read_mesh(ROOT / "examples" / "urdf" / "meshes" / "paddle.obj")
    # A quad base fanned into two triangles and four sides: 6 triangles, the pyramid's
    # base (2 x 2) and its four sides (each 2 x sqrt(2) / 2).
    assert obj.shape == (6, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(obj[:, 1] - obj[:, 0], obj[:, 2] - obj[:, 0]), axis=1).sum()
    assert np.isclose(area, 4 + 4 * np.sqrt(2))
    for name, text in (("bad.stl", "not a mesh"), ("bad.obj", "v 0 0 0\nf 1 2 3\n"),
                       ("nan.obj", "v 0 0 nan\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")):
        (tmp_path / name).write_text(text)
        with pytest.raises(viewer.ViewError, match=name):
            viewer.read_mesh(tmp_path / name)


@needs_bin
def test_missing_and_unknown_meshes_are_skipped_with_a_warning(tmp_path, driver):
    """Meshes that are missing or neither STL nor OBJ are left out and listed; the lower
    link and the paddle welded to it, left with nothing to draw, are drawn as the
    ellipsoid of their inertia."""
    urdf = URDF.read_text().replace("meshes/weight.stl", "meshes/absent.stl") \
                           .replace("package://urdf/meshes/paddle.obj", "package://urdf/meshes/paddle.dae") \
                           .replace('<cylinder radius="0.02" length="0.8"/>', '<mesh filename="rod.ply"/>')
    (tmp_path / "urdf").mkdir()
    (tmp_path / "urdf" / "r.urdf").write_text(urdf)
    (tmp_path / "urdf" / "meshes").mkdir()
    (tmp_path / "urdf" / "meshes" / "paddle.dae").write_text("<COLLADA/>")
    scene = json.loads((ROOT / "examples" / "scenes" / "urdf_visuals.json").read_text())
    scene["system"]["urdf"] = "urdf/r.urdf"
    scene["duration"] = 0.05
    (tmp_path / "s.json").write_text(json.dumps(scene))
    r = marsden("simulate", tmp_path / "s.json", "--out", tmp_path / "run", "--view")
    assert r.returncode == 0, r.stderr
    desc = json.loads((tmp_path / "run" / "model.json").read_text())
    assert desc["warnings"] == [
        'link "lower": mesh "rod.ply" not drawn: not found',
        'link "lower": mesh "meshes/absent.stl" not drawn: not found',
        'link "paddle": mesh "package://urdf/meshes/paddle.dae" not drawn: only STL and OBJ meshes are drawn']
    bodies = {b["name"]: b["geometry"] for b in desc["model"]["bodies"]}
    assert not [g for b in bodies.values() for g in b if g["shape"] == "mesh"]
    assert [g["shape"] for g in bodies["upper"]] == ["cylinder", "ellipsoid"]
    ((lower,),) = [g for name, g in bodies.items() if name == "lower"]
    assert lower["shape"] == "ellipsoid" and not lower.get("visual")
    driver.get((tmp_path / "run" / "view.html").as_uri())
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    shown = driver.execute_script("return document.getElementById('warnings').textContent")
    assert "absent.stl" in shown and "paddle.dae" in shown


@needs_bin
def test_links_without_a_drawable_visual_are_drawn_from_their_collision_geometry(tmp_path):
    """A link whose visuals are all meshes the page cannot draw, but which has primitive
    <collision> geometry, is drawn from that (example-robot-data's robots ship COLLADA
    meshes), and one warning lists those links."""
    urdf = (ROOT / "examples" / "urdf" / "box.urdf").read_text()
    urdf = urdf.replace('<geometry><box size="0.5 0.5 0.5"/></geometry>\n      <material',
                        '<geometry><mesh filename="box.dae"/></geometry>\n      <material', 1)
    assert "box.dae" in urdf
    (tmp_path / "box.urdf").write_text(urdf)
    scene = json.loads((ROOT / "examples" / "scenes" / "box_toss.json").read_text())
    scene["system"]["urdf"] = "box.urdf"
    scene["duration"] = 0.05
    (tmp_path / "s.json").write_text(json.dumps(scene))
    r = marsden("simulate", tmp_path / "s.json", "--out", tmp_path / "run", "--view")
    assert r.returncode == 0, r.stderr
    desc = json.loads((tmp_path / "run" / "model.json").read_text())
    assert desc["warnings"] == ["1 links drawn from their <collision> geometry, their meshes "
                                "not being STL or OBJ files found: box"]
    ((box,),) = [b["geometry"] for b in desc["model"]["bodies"]]
    assert box["shape"] == "box" and np.allclose(box["semi_axes"], [0.25, 0.25, 0.25])
    assert desc["model"]["ground"] is True
    # The strip chart carries the run's contact columns.
    traj = np.load(tmp_path / "run" / "trajectory.npz")
    chart = {s["name"]: s["values"] for s in viewer.scene_data(tmp_path / "run")["chart"]}
    assert {"contact force", "penetration", "complementarity"} <= chart.keys()
    assert np.array_equal(chart["contact force"], traj["contact_force"])


def test_maximal_wheels_and_skates_are_drawn_on_their_bodies(tmp_path):
    """A maximal body's velocity constraints are drawn with it (docs/maximal.md): the rolling
    disk's wheel as a thin cylinder of its radius turned onto its axle (the cylinder's z onto
    body y), the trailers' skates as markers at their axles."""
    r = marsden("simulate", ROOT / "examples" / "scenes" / "maximal_rolling_disk.json",
                "--out", tmp_path / "disk", "--view")
    assert r.returncode == 0, r.stderr
    bodies = json.loads((tmp_path / "disk" / "model.json").read_text())["model"]["bodies"]
    (wheel,) = [g for g in bodies[1]["geometry"] if g["shape"] == "cylinder"]
    assert np.allclose(wheel["semi_axes"][:2], [0.5, 0.5]) and wheel["semi_axes"][2] < 0.05
    w, x, y, z = wheel["rotation"]
    z_axis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
    assert np.allclose(z_axis, [0, 1, 0])
    scene = json.loads((ROOT / "examples" / "scenes" / "maximal_trailers.json").read_text())
    scene["duration"] = 0.05
    (tmp_path / "t.json").write_text(json.dumps(scene))
    r = marsden("simulate", tmp_path / "t.json", "--out", tmp_path / "train", "--view")
    assert r.returncode == 0, r.stderr
    bodies = json.loads((tmp_path / "train" / "model.json").read_text())["model"]["bodies"]
    markers = [[g["offset"] for g in b["geometry"] if g["shape"] == "ellipsoid"] for b in bodies]
    # The tractor's rear axle, each trailer's, and the front axle's on its steered body (last).
    assert all(m == [[-0.2, 0.0, 0.0]] for m in markers[:-1])
    assert markers[-1] == [[0.0, 0.0, 0.0]]


# --- Planar vehicles: the parts the page turns.

def test_car_front_wheels_steer_and_roll_with_the_front_axle(pages):
    """The car's page data: the front wheels turn by atan(sigma) (sigma the recorded shape)
    and roll at the front axle's speed, which the poses give independently: the axle at l
    ahead of the rear axle moves rho times the front wheels' angle."""
    run = pages["car"]
    data = viewer.scene_data(run)
    traj = np.load(run / "trajectory.npz")
    vehicle = json.loads((run / "model.json").read_text())["model"]["vehicle"]
    rho, l = vehicle["wheel_radius"], vehicle["axle_distance"]
    front = [p for p in data["parts"] if p["offset"][0] == l]
    assert len(front) == 2 and len([p for p in data["parts"] if p["offset"][0] == 0]) == 2
    steer_k, roll_k = front[0]["turns"][0]["angle"], front[0]["turns"][1]["angle"]
    assert np.allclose(data["angles"][:, steer_k], np.arctan(traj["shape"][:, 1]))
    assert np.ptp(data["angles"][:, steer_k]) > 0.1
    theta, x, y = traj["pose"].T
    axle = np.stack([x + l * np.cos(theta), y + l * np.sin(theta)], axis=1)
    travelled = np.linalg.norm(np.diff(axle, axis=0), axis=1)
    rolled = rho * np.abs(np.diff(data["angles"][:, roll_k]))
    assert travelled.sum() > 0.5
    assert np.allclose(rolled, travelled, rtol=0.02, atol=2e-4)


def test_snakeboard_wheel_sets_and_rotor_turn_by_the_shape(pages):
    run = pages["snakeboard"]
    data = viewer.scene_data(run)
    shape = np.load(run / "trajectory.npz")["shape"]
    turns = {tuple(p["offset"]): [t["angle"] for t in p["turns"]] for p in data["parts"]}
    l = json.loads((run / "model.json").read_text())["model"]["vehicle"]["half_length"]
    (front,), (back,) = turns[(l, 0, 0)], turns[(-l, 0, 0)]
    (rotor,) = [k for offset, ks in turns.items() if offset[0] == 0 for k in ks]
    assert np.allclose(data["angles"][:, front], shape[:, 1])
    assert np.allclose(data["angles"][:, back], -shape[:, 1])
    assert np.allclose(data["angles"][:, rotor], shape[:, 0])
    assert np.ptp(shape[:, 0]) > 0.5 and np.ptp(shape[:, 1]) > 0.2


def test_sleigh_has_its_knife_edge_at_the_skate(pages):
    desc = json.loads((pages["sleigh"] / "model.json").read_text())
    a = desc["model"]["vehicle"]["skate_offset"]
    (body,) = viewer.scene_data(pages["sleigh"])["bodies"]
    blade = [g for g in body["geometry"] if g["semi_axes"][1] < 0.05 * a]
    assert len(blade) == 1 and blade[0]["offset"][0] == a


def test_rigid_body_is_the_ellipsoid_of_its_inertia(pages):
    """J = (1, 2, 3) kg m^2, m = 1 kg (rigid_body.json): the ellipsoid's semi-axes along its
    principal axes give back the inertia, J_1 = m (b^2 + c^2) / 5 and so on."""
    (body,) = json.loads((pages["rigid_body"] / "model.json").read_text())["model"]["bodies"]
    (g,) = body["geometry"]
    w, x, y, z = g["rotation"]
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    s2 = np.square(g["semi_axes"])
    principal = np.diag([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]]) / 5.0
    assert np.allclose(R @ principal @ R.T, np.diag([1.0, 2.0, 3.0]), atol=1e-12)


def test_tree_frames_are_the_runs_kinematics(pages):
    """frames.npz of the double pendulum: rigid links keep their lengths at every row (two
    of them 1 m, the scene's length), quaternions are unit, and the masses move."""
    run = pages["tree"]
    model = json.loads((run / "model.json").read_text())["model"]
    frames = np.load(run / "frames.npz")
    p, q = frames["position"], frames["quaternion"]
    rows = np.load(run / "trajectory.npz")["t"].size
    assert p.shape == (rows, len(model["frames"]), 3) and q.shape == (rows, len(model["frames"]), 4)
    assert np.allclose(np.linalg.norm(q, axis=2), 1.0, atol=1e-12)
    lengths = []
    for parent, k in model["links"]:
        origin = np.zeros(3) if parent < 0 else p[:, parent, :]
        d = np.linalg.norm(p[:, k, :] - origin, axis=1)
        assert np.ptp(d) < 1e-9, model["frames"][k]["name"]
        lengths.append(d[0])
    assert sum(np.isclose(lengths, 1.0)) == 2
    masses = [b["pose"]["frame"] for b in model["bodies"]]
    assert len(masses) == 2 and np.ptp(p[:, masses[-1], :], axis=0).max() > 0.5


# --- In the browser.

def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    driver_path = shutil.which("chromedriver")
    chromium = shutil.which("chromium")
    if not driver_path or not chromium:
        pytest.skip("chromium and chromium-driver are not installed (scripts/install-deps.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu-sandbox", "--use-angle=swiftshader",
              "--enable-unsafe-swiftshader", "--window-size=900,800", "--disable-dev-shm-usage"):
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.webdriver.chrome.service import Service
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def driver():
    d = browser()
    yield d
    d.quit()


def pixels(driver, element_id):
    from PIL import Image
    png = driver.find_element("id", element_id).screenshot_as_png
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int), png


def move_slider(driver, frame):
    driver.execute_script(
        "const s = document.getElementById('time'); s.value = String(arguments[0]);"
        "s.dispatchEvent(new Event('input'));", frame)


@pytest.mark.parametrize("kind", list(KINDS))
def test_page_plays_in_browser(pages, driver, kind):
    check_page_plays(driver, pages[kind] / "view.html", kind)


def check_page_plays(driver, page, kind):
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.get(page.as_uri())
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    frames = driver.execute_script("return window.marsdenView.frames")
    assert frames > 1
    driver.execute_script("document.getElementById('trail').checked = false")

    move_slider(driver, 0)
    first, png = pixels(driver, "scene")
    (SHOTS / f"{kind}-start.png").write_bytes(png)
    background = first[2, 2]
    drawn = np.any(np.abs(first - background) > 30, axis=2).mean()
    assert drawn > 0.002, f"{kind}: the 3-D canvas is blank ({drawn:.4%} drawn)"

    move_slider(driver, frames - 1)
    assert driver.execute_script("return window.marsdenView.frame()") == frames - 1
    last, png = pixels(driver, "scene")
    (SHOTS / f"{kind}-end.png").write_bytes(png)
    moved = np.any(np.abs(first - last) > 30, axis=2).mean()
    assert moved > 0.0005, f"{kind}: moving the slider did not move the drawn bodies ({moved:.4%})"

    chart, png = pixels(driver, "chart")
    (SHOTS / f"{kind}-chart.png").write_bytes(png)
    colours = {tuple(c) for c in chart.reshape(-1, 3)[::7] if np.ptp(c) > 60}
    assert len(colours) >= 3, f"{kind}: the strip chart has no coloured series"
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.fixture(scope="module")
def generated_pages(tmp_path_factory):
    """Runs with --view of systems from marsden.symbolic: the vertical rolling disk (full
    coordinates, its body from the generated pose) and the hovercraft (SE(2))."""
    if not BIN.exists():
        pytest.skip(f"marsden binary not built: {BIN}")
    pytest.importorskip("casadi")
    from marsden import symbolic as sym
    from marsden.symbolic import full
    base = tmp_path_factory.mktemp("generated")
    scenes = {
        "rolling_disk": {"system": full.rolling_disk().scene_system(),
                         "integrator": {"method": "rattle"}, "dt": 0.01, "duration": 2.0,
                         "initial_state": {"q": [0, 0, 0, 0.4],
                                           "qdot": [1.5 * np.cos(0.4), 1.5 * np.sin(0.4), 3.0, 1.3]}},
        "hovercraft": {"system": sym.hovercraft(drag=0.5).scene_system(), "dt": 0.01,
                       "duration": 2.0, "initial_state": {"theta": 0.3},
                       "controls": {"type": "constant", "value": [1.0, 0.6]}},
    }
    out = {}
    for kind, scene in scenes.items():
        path = base / f"{kind}.json"
        path.write_text(json.dumps(scene))
        # The scenes name the libraries compiled here: this test's own code, allowed.
        r = marsden("simulate", path, "--out", base / kind, "--view", "--allow-code")
        assert r.returncode == 0, r.stderr
        out[kind] = base / kind
    return out


@pytest.mark.parametrize("kind", ["rolling_disk", "hovercraft"])
def test_generated_systems_play_in_browser(generated_pages, driver, kind):
    check_page_plays(driver, generated_pages[kind] / "view.html", kind)


@needs_bin
def test_optimize_view_draws_the_problems_obstacles(tmp_path, driver):
    # The car's tunnel problem: its obstacles reach the re-simulation's model.json as the
    # problem file gives them, and the page draws them: the same run's page without them
    # differs where they stand, and neither page logs an error.
    out = tmp_path / "tunnel"
    problem = ROOT / "examples" / "problems" / "car_tunnel.json"
    r = marsden("optimize", problem, "--out", out, "--view")
    assert r.returncode == 0, r.stderr
    given = json.loads(problem.read_text())["obstacles"]
    environment = json.loads((out / "resimulation" / "model.json").read_text())["environment"]
    assert environment["dimension"] == 2
    assert [(o["type"], o.get("radius")) for o in given] == \
        [(o["type"], o["radius"] if o["type"] == "cylinder" else None)
         for o in environment["obstacles"]]
    bare = tmp_path / "bare"
    shutil.copytree(out / "resimulation", bare)
    model = json.loads((bare / "model.json").read_text())
    del model["environment"]
    (bare / "model.json").write_text(json.dumps(model))
    viewer.main([str(bare), "--out", str(bare / "view.html")])
    shots = {}
    for name, page in (("with", out / "view.html"), ("without", bare / "view.html")):
        driver.get(page.as_uri())
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        driver.execute_script("document.getElementById('trail').checked = false")
        move_slider(driver, 0)
        shots[name], png = pixels(driver, "scene")
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"obstacles-{name}.png").write_bytes(png)
    # The blank-canvas threshold of test_page_plays_in_browser: three pillars and the end
    # marker take 0.7 % of this view.
    differ = np.any(np.abs(shots["with"] - shots["without"]) > 30, axis=2).mean()
    assert differ > 0.002, f"the obstacles are not drawn ({differ:.4%} of the canvas differs)"


def first_frame(driver, page, shot):
    """The 3-D canvas at the first frame, trail off, after a load with no console error."""
    driver.get(page.as_uri())
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    driver.execute_script("document.getElementById('trail').checked = false")
    move_slider(driver, 0)
    pixels_, png = pixels(driver, "scene")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"{shot}.png").write_bytes(png)
    return pixels_


def page_without(run, tmp_path, name, edit):
    """The page of a copy of RUN whose model.json is changed by EDIT."""
    bare = tmp_path / name
    shutil.copytree(run, bare)
    desc = json.loads((bare / "model.json").read_text())
    edit(desc)
    (bare / "model.json").write_text(json.dumps(desc))
    assert viewer.main([str(bare), "--out", str(bare / "view.html")]) == 0
    return bare / "view.html"


# --- SE(3) vehicles.

def rotation(axis, angle):
    k = np.asarray(axis, float)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def test_helicopter_rotor_disc_tilts_with_the_shape(pages):
    """The disc at the hub d_t above the centre of mass, turned (outermost first) by the
    recorded shape: its normal is the thrust direction of vehicles §4.3.1,
    (sin gp cos gr, -sin gr, cos gp cos gr), at every frame."""
    run = pages["helicopter"]
    data = viewer.scene_data(run)
    shape = np.load(run / "trajectory.npz")["shape"]
    d_t = json.loads((ROOT / "examples" / "scenes" / "helicopter_turn.json").read_text())["system"]["d_t"]
    disc = data["parts"][0]
    assert disc["offset"] == [0, 0, d_t]
    assert np.ptp(shape[:, 0]) > 0.03
    for row in range(0, shape.shape[0], 37):
        R = np.eye(3)
        for turn in disc["turns"]:
            R = R @ rotation(turn["axis"], data["angles"][row, turn["angle"]])
        gp, gr = shape[row]
        thrust = [np.sin(gp) * np.cos(gr), -np.sin(gr), np.cos(gp) * np.cos(gr)]
        assert np.allclose(R @ [0, 0, 1], thrust, atol=1e-6), row


def test_boat_draws_its_hull_wind_and_current(pages, driver, tmp_path):
    """The hull box of the scene's size, arrows for the scene's wind and current (their
    labels give the magnitudes), drawn: the page without them differs."""
    run = pages["boat"]
    system = json.loads((ROOT / "examples" / "scenes" / "boat_wind_current.json").read_text())["system"]
    model = json.loads((run / "model.json").read_text())["model"]
    assert model["boat"]["wind_force"] == system["wind_force"] and model["boat"]["current"] == system["current"]
    (hull,) = model["bodies"][0]["geometry"]
    assert hull["shape"] == "box" and np.allclose(np.multiply(2, hull["semi_axes"]), system["hull_size"])
    arrows = viewer.scene_data(run)["arrows"]
    assert [a["label"] for a in arrows] == ["wind 40 N", "current 0.5 m/s"]
    assert np.allclose(arrows[0]["vector"], [0, 1, 0]) and np.allclose(arrows[1]["vector"], [1, 0, 0])

    def calm(desc):
        desc["model"]["boat"]["wind_force"] = [0, 0, 0]
        desc["model"]["boat"]["current"] = [0, 0, 0]
    with_arrows = first_frame(driver, run / "view.html", "boat-arrows")
    without = first_frame(driver, page_without(run, tmp_path, "calm", calm), "boat-calm")
    differ = np.any(np.abs(with_arrows - without) > 30, axis=2).mean()
    assert differ > 0.001, f"the wind and current arrows are not drawn ({differ:.4%} differs)"


# --- Optimisation goals: the landing pad and the dock.

@needs_bin
@pytest.mark.parametrize("problem, kind", [("helicopter_landing", "landing_pad"), ("boat_docking", "dock")])
def test_optimize_view_draws_the_goal(tmp_path, driver, problem, kind):
    """The final pose of the problem file reaches the re-simulation's model.json as the
    goal (a free height at the water's 0), the page plays, and draws it: the same page
    without the goal differs."""
    out = tmp_path / problem
    path = ROOT / "examples" / "problems" / f"{problem}.json"
    r = marsden("optimize", path, "--out", out, "--view")
    assert r.returncode == 0, r.stderr
    final = json.loads(path.read_text())["final_state"]
    goal = json.loads((out / "resimulation" / "model.json").read_text())["environment"]["goal"]
    assert goal["kind"] == kind
    assert goal["position"] == [0.0 if x is None else x for x in final["position"]]
    yaw = final["heading"] if "heading" in final else final["orientation"]["rpy"][2]
    assert np.allclose(goal["quaternion"], [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)])
    # The optimum ends at the goal.
    end = np.load(out / "resimulation" / "trajectory.npz")["position"][-1]
    assert np.allclose(end[:2], goal["position"][:2], atol=1e-6)
    check_page_plays(driver, out / "view.html", kind)

    def no_goal(desc):
        del desc["environment"]["goal"]
    drawn = first_frame(driver, out / "view.html", f"{kind}-with")
    bare = first_frame(driver, page_without(out / "resimulation", tmp_path, "bare", no_goal), f"{kind}-without")
    differ = np.any(np.abs(drawn - bare) > 30, axis=2).mean()
    assert differ > 0.001, f"the {kind} is not drawn ({differ:.4%} of the canvas differs)"


def test_non_finite_poses_hold_the_last_finite_one_with_a_warning(tmp_path):
    """A body whose pose is not finite at some rows (a user's body expression singular there)
    is drawn at its nearest earlier finite pose, and the page says which body and when."""
    run = fake_run(tmp_path / "run", bodies=3, seconds=1.0, fps=10)
    with np.load(run / "trajectory.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["position"][4:7, 1, 0] = np.nan
    arrays["quaternion"][0:2, 2, 3] = np.inf
    np.savez(run / "trajectory.npz", **arrays)
    data = viewer.scene_data(run)
    assert np.isfinite(data["poses"]).all()
    assert np.array_equal(data["poses"][4:7, 1, :3], np.tile(arrays["position"][3, 1], (3, 1)))
    assert np.array_equal(data["poses"][0:2, 2, 3:], np.tile(arrays["quaternion"][2, 2], (2, 1)))
    assert np.array_equal(data["poses"][:, 0, :3], arrays["position"][:, 0])
    assert data["warnings"] == [
        "body 'b1': its pose is not finite at 3 of 11 rows (first at t = 0.4 s); the nearest "
        "earlier finite pose is shown there",
        "body 'b2': its pose is not finite at 2 of 11 rows (first at t = 0 s); the nearest "
        "earlier finite pose is shown there"]
