// The nonholonomic vehicles' run: car, snakeboard and sleigh in RDP, GNI or RATTLE, and the
// generated systems in full coordinates; their integrator, pose and player model
// (family.hpp).
#include <algorithm>

#include <Eigen/Geometry>

#include "family.hpp"
#include "marsden/nonholonomic/generated.hpp"

namespace marsden::run {

using record::Json;

namespace {

// The coordinates (theta, x, y) of a generated system in full coordinates, by name: the
// pose of the board drawn when it has no bodies; empty where it lacks one of them.
std::vector<int> planar_pose_coordinates(const nonholonomic::GeneratedNonholonomicModel& model) {
  std::vector<int> out;
  for (const char* name : {"theta", "x", "y"})
    for (int i = 0; i < model.dof(); ++i)
      if (model.coordinate_name(i) == name) out.push_back(i);
  return out.size() == 3 ? out : std::vector<int>{};
}

// A generated system in full coordinates: its bodies, each at its frame in frames.npz; with
// none, a board at (theta, x, y) where the coordinates have these names, else the ground
// only and a warning that says how to give bodies.
Json generated_nonholonomic_model(const io::Scene& scene,
                                  const nonholonomic::GeneratedNonholonomicModel& model,
                                  Json& warnings, bool& warned) {
  Json bodies = Json::array();
  int frame = 0;
  for (const nonholonomic::GeneratedNhBody& b : model.bodies()) {
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

Json nonholonomic_model(const io::Scene& scene, const io::NonholonomicScene& nh) {
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

// A generated system's bodies (nonholonomic/generated.hpp) at every row's q (the columns
// after t), or the board at its planar pose.
class GeneratedBodyRecorder final : public FrameRecorder {
 public:
  GeneratedBodyRecorder(const nonholonomic::GeneratedNonholonomicModel& model, sim::Recorder& inner,
                        std::filesystem::path out)
      : FrameRecorder(std::max<std::size_t>(model.bodies().size(), 1), inner, std::move(out)),
        model_(model), planar_(planar_pose_coordinates(model)) {}

 protected:
  void poses(std::span<const double> values, std::span<double> out) override {
    const nonholonomic::NhVec q = nonholonomic::NhVec::Map(values.data() + 1, model_.dof());
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
  const nonholonomic::GeneratedNonholonomicModel& model_;
  std::vector<int> planar_;
};

class NonholonomicFamily final : public Family {
 public:
  explicit NonholonomicFamily(const io::Scene& scene)
      : Family(scene), nh_(std::get<io::NonholonomicScene>(scene.system)) {}

  std::unique_ptr<sim::System> make_system() const override {
    return sim::make_nonholonomic_system(nh_);
  }
  Json integrator() const override {
    using io::NhMethod;
    Json out = Json::object();
    out.set("method", sim::method_name(nh_.method));
    if (nh_.method == NhMethod::Rdp || nh_.method == NhMethod::RdpExplicit)
      out.set("alpha", nh_.alpha).set("map", nh_.map == DiffMap::Cay ? "cay" : "exp");
    if (nh_.method == NhMethod::Rdp)
      out.set("tangent", nh_.tangent == vehicle::TangentMap::TLN ? "tln" : "exact");
    out.set("tolerance", nh_.newton.tolerance).set("max_iterations", nh_.newton.max_iterations);
    return out;
  }
  void summary(Json& summary, const sim::System& system, const sim::RunSummary& sum) const override {
    if (nh_.vehicle == sim::NonholonomicVehicle::Snakeboard)
      summary.set("actuation", nh_.prescribe_shape ? "velocity" : "torque");
    // The last state's pose: columns theta, x, y of its row (a generated system: its
    // coordinates q, columns 1..n).
    std::vector<double> row(system.layout().columns.size());
    system.row(sum.final_time, row);
    summary.set("constraint_violation", Json::object().set("max", sum.constraint_violation_max));
    if (nh_.full_coordinates) {
      Json q = Json::object();
      for (std::size_t i = 0; i < nh_.q0.size(); ++i)
        q.set(system.layout().columns[i + 1], row[i + 1]);
      summary.set("final_q", std::move(q));
    } else {
      summary.set("final_pose",
                  Json::object().set("theta", row[1]).set("x", row[2]).set("y", row[3]));
    }
  }
  Json view_model(UrdfVisuals& visuals) const override {
    if (nh_.full_coordinates)
      return generated_nonholonomic_model(scene_, *nh_.full_coordinates, visuals.warnings,
                                          visuals.warned);
    return nonholonomic_model(scene_, nh_);
  }
  // The bodies of a generated system in full coordinates, or its board at (theta, x, y).
  bool writes_frames() const override {
    return nh_.full_coordinates && (!nh_.full_coordinates->bodies().empty() ||
                                    !planar_pose_coordinates(*nh_.full_coordinates).empty());
  }
  std::unique_ptr<sim::Recorder> frame_recorder(sim::Recorder& inner,
                                                const std::filesystem::path& out) const override {
    if (!writes_frames()) return nullptr;
    return std::make_unique<GeneratedBodyRecorder>(*nh_.full_coordinates, inner, out);
  }

 private:
  const io::NonholonomicScene& nh_;
};

}  // namespace

std::unique_ptr<Family> nonholonomic_family(const io::Scene& scene) {
  return std::make_unique<NonholonomicFamily>(scene);
}

}  // namespace marsden::run
