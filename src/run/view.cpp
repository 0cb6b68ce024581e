#include "marsden/run/view.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <system_error>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "marsden/tree/dynamics.hpp"

namespace marsden::run {

using record::Json;

namespace {

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

Json vehicle_model(const io::Scene& scene) {
  const auto& v = std::get<io::VehicleScene>(scene.system);
  const Mat6& I = v.model->inertia();
  const double mass = I(3, 3);
  Json body = Json::object();
  body.set("name", scene.system_type)
      .set("pose", Json::object().set("position", "position").set("quaternion", "quaternion"))
      .set("geometry", Json::array().push_back(
                           shape_json("ellipsoid", inertia_shape(mass, I.topLeftCorner<3, 3>()),
                                      Vec3::Zero())));
  return Json::object().set("bodies", Json::array().push_back(std::move(body)));
}

Json nonholonomic_model(const io::Scene& scene) {
  Json body = Json::object();
  body.set("name", scene.system_type)
      .set("pose", Json::object().set("planar", "pose"));
  return Json::object().set("ground", true).set("bodies", Json::array().push_back(std::move(body)));
}

Json tree_model(const io::Scene& scene) {
  const tree::Model& model = *std::get<io::TreeScene>(scene.system).model;
  Json frames = Json::array(), links = Json::array(), strings = Json::array();
  for (int k = 0; k < model.num_frames(); ++k) {
    const tree::Frame& f = model.frames()[std::size_t(k)];
    frames.push_back(Json::object().set("name", f.name).set("parent", f.parent));
    links.push_back(Json::array().push_back(f.parent).push_back(k));
  }
  Json bodies = Json::array();
  for (const tree::Mass& m : model.masses()) {
    const InertiaShape s = inertia_shape(m.mass, m.inertia);
    bodies.push_back(Json::object()
                         .set("name", model.frames()[std::size_t(m.frame)].name)
                         .set("pose", Json::object().set("frame", m.frame))
                         .set("mass", m.mass)
                         .set("geometry", Json::array().push_back(shape_json("ellipsoid", s, m.com))));
  }
  for (const tree::Constraint& c : model.constraints())
    if (c.kind == tree::ConstraintKind::Distance)
      strings.push_back(Json::array().push_back(c.frame_a).push_back(c.frame_b));
  return Json::object()
      .set("frames", std::move(frames))
      .set("links", std::move(links))
      .set("strings", std::move(strings))
      .set("bodies", std::move(bodies));
}

Json maximal_model(const io::Scene& scene) {
  const maximal::Model& model = *std::get<io::MaximalScene>(scene.system).model;
  Json bodies = Json::array();
  int b = 0;
  for (const maximal::Body& body : model.bodies()) {
    const InertiaShape s = inertia_shape(body.mass, body.inertia);
    bodies.push_back(Json::object()
                         .set("name", body.name)
                         .set("pose", Json::object().set("position", "position")
                                          .set("quaternion", "quaternion").set("index", b++))
                         .set("mass", body.mass)
                         .set("geometry", Json::array().push_back(shape_json("box", s, Vec3::Zero()))));
  }
  // Each joint as two segments meeting at its anchor: parent body (or world) to anchor,
  // anchor to child body, with the anchor given in each side's frame.
  Json joints = Json::array();
  for (const maximal::Joint& j : model.joints())
    joints.push_back(Json::object()
                         .set("name", j.name)
                         .set("parent", j.parent)
                         .set("child", j.child)
                         .set("p_parent", vec3(j.p_parent))
                         .set("p_child", vec3(j.p_child)));
  return Json::object().set("bodies", std::move(bodies)).set("joints", std::move(joints));
}

// Tree frames: every row's q through the frame kinematics, each frame's pose streamed into
// frames.npz (position (rows, frames, 3), quaternion (rows, frames, 4)) as the trajectory is,
// so memory stays flat however long the run.
class TreeFrameRecorder final : public sim::Recorder {
 public:
  TreeFrameRecorder(const tree::Model& model, sim::Recorder& inner, std::filesystem::path out)
      : model_(model), data_(model), inner_(inner), frames_(std::move(out), "frames", false) {}
  void begin(const sim::Layout& layout) override {
    inner_.begin(layout);
    const std::size_t f = std::size_t(model_.num_frames());
    sim::Layout poses;
    poses.columns.assign(1 + 7 * f, "");
    poses.columns[0] = "t";
    sim::ArrayLayout position{"position", {f, 3}, {}}, quaternion{"quaternion", {f, 4}, {}};
    for (std::size_t k = 0; k < f; ++k) {
      for (int i = 0; i < 3; ++i) position.columns.push_back(int(1 + 7 * k) + i);
      for (int i = 3; i < 7; ++i) quaternion.columns.push_back(int(1 + 7 * k) + i);
    }
    poses.arrays = {std::move(position), std::move(quaternion)};
    row_.assign(poses.columns.size(), 0.0);
    frames_.begin(poses);
  }
  void row(std::span<const double> values) override {
    inner_.row(values);
    const int n = model_.num_coords();
    const tree::VecX q = Eigen::Map<const tree::VecX>(values.data() + 1, n);
    tree::frame_kinematics(model_, data_, q, tree::VecX::Zero(n), 0);
    row_[0] = values[0];
    std::size_t i = 1;
    for (const SE3& g : data_.g_s) {
      const Eigen::Quaterniond r(g.R);
      for (const double v : {g.x.x(), g.x.y(), g.x.z(), r.w(), r.x(), r.y(), r.z()}) row_[i++] = v;
    }
    frames_.row(row_);
  }
  void finish(bool ok) override {
    inner_.finish(ok);
    frames_.finish(ok);
  }

 private:
  const tree::Model& model_;
  tree::Data data_;
  sim::Recorder& inner_;
  record::FileRecorder frames_;
  std::vector<double> row_;
};

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

Json view_model(const io::Scene& scene) {
  Json m;
  if (std::holds_alternative<io::VehicleScene>(scene.system)) m = vehicle_model(scene);
  else if (std::holds_alternative<io::NonholonomicScene>(scene.system)) m = nonholonomic_model(scene);
  else if (std::holds_alternative<io::TreeScene>(scene.system)) m = tree_model(scene);
  else m = maximal_model(scene);
  Json out = Json::object();
  out.set("format", "marsden-view-1")
      .set("system", scene.system_type)
      .set("source", scene.source)
      .set("scene", scene.file)
      .set("trajectory", "trajectory.npz");
  if (std::holds_alternative<io::TreeScene>(scene.system)) out.set("frames_file", "frames.npz");
  out.set("model", std::move(m));
  if (!scene.view_obstacles.empty()) {
    Json obstacles = Json::array();
    for (const control::Obstacle& o : scene.view_obstacles) {
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
    out.set("environment", Json::object()
                               .set("dimension", scene.view_dimension)
                               .set("obstacles", std::move(obstacles)));
  }
  return out;
}

std::unique_ptr<sim::Recorder> view_recorder(const io::Scene& scene, sim::Recorder& inner,
                                             const std::filesystem::path& out_dir) {
  if (const auto* t = std::get_if<io::TreeScene>(&scene.system))
    return std::make_unique<TreeFrameRecorder>(*t->model, inner, out_dir);
  return std::make_unique<Forward>(inner);
}

}  // namespace marsden::run
