// Shared pieces of the player's model and frames (view_parts.hpp).
#include "view_parts.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <Eigen/Geometry>

#include "marsden/io/urdf.hpp"

namespace marsden::run {

using record::Json;

Json vec(std::initializer_list<double> v) { return Json::array(std::span<const double>(v.begin(), v.size())); }
Json vec3(const Vec3& v) { return vec({v.x(), v.y(), v.z()}); }
Json quat(const Vec4& q) { return vec({q[0], q[1], q[2], q[3]}); }

Json shape_json(const char* shape, const InertiaShape& s, const Vec3& offset) {
  return Json::object()
      .set("shape", shape)
      .set("semi_axes", vec3(s.semi_axes))
      .set("rotation", quat(s.rotation))
      .set("offset", vec3(offset));
}

Json UrdfVisuals::visual_json(const UrdfVisual& v, const SE3& g_body_visual) {
  const Eigen::Quaterniond r(g_body_visual.R);
  Json out = Json::object();
  Vec3 semi_axes = Vec3::Zero();
  switch (v.shape) {
    case UrdfShape::Box: out.set("shape", "box"); semi_axes = 0.5 * v.size; break;
    case UrdfShape::Sphere: out.set("shape", "ellipsoid"); semi_axes.setConstant(v.radius); break;
    case UrdfShape::Cylinder:  // axis along its z
      out.set("shape", "cylinder");
      semi_axes = Vec3(v.radius, v.radius, 0.5 * v.length);
      break;
    case UrdfShape::Mesh: out.set("shape", "mesh").set("scale", vec3(v.scale)); break;
    // MJCF shapes the player has no primitive for, drawn by their nearest one: a capsule as
    // the cylinder that holds it, a plane as a thin box (10 m when MJCF says infinite).
    case UrdfShape::Capsule:
      out.set("shape", "cylinder");
      semi_axes = Vec3(v.radius, v.radius, 0.5 * v.length + v.radius);
      break;
    case UrdfShape::Ellipsoid: out.set("shape", "ellipsoid"); semi_axes = v.size; break;
    case UrdfShape::Plane:
      out.set("shape", "box");
      semi_axes = Vec3(v.size.x() > 0.0 ? v.size.x() : 5.0, v.size.y() > 0.0 ? v.size.y() : 5.0,
                       1e-3);
      break;
  }
  if (v.has_color) {
    const auto channel = [&](int i) { return int(std::lround(255.0 * v.rgba[i])); };
    out.set("color", (channel(0) << 16) | (channel(1) << 8) | channel(2)).set("opacity", v.rgba[3]);
  }
  return out.set("semi_axes", vec3(semi_axes))
      .set("rotation", vec({r.w(), r.x(), r.y(), r.z()}))
      .set("offset", vec3(g_body_visual.x))
      .set("visual", true);
}

UrdfVisuals::UrdfVisuals(const io::Scene& s) : scene(s) {
  if (!scene.urdf) return;
  for (const UrdfLink& link : scene.urdf->links) {
    std::vector<std::string>& files = mesh_file.emplace_back();
    std::vector<std::string> problems;
    bool any = false;
    for (const UrdfVisual& v : link.visuals) {
      files.emplace_back();
      if (v.shape != UrdfShape::Mesh) {
        any = true;
        continue;
      }
      const std::filesystem::path file = io::resolve_mesh_file(v.filename, scene.urdf_file);
      std::string ext = file.extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(),
                     [](unsigned char c) { return char(std::tolower(c)); });
      std::string problem;
      if (file.empty()) problem = "not found";
      else if (ext != ".stl" && ext != ".obj") problem = "only STL and OBJ meshes are drawn";
      if (problem.empty()) {
        files.back() = file.string();
        any = true;
      } else {
        problems.push_back("mesh \"" + v.filename + "\" not drawn: " + problem);
      }
    }
    const bool substitute =
        !any && std::any_of(link.collisions.begin(), link.collisions.end(),
                            [](const UrdfVisual& c) { return c.shape != UrdfShape::Mesh; });
    from_collision.push_back(substitute ? 1 : 0);
    if (substitute) substituted.push_back(link.name);
    for (const std::string& p : problems) {
      if (substitute) continue;
      warnings.push_back("link \"" + link.name + "\": " + p);
      warned = true;
    }
  }
  if (!substituted.empty()) {
    std::string names;
    for (const std::string& n : substituted) names += (names.empty() ? "" : ", ") + n;
    warnings.push_back(std::to_string(substituted.size()) +
                       " links drawn from their <collision> geometry, their meshes not "
                       "being STL or OBJ files found: " + names);
    warned = true;
  }
}

bool UrdfVisuals::drawn(int link, std::size_t k) const {
  const UrdfVisual& v = scene.urdf->links[std::size_t(link)].visuals[k];
  return v.shape != UrdfShape::Mesh || !mesh_file[std::size_t(link)][k].empty();
}
bool UrdfVisuals::any_drawn(const std::vector<int>& links) const {
  for (const int i : links) {
    if (from_collision[std::size_t(i)]) return true;
    for (std::size_t k = 0; k < scene.urdf->links[std::size_t(i)].visuals.size(); ++k)
      if (drawn(i, k)) return true;
  }
  return false;
}

FrameRecorder::FrameRecorder(std::size_t frames, sim::Recorder& inner, std::filesystem::path out)
    : frames_(frames), inner_(inner), file_(std::move(out), "frames", false) {}

void FrameRecorder::begin(const sim::Layout& layout) {
  inner_.begin(layout);
  sim::Layout poses;
  poses.columns.assign(1 + 7 * frames_, "");
  poses.columns[0] = std::string("t");  // moved: GCC 12 -Wrestrict misfires on assign
  sim::ArrayLayout position{"position", {frames_, 3}, {}};
  sim::ArrayLayout quaternion{"quaternion", {frames_, 4}, {}};
  for (std::size_t k = 0; k < frames_; ++k) {
    for (int i = 0; i < 3; ++i) position.columns.push_back(int(1 + 7 * k) + i);
    for (int i = 3; i < 7; ++i) quaternion.columns.push_back(int(1 + 7 * k) + i);
  }
  poses.arrays = {std::move(position), std::move(quaternion)};
  row_.assign(poses.columns.size(), 0.0);
  file_.begin(poses);
}
void FrameRecorder::row(std::span<const double> values) {
  inner_.row(values);
  row_[0] = values[0];
  poses(values, std::span<double>(row_).subspan(1));
  file_.row(row_);
}
void FrameRecorder::finish(bool ok) {
  inner_.finish(ok);
  file_.finish(ok);
}

void FrameRecorder::put(const Vec3& x, const Mat3& R, double* out) {
  const Eigen::Quaterniond r(R);
  for (const double v : {x.x(), x.y(), x.z(), r.w(), r.x(), r.y(), r.z()}) *out++ = v;
}

}  // namespace marsden::run
