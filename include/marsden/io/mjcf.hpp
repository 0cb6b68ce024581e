// MJCF files (MuJoCo's XML, docs/mjcf.md): read and validated into the engine-neutral
// description of marsden/urdf.hpp, which the tree and maximal engines turn into their
// models as they do a URDF file's.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "marsden/urdf.hpp"

namespace marsden::io {

// Reads an MJCF file or text. Each body becomes a link, named as the body (unnamed ones
// "body<N>" in file order), the <worldbody> a link "world" (the fixed root). A body with
// hinge and slide joints hangs from its parent by those joints in file order, with a
// massless link "<body>_<joint>" between each two (joint pos and axis in the body frame,
// as MuJoCo); a body without joints is welded to its parent. A <freejoint> (or joint
// type="free") on the one body of <worldbody> makes that body the root with floating_root
// set. Geoms give the body's inertia as MuJoCo derives it (compiler inertiafromgeom) and
// its visuals and collision shapes; motors, option timestep and gravity fill the
// description's MJCF fields. <default> classes, childclass and <include file> (relative to
// the main file's folder; parse_mjcf resolves them against source_name's folder) are
// applied as MuJoCo does.
// Every problem is an InputError naming the file, the element and its line, e.g.
//   arm.xml: <joint "shoulder">: type "ball" is not supported (hinge, slide, free) (line 12).
// Elements that change the dynamics but are not modelled (ball joints, tendons, equality
// constraints, fluid forces, plugins, joint friction loss, ...) are errors; elements that do
// not (sites, cameras, lights, sensors, visual settings, keyframes) are ignored, and those
// a reader may expect to matter (contact pairs and exclusions) are named in
// UrdfModel::warnings.
UrdfModel read_mjcf(const std::filesystem::path& path);
UrdfModel parse_mjcf(std::string_view xml, const std::string& source_name);

}  // namespace marsden::io
