// The holonomic vehicles' run: SE(3) (rigid body, helicopter, boat, generated) and SE(2)
// (generated) vehicles, their integrator, spatial momentum and player model (family.hpp).
#include <type_traits>

#include "family.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::run {

using record::Json;

namespace {

// A rigid body drawn as the ellipsoid of its inertia; the boat as its hull and the
// helicopter with its rotor.
Json vehicle_model(const io::Scene& scene, const io::VehicleScene& v) {
  const Mat6& I = v.model->inertia();
  const double mass = I(3, 3);
  Json body = Json::object();
  body.set("name", scene.system_type)
      .set("pose", Json::object().set("position", "position").set("quaternion", "quaternion"));
  Json out = Json::object();
  if (const auto* boat = dynamic_cast<const vehicle::Boat*>(v.model.get())) {
    // The hull is the box the buoyancy and drag act on (vehicles §4.3.2), centred at the
    // centre of mass; wind (N) and current (m/s) are world vectors, drawn as arrows.
    const vehicle::BoatParams& p = boat->params();
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
  if (const auto* heli = dynamic_cast<const vehicle::Helicopter*>(v.model.get())) {
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

// A planar holonomic vehicle: a board at its pose, as a generated nonholonomic one.
Json planar_vehicle_model(const io::Scene& scene) {
  Json body = Json::object();
  body.set("name", scene.system_type).set("pose", Json::object().set("planar", "pose"));
  return Json::object()
      .set("ground", true)
      .set("vehicle", Json::object().set("type", "generated"))
      .set("bodies", Json::array().push_back(std::move(body)));
}

template <class Setup>
class HolonomicFamily final : public Family {
 public:
  HolonomicFamily(const io::Scene& scene, const Setup& setup) : Family(scene), v_(setup) {}

  std::unique_ptr<sim::System> make_system() const override {
    return sim::make_vehicle_system(v_);
  }
  double t0() const override { return v_.initial_state.t; }
  Json integrator() const override {
    const auto& opt = v_.options;
    Json out = Json::object();
    out.set("method", vehicle::method_name(v_.method))
        .set("map", opt.map == DiffMap::Cay ? "cay" : "exp")
        .set("tangent", opt.tangent == vehicle::TangentMap::TLN ? "tln" : "exact")
        .set("tolerance", opt.newton.tolerance)
        .set("max_iterations", opt.newton.max_iterations);
    return out;
  }
  void summary(Json& out, const sim::System&, const sim::RunSummary& run) const override {
    if (run.momentum_initial.empty()) return;
    out.set("spatial_momentum", Json::object()
                                    .set("initial", Json::array(run.momentum_initial))
                                    .set("max_abs_drift", run.momentum_drift)
                                    .set("relative_drift", run.momentum_drift_relative));
  }
  Json view_model(UrdfVisuals&) const override {
    if constexpr (std::is_same_v<Setup, io::VehicleScene>) return vehicle_model(scene_, v_);
    else return planar_vehicle_model(scene_);
  }

 private:
  const Setup& v_;
};

}  // namespace

std::unique_ptr<Family> vehicle_family(const io::Scene& scene) {
  return std::make_unique<HolonomicFamily<io::VehicleScene>>(
      scene, std::get<io::VehicleScene>(scene.system));
}

std::unique_ptr<Family> planar_vehicle_family(const io::Scene& scene) {
  return std::make_unique<HolonomicFamily<io::PlanarVehicleScene>>(
      scene, std::get<io::PlanarVehicleScene>(scene.system));
}

}  // namespace marsden::run
