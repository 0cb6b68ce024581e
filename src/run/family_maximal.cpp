// The maximal mechanisms' run: bodies, joints and contact stepped by the maximal VI; their
// solver options, bodies, joints and contact, and player model (family.hpp).
#include <algorithm>
#include <optional>

#include <Eigen/Geometry>

#include "family.hpp"
#include "marsden/geometry/shapes.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/sim/maximal.hpp"

namespace marsden::run {

using record::Json;

namespace {

// A body's collision shapes (docs/contact.md), drawn where it has no visual the page can
// draw: spheres, boxes, and capsules as cylinders of their whole length.
Json collision_geometry(const maximal::Model& model, int body) {
  Json out = Json::array();
  for (const maximal::CollisionShape& c : model.contacts().shapes) {
    if (c.body != body) continue;
    const SE3& g = geometry::shape_pose(c.shape);
    const Eigen::Quaterniond r(g.R);
    InertiaShape s;
    s.rotation = Vec4(r.w(), r.x(), r.y(), r.z());
    const char* kind = "box";
    if (const auto* sphere = std::get_if<geometry::Sphere>(&c.shape)) {
      kind = "ellipsoid";
      s.semi_axes.setConstant(sphere->radius());
    } else if (const auto* capsule = std::get_if<geometry::Capsule>(&c.shape)) {
      kind = "cylinder";
      s.semi_axes = Vec3(capsule->radius(), capsule->radius(),
                         capsule->half_length() + capsule->radius());
    } else if (const auto* box = std::get_if<geometry::Box>(&c.shape)) {
      s.semi_axes = box->half_extents();
    }
    out.push_back(shape_json(kind, s, g.x));
  }
  return out;
}

// A body's wheels (thin disks on their axles), balls and skates (a small marker at the
// blade), drawn with its other geometry so that they roll and steer with it.
void add_velocity_constraint_geometry(const maximal::Model& model, int b, Json& geometry) {
  for (const maximal::VelocityConstraint& c : model.velocity_constraints()) {
    if (c.body != b) continue;
    InertiaShape s;
    const char* kind = "ellipsoid";
    if (c.type == maximal::VelocityConstraintType::RollingWheel) {
      kind = "cylinder";  // along its z: turned onto the axle
      s.semi_axes = Vec3(c.radius, c.radius, 0.05 * c.radius);
      const Eigen::Quaterniond r = Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), c.axis);
      s.rotation = Vec4(r.w(), r.x(), r.y(), r.z());
    } else if (c.type == maximal::VelocityConstraintType::RollingBall) {
      s.semi_axes.setConstant(c.radius);
    } else {
      s.semi_axes.setConstant(0.03);
    }
    geometry.push_back(shape_json(kind, s, c.point));
  }
}

Json maximal_model(const io::Scene& scene, const maximal::Model& model,
                   const UrdfVisuals& visuals) {
  Json bodies = Json::array();
  // A URDF's bodies are its rigid bodies in order (maximal/urdf.cpp), from the root's with
  // a floating base, else after it; their frames are world_body at the zero configuration.
  std::optional<UrdfRigidBodies> rb;
  const std::size_t first_group = scene.urdf_floating_base ? 0 : 1;
  if (scene.urdf) rb = rigid_bodies(*scene.urdf);
  const auto body_of_link = [&](std::size_t g) {
    return [&, g](int i) {
      return rb->bodies[g].world_body.inverse() * rb->world_link[std::size_t(i)];
    };
  };
  int b = 0;
  for (const maximal::Body& body : model.bodies()) {
    const std::size_t g = first_group + std::size_t(b);
    const InertiaShape s = inertia_shape(body.mass, body.inertia);
    const bool drawn = rb && g < rb->bodies.size() && visuals.any_drawn(rb->bodies[g].links);
    const bool collides = std::any_of(model.contacts().shapes.begin(), model.contacts().shapes.end(),
                                      [b](const maximal::CollisionShape& c) { return c.body == b; });
    Json geometry = drawn      ? visuals.geometry(rb->bodies[g].links, body_of_link(g))
                    : collides ? collision_geometry(model, b)
                               : Json::array().push_back(shape_json("box", s, Vec3::Zero()));
    add_velocity_constraint_geometry(model, b, geometry);
    bodies.push_back(Json::object()
                         .set("name", body.name)
                         .set("pose", Json::object().set("position", "position")
                                          .set("quaternion", "quaternion").set("index", b++))
                         .set("mass", body.mass)
                         .set("geometry", std::move(geometry)));
  }
  // A fixed base is the world itself: its visuals stand still, the root link at the origin.
  if (rb && first_group == 1 && visuals.any_drawn(rb->bodies[0].links)) {
    bodies.push_back(Json::object()
                         .set("name", scene.urdf->root)
                         .set("pose", Json::object().set("fixed", vec({0, 0, 0, 1, 0, 0, 0})))
                         .set("geometry", visuals.geometry(rb->bodies[0].links, [&](int i) {
                           return rb->world_link[std::size_t(i)];
                         })));
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
  Json out = Json::object().set("bodies", std::move(bodies)).set("joints", std::move(joints));
  // The ground grid at z = 0 where the contact has that surface.
  for (const maximal::Surface& surface : model.contacts().surfaces) {
    if (surface.half_space.n().isApprox(Vec3::UnitZ(), 1e-12) && surface.half_space.offset() == 0.0)
      out.set("ground", true);
  }
  return out;
}

class MaximalFamily final : public Family {
 public:
  explicit MaximalFamily(const io::Scene& scene)
      : Family(scene), ms_(std::get<io::MaximalScene>(scene.system)) {}

  std::unique_ptr<sim::System> make_system() const override {
    return sim::make_maximal_system(ms_);
  }
  Json integrator() const override {
    const maximal::Model& model = *ms_.model;
    const maximal::StepOptions& options = ms_.step;
    Json out = Json::object();
    out.set("tolerance", options.newton.tolerance)
        .set("max_iterations", options.newton.max_iterations)
        .set("line_search", options.newton.line_search)
        .set("solver", options.solver == maximal::LinearSolver::SparseLDU ? "sparse" : "dense");
    if (!model.contact_points().empty()) {
      out.set("complementarity_tolerance", options.complementarity_tolerance)
          .set("contact_compliance", options.contact_compliance)
          .set("friction_angle_tolerance", options.friction_angle_tolerance);
    }
    return out;
  }
  void summary(Json& summary, const sim::System&, const sim::RunSummary& sum) const override {
    const maximal::Model& model = *ms_.model;
    Json body_names = Json::array();
    for (const maximal::Body& b : model.bodies()) body_names.push_back(b.name);
    int rows_total = 0;
    for (const maximal::Joint& j : model.joints()) rows_total += maximal::constraint_rows(j.type);
    Json inputs = Json::array();
    for (const int j : ms_.input_joints) inputs.push_back(model.joints()[std::size_t(j)].name);
    // Prescribed joints, in joint order: each writes the column JOINT_drive.
    Json kinematic = Json::array();
    for (const maximal::Joint& j : model.joints())
      if (j.prescribed) kinematic.push_back(j.name);
    if (!model.contact_points().empty()) {
      Json left_out = Json::array();
      for (const std::string& l : scene_.contact_left_out) left_out.push_back(l);
      summary.set("contact", Json::object()
                                 .set("shapes", int(model.contacts().shapes.size()))
                                 .set("surfaces", int(model.contacts().surfaces.size()))
                                 .set("candidates", int(model.contact_points().size()))
                                 .set("restitution", model.has_restitution())
                                 .set("left_out", std::move(left_out)));
    }
    // Each velocity constraint, its force columns, and whether the step eliminates its rows
    // at its body (linear time) or in the loop block (docs/maximal.md).
    if (!model.velocity_constraints().empty()) {
      const maximal::Topology& topo = model.topology();
      const std::vector<std::string> names = sim::velocity_force_columns(model);
      Json list = Json::array();
      for (std::size_t c = 0; c < model.velocity_constraints().size(); ++c) {
        const maximal::VelocityConstraint& v = model.velocity_constraints()[c];
        Json columns = Json::array();
        bool at_body = true;
        for (std::size_t k = 0; k < topo.velocity_constraint.size(); ++k) {
          if (std::size_t(topo.velocity_constraint[k]) != c) continue;
          at_body = topo.velocity_coupling[k] < 0;
          columns.push_back(names[k]);
        }
        list.push_back(Json::object()
                           .set("name", v.name)
                           .set("type", maximal::velocity_constraint_type_name(v.type))
                           .set("body", model.bodies()[std::size_t(v.body)].name)
                           .set("columns", std::move(columns))
                           .set("eliminated_at_body", at_body));
      }
      summary.set("velocity_constraints", std::move(list));
    }
    summary.set("mechanism", scene_.source)
        .set("bodies", std::move(body_names))
        .set("inputs", std::move(inputs))
        .set("kinematic_joints", std::move(kinematic))
        .set("joints", model.num_joints())
        .set("constraint_rows", rows_total)
        .set("constraint_violation", Json::object().set("max", sum.constraint_violation_max));
    if (sum.failed_step >= 0)
      summary.set("failed_step", Json::object()
                                     .set("step", sum.failed_step)
                                     .set("t", sum.failed_t)
                                     .set("reason", sum.failed_code));
  }
  Json view_model(UrdfVisuals& visuals) const override {
    return maximal_model(scene_, *ms_.model, visuals);
  }

 private:
  const io::MaximalScene& ms_;
};

}  // namespace

std::unique_ptr<Family> maximal_family(const io::Scene& scene) {
  return std::make_unique<MaximalFamily>(scene);
}

}  // namespace marsden::run
