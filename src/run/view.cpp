#include "marsden/run/view.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "family.hpp"
#include "view_parts.hpp"

namespace marsden::run {

using record::Json;

namespace {

class Forward final : public sim::Recorder {
 public:
  explicit Forward(sim::Recorder& inner) : inner_(inner) {}
  void begin(const sim::Layout& layout) override { inner_.begin(layout); }
  void row(std::span<const double> values) override { inner_.row(values); }
  void finish(bool ok) override { inner_.finish(ok); }

 private:
  sim::Recorder& inner_;
};

}  // namespace

InertiaShape inertia_shape(double mass, const Mat3& inertia) {
  InertiaShape s;
  if (!(mass > 0.0)) return s;
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(0.5 * (inertia + inertia.transpose()));
  const Vec3 J = eig.eigenvalues();
  Mat3 axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  // Solid ellipsoid: J_1 = m (b^2 + c^2) / 5, so a^2 = 5 (J_2 + J_3 - J_1) / (2 m).
  for (int i = 0; i < 3; ++i)
    s.semi_axes[i] = std::sqrt(std::max(0.0, 2.5 * (J.sum() - 2.0 * J[i]) / mass));
  const Eigen::Quaterniond r(axes);
  s.rotation = Vec4(r.w(), r.x(), r.y(), r.z());
  return s;
}

bool writes_frames(const io::Scene& scene) { return family(scene)->writes_frames(); }

Json view_model(const io::Scene& scene) {
  const std::unique_ptr<Family> f = family(scene);
  UrdfVisuals visuals{scene};
  Json m = f->view_model(visuals);
  Json out = Json::object();
  out.set("format", "marsden-view-1")
      .set("system", scene.system_type)
      .set("source", scene.source)
      .set("scene", scene.file)
      .set("trajectory", "trajectory.npz");
  if (f->writes_frames()) out.set("frames_file", "frames.npz");
  out.set("model", std::move(m));
  if (visuals.warned) out.set("warnings", std::move(visuals.warnings));
  const io::SceneView view = io::parse_scene_view(scene);
  if (!view.obstacles.empty() || !view.goal_kind.empty()) {
    Json obstacles = Json::array();
    for (const control::Obstacle& o : view.obstacles) {
      static constexpr const char* kKind[] = {"sphere", "cylinder", "box", "capsule", "half_space"};
      obstacles.push_back(Json::object()
                              .set("type", kKind[static_cast<int>(o.kind)])
                              .set("name", o.name)
                              .set("center", vec3(o.center))
                              .set("half_size", vec3(o.half_size))
                              .set("a", vec3(o.a))
                              .set("b", vec3(o.b))
                              .set("normal", vec3(o.normal.normalized()))
                              .set("radius", o.radius)
                              .set("margin", o.margin));
    }
    Json environment = Json::object();
    environment.set("dimension", view.dimension).set("obstacles", std::move(obstacles));
    if (!view.goal_kind.empty()) {
      const Eigen::Quaterniond r(view.goal.R);
      environment.set("goal", Json::object()
                                  .set("kind", view.goal_kind)
                                  .set("position", vec3(view.goal.x))
                                  .set("quaternion", vec({r.w(), r.x(), r.y(), r.z()})));
    }
    out.set("environment", std::move(environment));
  }
  return out;
}

std::unique_ptr<sim::Recorder> view_recorder(const io::Scene& scene, sim::Recorder& inner,
                                             const std::filesystem::path& out_dir) {
  if (std::unique_ptr<sim::Recorder> frames = family(scene)->frame_recorder(inner, out_dir))
    return frames;
  return std::make_unique<Forward>(inner);
}

}  // namespace marsden::run
