#include "marsden/run/view.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "marsden/geometry/shapes.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/nonholonomic/generated.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/vehicle/models.hpp"

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
      .set("pose", Json::object().set("position", "position").set("quaternion", "quaternion"));
  Json out = Json::object();
  if (const auto* boat = dynamic_cast<const Boat*>(v.model.get())) {
    // The hull is the box the buoyancy and drag act on (vehicles §4.3.2), centred at the
    // centre of mass; wind (N) and current (m/s) are world vectors, drawn as arrows.
    const BoatParams& p = boat->params();
    InertiaShape hull;
    hull.semi_axes = 0.5 * p.hull_size;
    body.set("geometry", Json::array().push_back(shape_json("box", hull, Vec3::Zero())));
    out.set("boat", Json::object()
                        .set("hull_size", vec3(p.hull_size))
                        .set("wind_force", vec3(p.wind_force))
                        .set("wind_point", vec3(p.wind_point))
                        .set("current", vec3(p.current)));
  } else {
    const InertiaShape s = inertia_shape(mass, I.topLeftCorner<3, 3>());
    body.set("geometry", Json::array().push_back(shape_json("ellipsoid", s, Vec3::Zero())));
  }
  if (const auto* heli = dynamic_cast<const Helicopter*>(v.model.get())) {
    // The main rotor's hub d_t above the centre of mass; its thrust (and disc normal) is
    // Ry(gamma_p) Rx(gamma_r) e_z, gamma the "shape" array (vehicles §4.3.1).
    out.set("rotor", Json::object()
                         .set("hub", vec({0.0, 0.0, heli->params().d_t}))
                         .set("tail_arm", heli->params().d_r)
                         .set("tilt", "shape"));
  }
  out.set("bodies", Json::array().push_back(std::move(body)));
  return out;
}

// The vehicle's dimensions and the trajectory arrays that turn its wheels, steering and
// rotor: the page places the parts from these and the recorded pose and shape.
// A planar holonomic vehicle: a board at its pose, as a generated nonholonomic one.
Json planar_vehicle_model(const io::Scene& scene) {
  Json body = Json::object();
  body.set("name", scene.system_type).set("pose", Json::object().set("planar", "pose"));
  return Json::object()
      .set("ground", true)
      .set("vehicle", Json::object().set("type", "generated"))
      .set("bodies", Json::array().push_back(std::move(body)));
}

// The coordinates (theta, x, y) of a generated system in full coordinates, by name: the
// pose of the board drawn when it has no bodies; empty where it lacks one of them.
std::vector<int> planar_pose_coordinates(const GeneratedNonholonomicModel& model) {
  std::vector<int> out;
  for (const char* name : {"theta", "x", "y"})
    for (int i = 0; i < model.dof(); ++i)
      if (model.coordinate_name(i) == name) out.push_back(i);
  return out.size() == 3 ? out : std::vector<int>{};
}

// A generated system in full coordinates: its bodies, each at its frame in frames.npz; with
// none, a board at (theta, x, y) where the coordinates have these names, else the ground
// only and a warning that says how to give bodies.
Json generated_nonholonomic_model(const io::Scene& scene, Json& warnings, bool& warned) {
  const GeneratedNonholonomicModel& model =
      *std::get<io::NonholonomicScene>(scene.system).full_coordinates;
  Json bodies = Json::array();
  int frame = 0;
  for (const GeneratedNhBody& b : model.bodies()) {
    InertiaShape s;
    s.semi_axes = b.semi_axes;
    bodies.push_back(Json::object()
                         .set("name", b.name)
                         .set("pose", Json::object().set("frame", frame++))
                         .set("geometry", Json::array().push_back(
                                              shape_json(b.shape.c_str(), s, Vec3::Zero())
                                                  .set("visual", true))));
  }
  if (model.bodies().empty() && !planar_pose_coordinates(model).empty()) {
    InertiaShape board;
    board.semi_axes = Vec3(0.3, 0.15, 0.05);
    bodies.push_back(Json::object()
                         .set("name", scene.system_type)
                         .set("pose", Json::object().set("frame", 0))
                         .set("geometry", Json::array().push_back(
                                              shape_json("box", board, Vec3(0, 0, 0.05)))));
  }
  if (model.bodies().empty() && planar_pose_coordinates(model).empty()) {
    warned = true;
    warnings.push_back("the system " + model.library().filename().string() +
                       " has no bodies to draw (give NonholonomicSystem(..., bodies=[Body(...)]), "
                       "or name coordinates theta, x, y for a board at that pose)");
  }
  return Json::object().set("ground", true).set("bodies", std::move(bodies));
}

Json nonholonomic_model(const io::Scene& scene) {
  const auto& nh = std::get<io::NonholonomicScene>(scene.system);
  Json vehicle = Json::object();
  switch (nh.vehicle) {
    case sim::NonholonomicVehicle::Car:  // pose at the rear axle; shape (psi, tan(steering))
      vehicle.set("type", "car")
          .set("wheel_radius", nh.car.rho)
          .set("axle_distance", nh.car.l)
          .set("shape", "shape");
      break;
    case sim::NonholonomicVehicle::Snakeboard:  // pose at the centre; shape (rotor, steering)
      vehicle.set("type", "snakeboard").set("half_length", nh.snakeboard.l).set("shape", "shape");
      break;
    case sim::NonholonomicVehicle::Sleigh:  // pose at the centre of mass; skate at +a
      vehicle.set("type", "sleigh").set("skate_offset", nh.sleigh.a);
      break;
    case sim::NonholonomicVehicle::Generated:  // a board at the pose
      vehicle.set("type", "generated");
      break;
  }
  Json body = Json::object();
  body.set("name", scene.system_type)
      .set("pose", Json::object().set("planar", "pose"));
  return Json::object()
      .set("ground", true)
      .set("vehicle", std::move(vehicle))
      .set("bodies", Json::array().push_back(std::move(body)));
}

// --- URDF <visual> geometry, each shape in the frame of the body that carries it.

Json visual_json(const UrdfVisual& v, const SE3& g_body_visual) {
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

// The visuals a page can draw: primitives, and meshes whose file exists and is STL or OBJ
// (resolved once, the others listed as warnings). A link with none of those but with
// primitive <collision> geometry is drawn from that instead (example-robot-data's robots
// ship COLLADA meshes); a rigid body with nothing to draw keeps its inertia shape.
struct UrdfVisuals {
  const io::Scene& scene;
  std::vector<std::vector<std::string>> mesh_file;  // per link and visual; empty: not drawn
  std::vector<char> from_collision;                 // per link
  Json warnings = Json::array();
  bool warned = false;

  explicit UrdfVisuals(const io::Scene& s) : scene(s) {
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
  std::vector<std::string> substituted;  // links drawn from their <collision> geometry

  bool drawn(int link, std::size_t k) const {
    const UrdfVisual& v = scene.urdf->links[std::size_t(link)].visuals[k];
    return v.shape != UrdfShape::Mesh || !mesh_file[std::size_t(link)][k].empty();
  }
  bool any_drawn(const std::vector<int>& links) const {
    for (const int i : links) {
      if (from_collision[std::size_t(i)]) return true;
      for (std::size_t k = 0; k < scene.urdf->links[std::size_t(i)].visuals.size(); ++k)
        if (drawn(i, k)) return true;
    }
    return false;
  }

  // The drawn visuals of `links`, each in the body frame: g_body_link(i) * origin.
  template <class BodyOfLink>
  Json geometry(const std::vector<int>& links, BodyOfLink g_body_link) const {
    Json out = Json::array();
    for (const int i : links) {
      const UrdfLink& link = scene.urdf->links[std::size_t(i)];
      if (from_collision[std::size_t(i)]) {
        for (const UrdfVisual& c : link.collisions)
          if (c.shape != UrdfShape::Mesh) out.push_back(visual_json(c, g_body_link(i) * c.origin));
        continue;
      }
      for (std::size_t k = 0; k < link.visuals.size(); ++k) {
        if (!drawn(i, k)) continue;
        Json shape = visual_json(link.visuals[k], g_body_link(i) * link.visuals[k].origin);
        if (link.visuals[k].shape == UrdfShape::Mesh)
          shape.set("file", mesh_file[std::size_t(i)][k]);
        out.push_back(std::move(shape));
      }
    }
    return out;
  }
};

Json tree_model(const io::Scene& scene, const UrdfVisuals& visuals) {
  const tree::Model& model = *std::get<io::TreeScene>(scene.system).model;
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

Json maximal_model(const io::Scene& scene, const UrdfVisuals& visuals) {
  const maximal::Model& model = *std::get<io::MaximalScene>(scene.system).model;
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

// Poses streamed into frames.npz (position (rows, frames, 3), quaternion (rows, frames, 4))
// as the trajectory is, so memory stays flat however long the run; `poses` gives a row's
// (x, y, z, qw, qx, qy, qz) per frame from the trajectory row.
class FrameRecorder : public sim::Recorder {
 public:
  FrameRecorder(std::size_t frames, sim::Recorder& inner, std::filesystem::path out)
      : frames_(frames), inner_(inner), file_(std::move(out), "frames", false) {}
  void begin(const sim::Layout& layout) override {
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
  void row(std::span<const double> values) override {
    inner_.row(values);
    row_[0] = values[0];
    poses(values, std::span<double>(row_).subspan(1));
    file_.row(row_);
  }
  void finish(bool ok) override {
    inner_.finish(ok);
    file_.finish(ok);
  }

 protected:
  virtual void poses(std::span<const double> values, std::span<double> out) = 0;
  static void put(const Vec3& x, const Mat3& R, double* out) {
    const Eigen::Quaterniond r(R);
    for (const double v : {x.x(), x.y(), x.z(), r.w(), r.x(), r.y(), r.z()}) *out++ = v;
  }

 private:
  std::size_t frames_;
  sim::Recorder& inner_;
  record::FileRecorder file_;
  std::vector<double> row_;
};

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

// A generated system's bodies (nonholonomic/generated.hpp) at every row's q (the columns
// after t), or the board at its planar pose.
class GeneratedBodyRecorder final : public FrameRecorder {
 public:
  GeneratedBodyRecorder(const GeneratedNonholonomicModel& model, sim::Recorder& inner,
                        std::filesystem::path out)
      : FrameRecorder(std::max<std::size_t>(model.bodies().size(), 1), inner, std::move(out)),
        model_(model), planar_(planar_pose_coordinates(model)) {}

 protected:
  void poses(std::span<const double> values, std::span<double> out) override {
    const NhVec q = NhVec::Map(values.data() + 1, model_.dof());
    Vec3 x_b;
    Mat3 R_b;
    if (model_.bodies().empty()) {
      const double theta = q[planar_[0]];
      x_b = Vec3(q[planar_[1]], q[planar_[2]], 0.0);
      R_b = Eigen::AngleAxisd(theta, Vec3::UnitZ()).toRotationMatrix();
      put(x_b, R_b, out.data());
      return;
    }
    for (std::size_t b = 0; b < model_.bodies().size(); ++b) {
      model_.body_pose(int(b), q, x_b, R_b);
      put(x_b, R_b, out.data() + 7 * b);
    }
  }

 private:
  const GeneratedNonholonomicModel& model_;
  std::vector<int> planar_;
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

bool writes_frames(const io::Scene& scene) {
  if (std::holds_alternative<io::TreeScene>(scene.system)) return true;
  const auto* nh = std::get_if<io::NonholonomicScene>(&scene.system);
  return nh && nh->full_coordinates &&
         (!nh->full_coordinates->bodies().empty() ||
          !planar_pose_coordinates(*nh->full_coordinates).empty());
}

Json view_model(const io::Scene& scene) {
  Json m;
  UrdfVisuals visuals{scene};
  const auto* nh = std::get_if<io::NonholonomicScene>(&scene.system);
  if (std::holds_alternative<io::VehicleScene>(scene.system)) m = vehicle_model(scene);
  else if (nh && nh->full_coordinates) {
    m = generated_nonholonomic_model(scene, visuals.warnings, visuals.warned);
  } else if (nh) m = nonholonomic_model(scene);
  else if (std::holds_alternative<io::TreeScene>(scene.system)) m = tree_model(scene, visuals);
  else if (std::holds_alternative<io::PlanarVehicleScene>(scene.system))
    m = planar_vehicle_model(scene);
  else m = maximal_model(scene, visuals);
  Json out = Json::object();
  out.set("format", "marsden-view-1")
      .set("system", scene.system_type)
      .set("source", scene.source)
      .set("scene", scene.file)
      .set("trajectory", "trajectory.npz");
  if (writes_frames(scene)) out.set("frames_file", "frames.npz");
  out.set("model", std::move(m));
  if (visuals.warned) out.set("warnings", std::move(visuals.warnings));
  if (!scene.view_obstacles.empty() || !scene.view_goal_kind.empty()) {
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
    Json environment = Json::object();
    environment.set("dimension", scene.view_dimension).set("obstacles", std::move(obstacles));
    if (!scene.view_goal_kind.empty()) {
      const Eigen::Quaterniond r(scene.view_goal.R);
      environment.set("goal", Json::object()
                                  .set("kind", scene.view_goal_kind)
                                  .set("position", vec3(scene.view_goal.x))
                                  .set("quaternion", vec({r.w(), r.x(), r.y(), r.z()})));
    }
    out.set("environment", std::move(environment));
  }
  return out;
}

std::unique_ptr<sim::Recorder> view_recorder(const io::Scene& scene, sim::Recorder& inner,
                                             const std::filesystem::path& out_dir) {
  if (const auto* t = std::get_if<io::TreeScene>(&scene.system))
    return std::make_unique<TreeFrameRecorder>(*t->model, inner, out_dir);
  if (writes_frames(scene))
    return std::make_unique<GeneratedBodyRecorder>(
        *std::get<io::NonholonomicScene>(scene.system).full_coordinates, inner, out_dir);
  return std::make_unique<Forward>(inner);
}

}  // namespace marsden::run
