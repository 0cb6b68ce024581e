// Marsden's player: draws the bodies of a run at the poses it recorded (docs/viewer.md).
(function () {
  "use strict";
  const THREE = MeshCat.THREE;
  const D = MARSDEN_DATA;
  const decode = (s) => {
    const bytes = Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
    return new Float32Array(bytes.buffer);
  };
  const t = decode(D.t), poses = decode(D.poses), nb = D.bodies.length, nf = D.frames;
  const points = D.points ? decode(D.points) : null;
  const angles = D.angles ? decode(D.angles) : null;
  const angle = (f, k) => angles[f * D.nangles + k];
  const pose = (f, b) => poses.subarray((f * nb + b) * 7, (f * nb + b) * 7 + 7);
  const point = (f, k) => points.subarray((f * D.npoints + k) * 3, (f * D.npoints + k) * 3 + 3);

  // Extent of the motion: sets the camera, the ground and the size of shapeless bodies.
  const box = new THREE.Box3();
  for (let f = 0; f < nf; ++f) {
    for (let b = 0; b < nb; ++b) box.expandByPoint(new THREE.Vector3(...pose(f, b).subarray(0, 3)));
    if (points) for (let k = 0; k < D.npoints; ++k) box.expandByPoint(new THREE.Vector3(...point(f, k)));
  }
  if (box.isEmpty()) box.expandByPoint(new THREE.Vector3());
  const centre = box.getCenter(new THREE.Vector3());
  // At least a few times the largest body, so that a body turning in place is seen whole.
  let largest = 0;
  for (const b of D.bodies)
    for (const g of b.geometry) largest = Math.max(largest, ...g.semi_axes.map((s, i) => s + Math.abs(g.offset[i])));
  const extent = Math.max(box.getSize(new THREE.Vector3()).length(), 6 * largest, 1e-3);

  const canvas = document.getElementById("scene");
  const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf8f8f8);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x808080, 0.8));
  const sun = new THREE.DirectionalLight(0xffffff, 0.6);
  sun.position.set(1, -2, 3);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(45, 1, extent / 1000, extent * 100);
  camera.up.set(0, 0, 1);

  const ground = new THREE.GridHelper(2 * extent, 20, 0x999999, 0xdddddd);
  ground.rotation.x = Math.PI / 2;
  ground.position.set(centre.x, centre.y, D.ground ? 0 : box.min.z);
  scene.add(ground);
  scene.add(new THREE.AxesHelper(0.1 * extent));

  // Bodies: each geometry at its offset and axes in the body frame. Inertia shapes are a
  // unit sphere or cube scaled to the semi-axes (thickened to 15 % of the largest, a
  // point mass a small sphere); "visual" shapes (URDF <visual>, vehicle parts) are drawn
  // as they are: cylinders along their z, meshes from their triangles.
  const palette = [0x3b75af, 0xef8636, 0x519e3e, 0xc53a32, 0x8d6ab8, 0x84584e, 0xd57fbe];
  const small = 0.02 * extent;
  const materials = new Map();
  const materialOf = (color, opacity) => {
    const key = `${color}/${opacity}`;
    if (!materials.has(key))
      materials.set(key, new THREE.MeshStandardMaterial({ color, roughness: 0.6, side: THREE.DoubleSide,
                                                          transparent: opacity < 1, opacity }));
    return materials.get(key);
  };
  function shapeMesh(g, color) {
    let s = g.visual ? g.semi_axes.slice() : g.semi_axes.map((x) => Math.max(x, 0.15 * Math.max(...g.semi_axes)));
    let geometry;
    if (g.shape === "mesh") {
      geometry = new THREE.BufferGeometry();
      geometry.setAttribute("position", new THREE.BufferAttribute(decode(g.triangles), 3));
      geometry.computeVertexNormals();
      s = g.scale;
    } else if (g.shape === "cylinder") {  // three.js's cylinders stand along y
      geometry = new THREE.CylinderGeometry(1, 1, 2, 32).rotateX(Math.PI / 2);
    } else if (g.shape === "box") {
      geometry = new THREE.BoxGeometry(2, 2, 2);
    } else {
      geometry = new THREE.SphereGeometry(1, 24, 16);
    }
    if (Math.max(...s.map(Math.abs)) <= 0) s = [small, small, small];
    const mesh = new THREE.Mesh(geometry, materialOf(g.color !== undefined ? g.color : color,
                                                     g.opacity !== undefined ? g.opacity : 1));
    mesh.scale.set(...s);
    mesh.position.set(...g.offset);
    mesh.quaternion.set(g.rotation[1], g.rotation[2], g.rotation[3], g.rotation[0]);
    return mesh;
  }
  const bodies = D.bodies.map((b, i) => {
    const group = new THREE.Group();
    for (const g of b.geometry) group.add(shapeMesh(g, palette[i % palette.length]));
    group.add(new THREE.AxesHelper(Math.max(small * 3, ...b.geometry.map((g) => 1.5 * Math.max(...g.semi_axes)))));
    scene.add(group);
    return group;
  });

  // Parts carried by a body and turned, outermost first, about their axes by recorded
  // angles: wheels rolling and steering, rotors turning, the helicopter's rotor tilting.
  const parts = (D.parts || []).map((p) => {
    let parent = new THREE.Group();
    parent.position.set(...p.offset);
    bodies[p.body].add(parent);
    const joints = p.turns.map((turn) => {
      const joint = new THREE.Group();
      parent.add(joint);
      parent = joint;
      return { joint, axis: new THREE.Vector3(...turn.axis), k: turn.angle };
    });
    for (const g of p.geometry) parent.add(shapeMesh(g, palette[p.body % palette.length]));
    return joints;
  });
  function turnParts(f) {
    for (const joints of parts)
      for (const j of joints) j.joint.quaternion.setFromAxisAngle(j.axis, angle(f, j.k));
  }

  // World arrows at the first body (the boat's wind and current), labelled.
  function label(text, color) {
    const c = document.createElement("canvas");
    c.width = 256; c.height = 64;
    const ctx = c.getContext("2d");
    ctx.font = "bold 30px sans-serif";
    ctx.fillStyle = "#" + color.toString(16).padStart(6, "0");
    ctx.fillText(text, 4, 42);
    const sprite = new THREE.Sprite(new THREE.SpriteMaterial({ map: new THREE.CanvasTexture(c), depthTest: false }));
    sprite.scale.set(0.2 * extent, 0.05 * extent, 1);
    return sprite;
  }
  const arrows = (D.arrows || []).map((a) => {
    const group = new THREE.Group();
    const dir = new THREE.Vector3(...a.vector);
    group.add(new THREE.ArrowHelper(dir, new THREE.Vector3(), a.length, a.color, 0.25 * a.length, 0.12 * a.length));
    const tag = label(a.label, a.color);
    tag.position.copy(dir.clone().multiplyScalar(1.1 * a.length)).add(new THREE.Vector3(0, 0, 0.03 * extent));
    group.add(tag);
    scene.add(group);
    return { group, a };
  });
  function placeArrows(f) {
    for (const { group, a } of arrows) {
      const p = pose(f, 0);
      group.position.set(p[0] + a.at[0], p[1] + a.at[1], a.water ? a.at[2] : p[2] + a.at[2]);
    }
  }

  if (D.warnings) document.getElementById("warnings").textContent = "not drawn: " + D.warnings.join("; ");

  // The boat's water plane at z = 0.
  if (D.system === "boat") {
    const water = new THREE.Mesh(new THREE.PlaneGeometry(2 * extent, 2 * extent),
      new THREE.MeshStandardMaterial({ color: 0x4a90c8, transparent: true, opacity: 0.3, side: THREE.DoubleSide }));
    water.position.set(centre.x, centre.y, 0);
    scene.add(water);
  }

  // An optimisation's obstacles (model.json "environment", from the problem file), and the
  // start and the end of the path. A planar problem's obstacles stand on the ground, a
  // spatial problem's vertical cylinders and planes span the scene.
  if (D.environment && nb > 0) {
    const planar = D.environment.dimension === 2;
    const rock = new THREE.MeshStandardMaterial({ color: 0x8a7f72, transparent: true, opacity: 0.5,
                                                  side: THREE.DoubleSide });
    const height = planar ? Math.max(0.1 * extent, 0.5) : 2 * extent;
    const up = new THREE.Vector3(0, 1, 0);
    const add = (geometry, position, quaternion) => {
      const mesh = new THREE.Mesh(geometry, rock);
      mesh.position.copy(position);
      if (quaternion) mesh.quaternion.copy(quaternion);
      scene.add(mesh);
    };
    for (const o of D.environment.obstacles) {
      const c = new THREE.Vector3(...o.center);
      if (planar) c.z = o.type === "half_space" ? height / 2 : c.z;
      if (o.type === "sphere") {
        add(new THREE.SphereGeometry(o.radius, 24, 16), c);
      } else if (o.type === "cylinder") {  // vertical axis through the centre
        c.z = planar ? height / 2 : centre.z;
        add(new THREE.CylinderGeometry(o.radius, o.radius, height, 32), c,
            new THREE.Quaternion().setFromUnitVectors(up, new THREE.Vector3(0, 0, 1)));
      } else if (o.type === "box") {
        const h = planar ? [o.half_size[0], o.half_size[1], height / 2] : o.half_size;
        if (planar) c.z = height / 2;
        add(new THREE.BoxGeometry(2 * h[0], 2 * h[1], 2 * h[2]), c);
      } else if (o.type === "capsule") {
        const a = new THREE.Vector3(...o.a), b = new THREE.Vector3(...o.b);
        const axis = b.clone().sub(a);
        add(new THREE.CylinderGeometry(o.radius, o.radius, axis.length(), 24),
            a.clone().add(b).multiplyScalar(0.5),
            new THREE.Quaternion().setFromUnitVectors(up, axis.clone().normalize()));
        for (const end of [a, b]) add(new THREE.SphereGeometry(o.radius, 16, 12), end);
      } else if (o.type === "half_space") {  // its boundary plane, facing the free side
        add(new THREE.PlaneGeometry(2 * extent, planar ? height : 2 * extent), c,
            new THREE.Quaternion().setFromUnitVectors(new THREE.Vector3(0, 0, 1),
                                                      new THREE.Vector3(...o.normal)));
      }
    }
    const marker = (f, color) => {
      const m = new THREE.Mesh(new THREE.SphereGeometry(0.015 * extent, 16, 12),
                               new THREE.MeshStandardMaterial({ color }));
      m.position.set(...pose(f, 0).subarray(0, 3));
      scene.add(m);
    };
    marker(0, 0x2ca02c);       // start
    marker(nf - 1, 0xd62728);  // end of the optimal path
  }

  // The goal of an optimisation at its final pose: the helicopter's landing pad (a
  // platform up to under the body, marked H), the boat's dock (a pier along the berth's
  // port side and the hull's outline on the water).
  if (D.environment && D.environment.goal && nb > 0) {
    const g = D.environment.goal;
    const s = D.bodies[0].geometry[0].semi_axes;
    const group = new THREE.Group();
    group.position.set(...g.position);
    group.quaternion.set(g.quaternion[1], g.quaternion[2], g.quaternion[3], g.quaternion[0]);
    const put = (geometry, color, x, y, z) => {
      const m = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({ color }));
      m.position.set(x, y, z);
      group.add(m);
    };
    if (g.kind === "landing_pad") {
      const below = Math.min(...s), r = 3 * Math.max(...s);
      const height = Math.max(g.position[2] - below, 0.02);
      put(new THREE.CylinderGeometry(r, r, height, 48).rotateX(Math.PI / 2), 0x9a9a9a, 0, 0, -below - height / 2);
      const mark = 0.5 * r, w = 0.12 * r, z = -below + 0.005;
      for (const y of [-mark / 2, mark / 2]) put(new THREE.BoxGeometry(mark, w, 0.01), 0xffffff, 0, y, z);
      put(new THREE.BoxGeometry(w, mark / 2, 0.01), 0xffffff, 0, 0, z);
    } else {
      put(new THREE.BoxGeometry(3.2 * s[0], 1.0, 1.0), 0x8b6a43, 0, s[1] + 0.8, -g.position[2]);
      const outline = new THREE.BufferGeometry().setFromPoints(
        [[1, 1], [-1, 1], [-1, -1], [1, -1]].map(([a, b]) => new THREE.Vector3(a * s[0], b * s[1], 0.02 - g.position[2])));
      group.add(new THREE.LineLoop(outline, new THREE.LineBasicMaterial({ color: 0xffffff })));
    }
    scene.add(group);
  }

  // Links between frames (trees) and joint segments (maximal), redrawn every frame.
  const segCount = (D.links ? D.links.length : 0) + (D.joints ? 2 * D.joints.length : 0);
  const segPositions = new Float32Array(segCount * 6);
  const segGeometry = new THREE.BufferGeometry();
  segGeometry.setAttribute("position", new THREE.BufferAttribute(segPositions, 3));
  scene.add(new THREE.LineSegments(segGeometry, new THREE.LineBasicMaterial({ color: 0x222222 })));

  const worldOf = (f, b, local) => {
    if (b < 0) return new THREE.Vector3(...local);
    const p = pose(f, b);
    const q = new THREE.Quaternion(p[4], p[5], p[6], p[3]);
    return new THREE.Vector3(...local).applyQuaternion(q).add(new THREE.Vector3(p[0], p[1], p[2]));
  };
  function drawSegments(f) {
    let i = 0;
    const put = (v) => { segPositions[i++] = v.x; segPositions[i++] = v.y; segPositions[i++] = v.z; };
    for (const [a, b] of D.links || []) {
      put(a < 0 ? new THREE.Vector3() : new THREE.Vector3(...point(f, a)));
      put(new THREE.Vector3(...point(f, b)));
    }
    for (const j of D.joints || []) {
      const anchor = worldOf(f, j.parent, j.p_parent);
      put(j.parent < 0 ? anchor : worldOf(f, j.parent, [0, 0, 0])); put(anchor);
      put(anchor); put(worldOf(f, j.child, [0, 0, 0]));
    }
    segGeometry.attributes.position.needsUpdate = true;
    segGeometry.computeBoundingSphere();
  }

  // Trail of the first body's path up to the current time.
  const trailPositions = new Float32Array(nf * 3);
  for (let f = 0; f < nf && nb > 0; ++f) trailPositions.set(pose(f, 0).subarray(0, 3), 3 * f);
  const trailGeometry = new THREE.BufferGeometry();
  trailGeometry.setAttribute("position", new THREE.BufferAttribute(trailPositions, 3));
  const trail = new THREE.Line(trailGeometry, new THREE.LineBasicMaterial({ color: 0xc53a32 }));
  scene.add(trail);

  // Orbit camera: drag turns azimuth and elevation about the target, the wheel zooms.
  const orbit = { azimuth: -Math.PI / 3, elevation: 0.5, distance: 1.6 * extent, target: centre.clone() };
  let dragging = null;
  canvas.addEventListener("pointerdown", (e) => { dragging = [e.clientX, e.clientY]; });
  window.addEventListener("pointerup", () => { dragging = null; });
  window.addEventListener("pointermove", (e) => {
    if (!dragging) return;
    orbit.azimuth -= 0.01 * (e.clientX - dragging[0]);
    orbit.elevation = Math.min(1.55, Math.max(-1.55, orbit.elevation + 0.01 * (e.clientY - dragging[1])));
    dragging = [e.clientX, e.clientY];
    render();
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    orbit.distance *= Math.exp(0.001 * e.deltaY);
    render();
  }, { passive: false });

  // Strip chart: each series scaled to its own range, with the current time as a cursor.
  const chart = document.getElementById("chart");
  const series = D.chart.map((s) => ({ name: s.name, v: decode(s.values) }));
  function drawChart(f) {
    const w = chart.width = chart.clientWidth, h = chart.height = chart.clientHeight;
    const c = chart.getContext("2d");
    c.fillStyle = "#fff"; c.fillRect(0, 0, w, h);
    const t0 = t[0], t1 = t[nf - 1] > t0 ? t[nf - 1] : t0 + 1;
    const x = (tt) => 40 + (w - 50) * (tt - t0) / (t1 - t0);
    series.forEach((s, k) => {
      let lo = Infinity, hi = -Infinity;
      for (const v of s.v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      const span = hi > lo ? hi - lo : 1;
      c.strokeStyle = "#" + palette[k % palette.length].toString(16).padStart(6, "0");
      c.lineWidth = 1.5;
      c.beginPath();
      for (let i = 0; i < nf; ++i) {
        const y = h - 20 - (h - 40) * (s.v[i] - lo) / span;
        if (i === 0) c.moveTo(x(t[i]), y); else c.lineTo(x(t[i]), y);
      }
      c.stroke();
      c.fillStyle = c.strokeStyle;
      c.fillText(`${s.name} [${lo.toPrecision(4)}, ${hi.toPrecision(4)}]`, 45 + 190 * k, 12);
    });
    c.strokeStyle = "#000"; c.lineWidth = 1;
    c.beginPath(); c.moveTo(x(t[f]), 16); c.lineTo(x(t[f]), h - 4); c.stroke();
  }

  const slider = document.getElementById("time");
  const clock = document.getElementById("clock");
  slider.max = String(nf - 1);
  let frame = 0;
  function render() {
    const f = frame;
    for (let b = 0; b < nb; ++b) {
      const p = pose(f, b);
      bodies[b].position.set(p[0], p[1], p[2]);
      bodies[b].quaternion.set(p[4], p[5], p[6], p[3]);
    }
    drawSegments(f);
    if (angles) turnParts(f);
    placeArrows(f);
    trail.visible = document.getElementById("trail").checked;
    trailGeometry.setDrawRange(0, f + 1);
    if (document.getElementById("follow").checked && nb > 0) orbit.target.set(...pose(f, 0).subarray(0, 3));
    const w = canvas.clientWidth, h = canvas.clientHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    const ce = Math.cos(orbit.elevation);
    camera.position.set(orbit.target.x + orbit.distance * ce * Math.cos(orbit.azimuth),
                        orbit.target.y + orbit.distance * ce * Math.sin(orbit.azimuth),
                        orbit.target.z + orbit.distance * Math.sin(orbit.elevation));
    camera.lookAt(orbit.target);
    renderer.render(scene, camera);
    drawChart(f);
    slider.value = String(f);
    clock.textContent = `t = ${t[f].toFixed(3)} s`;
  }
  function show(f) { frame = Math.max(0, Math.min(nf - 1, f)); render(); }
  slider.addEventListener("input", () => show(Number(slider.value)));
  for (const id of ["follow", "trail"]) document.getElementById(id).addEventListener("change", render);
  window.addEventListener("resize", render);

  // Playback in simulated time: frame chosen from the wall clock times the speed.
  const play = document.getElementById("play");
  let playing = false, startWall = 0, startT = 0;
  function tick(now) {
    if (!playing) return;
    const speed = Number(document.getElementById("speed").value);
    let tt = startT + speed * (now - startWall) / 1000;
    if (tt > t[nf - 1]) {
      if (document.getElementById("loop").checked) { startWall = now; startT = t[0]; tt = t[0]; }
      else { playing = false; play.textContent = "Play"; tt = t[nf - 1]; }
    }
    let f = frame;
    while (f + 1 < nf && t[f + 1] <= tt) ++f;
    if (t[f] > tt) f = 0;
    while (f + 1 < nf && t[f + 1] <= tt) ++f;
    show(f);
    requestAnimationFrame(tick);
  }
  play.addEventListener("click", () => {
    playing = !playing;
    play.textContent = playing ? "Pause" : "Play";
    if (playing) { startWall = performance.now(); startT = t[frame] >= t[nf - 1] ? t[0] : t[frame]; requestAnimationFrame(tick); }
  });
  window.marsdenView = { frames: nf, show, frame: () => frame };
  show(0);
})();
