#include "marsden/tree/builtin_models.hpp"

#include <cmath>
#include <numbers>
#include <sstream>
#include <string>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "marsden/error.hpp"
#include "marsden/tree/dynamics.hpp"

namespace marsden::tree {

namespace {

std::string text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

void require_positive(double x, const char* name) {
  if (!(x > 0.0) || !std::isfinite(x))
    throw InputError(std::string(name) + " must be a finite number > 0 (got " + text(x) + ")");
}

void require_non_negative(double x, const char* name) {
  if (!(x >= 0.0) || !std::isfinite(x))
    throw InputError(std::string(name) + " must be a finite number >= 0 (got " + text(x) + ")");
}

SE3 translation(const Vec3& x) { return SE3{Mat3::Identity(), x}; }

// Principal inertias about the centre of mass, kg m^2.
Mat3 box_inertia(double m, double a, double b, double c) {  // a, b, c along x, y, z
  return Vec3(m * (b * b + c * c), m * (a * a + c * c), m * (a * a + b * b)).asDiagonal() *
         (1.0 / 12.0);
}
Mat3 rod_inertia(double m, double length, double radius, int axis) {
  const double across = m * (3.0 * radius * radius + length * length) / 12.0;
  Vec3 d = Vec3::Constant(across);
  d[axis] = 0.5 * m * radius * radius;
  return d.asDiagonal();
}
Mat3 sphere_inertia(double m, double radius) {
  return Mat3::Identity() * (0.4 * m * radius * radius);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Pendulum chain

Model n_link_pendulum(int n, const PendulumParams& p) {
  if (n < 1) throw InputError("n_link_pendulum: n must be >= 1 (got " + std::to_string(n) + ")");
  require_positive(p.length, "length");
  require_positive(p.mass, "mass");
  require_non_negative(p.damping, "damping");
  if (!p.link_inertia.allFinite() || (p.link_inertia - p.link_inertia.transpose()).norm() >
                                         1e-12 * (1.0 + p.link_inertia.norm()))
    throw InputError("link_inertia must be a finite symmetric matrix");
  if (p.link_inertia.selfadjointView<Eigen::Lower>().eigenvalues().minCoeff() < 0.0)
    throw InputError("link_inertia must be positive semi-definite");

  ModelBuilder b;
  b.set_gravity(Vec3(0.0, 0.0, -9.81));
  int parent = kWorld;
  for (int i = 1; i <= n; ++i) {
    const std::string k = std::to_string(i);
    const int joint = b.add_joint_frame("link" + k, parent, Transform::Rx, "q" + k);
    parent = b.add_fixed_frame("mass" + k, joint, Transform::Tz, -p.length);
    b.add_mass(parent, p.mass, Vec3::Zero(), p.link_inertia);
    if (p.damping > 0.0) b.add_coordinate_damper(b.coord_index("q" + k), p.damping);
  }
  return b.build();
}

Model double_pendulum(const PendulumParams& p) { return n_link_pendulum(2, p); }

// ---------------------------------------------------------------------------------------
// Four-bar linkage

namespace {

void check(const FourBarParams& p) {
  require_positive(p.crank, "crank");
  require_positive(p.coupler, "coupler");
  require_positive(p.rocker, "rocker");
  require_positive(p.ground, "ground");
  require_positive(p.density, "density");
  require_positive(p.rod_radius, "rod_radius");
  require_non_negative(p.damping, "damping");
}

}  // namespace

Model four_bar(const FourBarParams& p) {
  check(p);
  ModelBuilder b;
  b.set_gravity(Vec3(0.0, 0.0, -9.81));
  // A uniform rod along its frame's +y axis, centred half way.
  auto rod = [&](int frame, double length) {
    const double m = p.density * length;
    b.add_mass(frame, m, Vec3(0.0, 0.5 * length, 0.0), rod_inertia(m, length, p.rod_radius, 1));
  };
  const int crank = b.add_joint_frame("crank", kWorld, Transform::Rx, "crank");
  rod(crank, p.crank);
  const int crank_end = b.add_fixed_frame("crank_end", crank, Transform::Ty, p.crank);
  const int coupler = b.add_joint_frame("coupler", crank_end, Transform::Rx, "coupler");
  rod(coupler, p.coupler);
  const int coupler_end = b.add_fixed_frame("coupler_end", coupler, Transform::Ty, p.coupler);
  const int pivot_b = b.add_fixed_frame("pivot_b", kWorld, Transform::Ty, p.ground);
  const int rocker = b.add_joint_frame("rocker", pivot_b, Transform::Rx, "rocker");
  rod(rocker, p.rocker);
  const int rocker_end = b.add_fixed_frame("rocker_end", rocker, Transform::Ty, p.rocker);
  b.add_point_on_plane_constraint("closure_y", coupler_end, rocker_end, Vec3::UnitY());
  b.add_point_on_plane_constraint("closure_z", coupler_end, rocker_end, Vec3::UnitZ());
  if (p.damping > 0.0)
    for (const char* c : {"crank", "coupler", "rocker"})
      b.add_coordinate_damper(b.coord_index(c), p.damping);
  return b.build();
}

FourBarState four_bar_state(const FourBarParams& p, double crank_angle, double crank_rate,
                            int branch) {
  check(p);
  if (!std::isfinite(crank_angle) || !std::isfinite(crank_rate))
    throw InputError("four_bar_state: crank angle and rate must be finite");
  if (branch != 1 && branch != -1)
    throw InputError("four_bar_state: branch must be +1 or -1 (got " + std::to_string(branch) +
                     ")");
  // In the (y, z) plane: a link at absolute angle phi points along (cos phi, sin phi).
  const Vec2 e1(std::cos(crank_angle), std::sin(crank_angle));
  const Vec2 C = p.crank * e1;  // the crank's end
  const Vec2 B(p.ground, 0.0);
  // The rocker's end D lies on the circles |D - C| = coupler and |D - B| = rocker.
  const Vec2 CB = B - C;
  const double d = CB.norm();
  const double a = (p.coupler * p.coupler - p.rocker * p.rocker + d * d) / (2.0 * d);
  const double h2 = p.coupler * p.coupler - a * a;
  if (!(d > 0.0) || h2 < 0.0)
    throw InputError("four_bar_state: the linkage cannot be assembled at crank angle " +
                     text(crank_angle) + " rad");
  const Vec2 u = CB / d;
  const Vec2 normal(-u[1], u[0]);
  const Vec2 D = C + a * u + branch * std::sqrt(h2) * normal;
  const double phi2 = std::atan2(D[1] - C[1], D[0] - C[0]);  // coupler, absolute
  const double phi3 = std::atan2(D[1] - B[1], D[0] - B[0]);  // rocker

  // Velocities: d/dt of C + coupler e(phi2) = B + rocker e(phi3), with e' = perp(e):
  //   coupler phi2' perp(e2) - rocker phi3' perp(e3) = -crank phi1' perp(e1).
  auto perp = [](double phi) { return Vec2(-std::sin(phi), std::cos(phi)); };
  Mat2 A;
  A.col(0) = p.coupler * perp(phi2);
  A.col(1) = -p.rocker * perp(phi3);
  const double det = A.determinant();
  // Coupler and rocker aligned: the linkage is locked and phi2', phi3' are undetermined.
  if (std::abs(det) <= 1e-9 * p.coupler * p.rocker)
    throw InputError("four_bar_state: crank angle " + text(crank_angle) +
                     " rad is a singular (locked) configuration");
  const Vec2 rates = A.partialPivLu().solve(-p.crank * crank_rate * perp(crank_angle));

  FourBarState s;
  s.q = VecX(3);
  s.qd = VecX(3);
  s.q << crank_angle, std::remainder(phi2 - crank_angle, 2.0 * std::numbers::pi), phi3;
  s.qd << crank_rate, rates[0] - crank_rate, rates[1];
  return s;
}

// ---------------------------------------------------------------------------------------
// Marionette

namespace {

// Segment proportions: lengths in units of the height, masses as fractions of the total
// (after Winter's anthropometric tables, rounded; the fractions add up to 1).
constexpr double kPelvisMass = 0.142, kChestMass = 0.355, kHeadMass = 0.081;
constexpr double kUpperArmMass = 0.028, kForearmMass = 0.016, kHandMass = 0.006;
constexpr double kThighMass = 0.100, kShankMass = 0.0465, kFootMass = 0.0145;

constexpr const char* kStrings[] = {"head", "left_hand", "right_hand", "left_knee",
                                    "right_knee"};

struct MarionetteBuilder {
  ModelBuilder b;
  double H, M, damping;

  int offset(const std::string& name, int parent, const Vec3& x) {
    return b.add_const_frame(name, parent, translation(H * x));
  }
  int joint(const std::string& name, int parent, Transform t) {
    const int f = b.add_joint_frame(name, parent, t, name);
    b.add_coordinate_damper(b.coord_index(name), damping);
    return f;
  }
  // Three rotations Rz, Ry, Rx named prefix_rz, _ry, _rx; returns the last frame.
  int ball(const std::string& prefix, int parent) {
    const int z = joint(prefix + "_rz", parent, Transform::Rz);
    const int y = joint(prefix + "_ry", z, Transform::Ry);
    return joint(prefix + "_rx", y, Transform::Rx);
  }
  // A limb segment hanging along -z from its joint frame: a rod of the given length.
  void limb(int frame, double mass_fraction, double length, double radius) {
    const double m = M * mass_fraction;
    b.add_mass(frame, m, Vec3(0.0, 0.0, -0.5 * H * length),
               rod_inertia(m, H * length, H * radius, 2));
  }

  void arm(const std::string& side, int chest, double y) {
    const int shoulder = ball(side + "_shoulder", offset(side + "_shoulder", chest,
                                                         Vec3(0.0, y, 0.26)));
    limb(shoulder, kUpperArmMass, 0.17, 0.025);
    const int elbow = joint(side + "_elbow", offset(side + "_elbow_pos", shoulder,
                                                    Vec3(0.0, 0.0, -0.17)), Transform::Ry);
    limb(elbow, kForearmMass, 0.15, 0.02);
    const int wrist_y = joint(side + "_wrist_ry", offset(side + "_wrist_pos", elbow,
                                                         Vec3(0.0, 0.0, -0.15)), Transform::Ry);
    const int wrist = joint(side + "_wrist_rx", wrist_y, Transform::Rx);
    const double m = M * kHandMass;
    b.add_mass(wrist, m, Vec3(0.0, 0.0, -0.05 * H), box_inertia(m, 0.03 * H, 0.06 * H, 0.1 * H));
    // The string pulls at the back of the hand, in front of the wrist axis: straight
    // below the shoulder the hand strings' rows of Dh would depend on the head string's
    // (all three move only with the torso's height and roll) and the step's Newton matrix
    // would be singular at the rest pose.
    offset(side + "_hand_attach", wrist, Vec3(0.03, 0.0, -0.1));
  }

  void leg(const std::string& side, int pelvis, double y) {
    const int hip = ball(side + "_hip", offset(side + "_hip", pelvis, Vec3(0.0, y, -0.05)));
    limb(hip, kThighMass, 0.24, 0.045);
    // The knee string pulls at the front of the knee, on the thigh (in front of the hip
    // axis, for the same reason as the hands').
    offset(side + "_knee_attach", hip, Vec3(0.03, 0.0, -0.24));
    const int knee = joint(side + "_knee", offset(side + "_knee_pos", hip,
                                                  Vec3(0.0, 0.0, -0.24)), Transform::Ry);
    limb(knee, kShankMass, 0.24, 0.03);
    const int ankle_y = joint(side + "_ankle_ry", offset(side + "_ankle_pos", knee,
                                                         Vec3(0.0, 0.0, -0.24)), Transform::Ry);
    const int ankle = joint(side + "_ankle_rx", ankle_y, Transform::Rx);
    const double m = M * kFootMass;
    // The foot slopes from heel to toe: its principal axes are pitched, so its inertia in
    // the ankle frame is a full tensor.
    const Mat3 R = Eigen::AngleAxisd(0.3, Vec3::UnitY()).toRotationMatrix();
    b.add_mass(ankle, m, H * Vec3(0.04, 0.0, -0.03),
               R * box_inertia(m, 0.12 * H, 0.05 * H, 0.04 * H) * R.transpose());
  }
};

}  // namespace

Model marionette(const MarionetteParams& p) {
  require_positive(p.total_mass, "total_mass");
  require_positive(p.height, "height");
  require_positive(p.string_length, "string_length");
  require_non_negative(p.damping, "damping");
  MarionetteBuilder mb{ModelBuilder(), p.height, p.total_mass, p.damping};
  ModelBuilder& b = mb.b;
  b.set_gravity(Vec3(0.0, 0.0, -9.81));
  const double H = p.height, M = p.total_mass;

  // The floating pelvis: three translations and Rz-Ry-Rx angles from the world.
  int torso = kWorld;
  for (auto [name, t] : {std::pair{"torso_tx", Transform::Tx}, std::pair{"torso_ty", Transform::Ty},
                         std::pair{"torso_tz", Transform::Tz}, std::pair{"torso_rz", Transform::Rz},
                         std::pair{"torso_ry", Transform::Ry}, std::pair{"torso_rx", Transform::Rx}})
    torso = mb.joint(name, torso, t);
  b.add_mass(torso, M * kPelvisMass, H * Vec3(0.0, 0.0, 0.03),
             box_inertia(M * kPelvisMass, 0.12 * H, 0.2 * H, 0.1 * H));

  const int chest = mb.ball("waist", mb.offset("waist", torso, Vec3(0.0, 0.0, 0.08)));
  b.add_mass(chest, M * kChestMass, H * Vec3(0.0, 0.0, 0.14),
             box_inertia(M * kChestMass, 0.12 * H, 0.22 * H, 0.28 * H));
  const int head = mb.ball("neck", mb.offset("neck", chest, Vec3(0.0, 0.0, 0.30)));
  b.add_mass(head, M * kHeadMass, H * Vec3(0.0, 0.0, 0.07), sphere_inertia(M * kHeadMass, 0.06 * H));
  mb.offset("head_attach", head, Vec3(0.0, 0.0, 0.14));

  mb.arm("left", chest, 0.13);
  mb.arm("right", chest, -0.13);
  mb.leg("left", torso, 0.05);
  mb.leg("right", torso, -0.05);

  // Strings: the puppeteer's end moves by prescribed translations from the world.
  for (const char* s : kStrings) {
    const std::string name = s;
    const int x = b.add_joint_frame(name + "_x", kWorld, Transform::Tx, name + "_x", true);
    const int y = b.add_joint_frame(name + "_y", x, Transform::Ty, name + "_y", true);
    const int end = b.add_joint_frame(name + "_end", y, Transform::Tz, name + "_z", true);
    b.add_distance_constraint(name, end, b.frame_index(name + "_attach"), p.string_length);
  }
  return b.build();
}

VecX marionette_configuration(const Model& model, const VecX& q_body) {
  if (q_body.size() != model.num_coords())
    throw InputError("marionette_configuration: expected " + std::to_string(model.num_coords()) +
                     " coordinates (got " + std::to_string(q_body.size()) + ")");
  VecX q = q_body;
  Data data(model);
  frame_kinematics(model, data, q, VecX::Zero(model.num_coords()), 0);
  for (const char* s : kStrings) {
    const Constraint* string = nullptr;
    for (const Constraint& c : model.constraints())
      if (c.name == s) string = &c;
    if (!string || string->kind != ConstraintKind::Distance)
      throw InputError(std::string("marionette_rest_configuration: the model has no string '") +
                       s + "' (expected a model made by marionette())");
    const Vec3 top = data.g_s[model.frame_index(std::string(s) + "_attach")].x +
                     Vec3(0.0, 0.0, string->distance);
    q[model.coord_index(std::string(s) + "_x")] = top.x();
    q[model.coord_index(std::string(s) + "_y")] = top.y();
    q[model.coord_index(std::string(s) + "_z")] = top.z();
  }
  return q;
}

VecX marionette_rest_configuration(const Model& model) {
  return marionette_configuration(model, VecX::Zero(model.num_coords()));
}

}  // namespace marsden::tree
