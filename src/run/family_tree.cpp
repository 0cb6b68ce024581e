// The tree systems' run: midpoint VI, Galerkin VI or RK4 on a tree::Model; their
// integrator, coordinates and constraints, player model and frames (family.hpp).
#include "family.hpp"
#include "marsden/tree/dynamics.hpp"

namespace marsden::run {

using record::Json;

namespace {

Json tree_model(const io::Scene& scene, const tree::Model& model, const UrdfVisuals& visuals) {
  Json frames = Json::array(), links = Json::array(), strings = Json::array();
  for (int k = 0; k < model.num_frames(); ++k) {
    const tree::Frame& f = model.frames()[std::size_t(k)];
    frames.push_back(Json::object().set("name", f.name).set("parent", f.parent));
    links.push_back(Json::array().push_back(f.parent).push_back(k));
  }
  Json bodies = Json::array();
  // A URDF's rigid body drawn by its <visual>s (one body per link, at the link's frame,
  // which keeps the link's name) rather than by the ellipsoid of its inertia.
  std::vector<bool> drawn_frame(std::size_t(model.num_frames()), false);
  if (scene.urdf) {
    const UrdfRigidBodies rb = rigid_bodies(*scene.urdf);
    for (const UrdfRigidBody& body : rb.bodies) {
      if (!visuals.any_drawn(body.links)) continue;
      for (const int i : body.links) {
        const UrdfLink& link = scene.urdf->links[std::size_t(i)];
        int frame = -1;
        for (int k = 0; k < model.num_frames(); ++k)
          if (model.frames()[std::size_t(k)].name == link.name) frame = k;
        if (frame < 0) continue;
        drawn_frame[std::size_t(frame)] = true;
        if (!visuals.any_drawn({i})) continue;
        const auto in_link_frame = [](int) { return SE3::identity(); };
        bodies.push_back(Json::object()
                             .set("name", link.name)
                             .set("pose", Json::object().set("frame", frame))
                             .set("geometry", visuals.geometry({i}, in_link_frame)));
      }
    }
  }
  for (const tree::Mass& m : model.masses()) {
    if (drawn_frame[std::size_t(m.frame)]) continue;
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

// Tree frames: every row's q through the frame kinematics.
class TreeFrameRecorder final : public FrameRecorder {
 public:
  TreeFrameRecorder(const tree::Model& model, sim::Recorder& inner, std::filesystem::path out)
      : FrameRecorder(std::size_t(model.num_frames()), inner, std::move(out)),
        model_(model), data_(model) {}

 protected:
  void poses(std::span<const double> values, std::span<double> out) override {
    const int n = model_.num_coords();
    const tree::VecX q = Eigen::Map<const tree::VecX>(values.data() + 1, n);
    tree::frame_kinematics(model_, data_, q, tree::VecX::Zero(n), 0);
    std::size_t i = 0;
    for (const SE3& g : data_.g_s) put(g.x, g.R, out.data() + 7 * i++);
  }

 private:
  const tree::Model& model_;
  tree::Data data_;
};

class TreeFamily final : public Family {
 public:
  explicit TreeFamily(const io::Scene& scene)
      : Family(scene), ts_(std::get<io::TreeScene>(scene.system)) {}

  std::unique_ptr<sim::System> make_system() const override { return sim::make_tree_system(ts_); }
  Json integrator() const override {
    const auto lagrangian = [](tree::LagrangianAlgorithm a) {
      return a == tree::LagrangianAlgorithm::Spatial        ? "spatial"
             : a == tree::LagrangianAlgorithm::PaperCached ? "paper_cached"
                                                            : "paper_uncached";
    };
    Json out = Json::object();
    if (ts_.method == sim::TreeMethod::Midpoint) {
      const auto& m = ts_.midpoint;
      out.set("method", "midpoint")
          .set("alpha", m.alpha)
          .set("tolerance", m.newton.tolerance)
          .set("max_iterations", m.newton.max_iterations)
          .set("lagrangian", lagrangian(m.algorithm));
    } else if (ts_.method == sim::TreeMethod::Galerkin) {
      const auto& g = ts_.galerkin;
      out.set("method", "galerkin")
          .set("stages", g.stages)
          .set("quadrature", tree::galerkin_quadrature_name(g.quadrature))
          .set("tolerance", g.newton.tolerance)
          .set("max_iterations", g.newton.max_iterations)
          .set("lagrangian", lagrangian(g.algorithm));
    } else {
      out.set("method", "rk4");
    }
    return out;
  }
  void summary(Json& summary, const sim::System&, const sim::RunSummary& sum) const override {
    const tree::Model& model = *ts_.model;
    Json coordinates = Json::array(), prescribed = Json::array();
    for (const auto& c : model.coords())
      (c.prescribed ? prescribed : coordinates).push_back(c.name);
    summary.set("model", scene_.source)
        .set("dynamic_coordinates", std::move(coordinates))
        .set("kinematic_coordinates", std::move(prescribed))
        .set("constraint_rows", model.num_constraint_rows())
        .set("constraint_residual", Json::object().set("max", sum.constraint_violation_max));
  }
  Json view_model(UrdfVisuals& visuals) const override {
    return tree_model(scene_, *ts_.model, visuals);
  }
  bool writes_frames() const override { return true; }
  std::unique_ptr<sim::Recorder> frame_recorder(sim::Recorder& inner,
                                                const std::filesystem::path& out) const override {
    return std::make_unique<TreeFrameRecorder>(*ts_.model, inner, out);
  }

 private:
  const io::TreeScene& ts_;
};

}  // namespace

std::unique_ptr<Family> tree_family(const io::Scene& scene) {
  return std::make_unique<TreeFamily>(scene);
}

}  // namespace marsden::run
