// Pieces of model.json and frames.npz (run/view.hpp) that several families' player models
// share: numbers as JSON arrays, shapes, a URDF's drawable visuals, the frame recorder.
#pragma once

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "marsden/io/scene.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/view.hpp"
#include "marsden/urdf.hpp"

namespace marsden::run {

record::Json vec(std::initializer_list<double> v);
record::Json vec3(const Vec3& v);
record::Json quat(const Vec4& q);
// {"shape", "semi_axes", "rotation", "offset"}: one drawn shape in its body's frame.
record::Json shape_json(const char* shape, const InertiaShape& s, const Vec3& offset);

// The visuals a page can draw: primitives, and meshes whose file exists and is STL or OBJ
// (resolved once, the others listed as warnings). A link with none of those but with
// primitive <collision> geometry is drawn from that instead (example-robot-data's robots
// ship COLLADA meshes); a rigid body with nothing to draw keeps its inertia shape.
struct UrdfVisuals {
  const io::Scene& scene;
  std::vector<std::vector<std::string>> mesh_file;  // per link and visual; empty: not drawn
  std::vector<char> from_collision;                 // per link
  std::vector<std::string> substituted;             // links drawn from their <collision>
  record::Json warnings = record::Json::array();
  bool warned = false;

  explicit UrdfVisuals(const io::Scene& s);
  bool drawn(int link, std::size_t k) const;
  bool any_drawn(const std::vector<int>& links) const;

  // The drawn visuals of `links`, each in the body frame: g_body_link(i) * origin.
  template <class BodyOfLink>
  record::Json geometry(const std::vector<int>& links, BodyOfLink g_body_link) const {
    record::Json out = record::Json::array();
    for (const int i : links) {
      const UrdfLink& link = scene.urdf->links[std::size_t(i)];
      if (from_collision[std::size_t(i)]) {
        for (const UrdfVisual& c : link.collisions)
          if (c.shape != UrdfShape::Mesh) out.push_back(visual_json(c, g_body_link(i) * c.origin));
        continue;
      }
      for (std::size_t k = 0; k < link.visuals.size(); ++k) {
        if (!drawn(i, k)) continue;
        record::Json shape = visual_json(link.visuals[k], g_body_link(i) * link.visuals[k].origin);
        if (link.visuals[k].shape == UrdfShape::Mesh)
          shape.set("file", mesh_file[std::size_t(i)][k]);
        out.push_back(std::move(shape));
      }
    }
    return out;
  }

 private:
  static record::Json visual_json(const UrdfVisual& v, const SE3& g_body_visual);
};

// Poses streamed into frames.npz (position (rows, frames, 3), quaternion (rows, frames, 4))
// as the trajectory is, so memory stays flat however long the run; `poses` gives a row's
// (x, y, z, qw, qx, qy, qz) per frame from the trajectory row.
class FrameRecorder : public sim::Recorder {
 public:
  FrameRecorder(std::size_t frames, sim::Recorder& inner, std::filesystem::path out);
  void begin(const sim::Layout& layout) override;
  void row(std::span<const double> values) override;
  void finish(bool ok) override;

 protected:
  virtual void poses(std::span<const double> values, std::span<double> out) = 0;
  static void put(const Vec3& x, const Mat3& R, double* out);

 private:
  std::size_t frames_;
  sim::Recorder& inner_;
  record::FileRecorder file_;
  std::vector<double> row_;
};

}  // namespace marsden::run
