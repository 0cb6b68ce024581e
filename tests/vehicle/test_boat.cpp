// Boat model of vehicles §4.3.2: Jacobians against finite differences, hydrostatics
// against closed forms, parameter validation, and the integrated motion.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numbers>
#include <random>
#include <string>

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/vehicle/models.hpp"
#include "vehicle/stepper.hpp"
#include "support/allocation_counter.hpp"


namespace marsden::vehicle {
namespace {

// Rodrigues' formula, kept local so the test does not lean on the Lie layer it checks
// nothing about.
Mat3 rot(const Vec3& w) {
  const double th = w.norm();
  Mat3 W;
  W << 0.0, -w.z(), w.y(), w.z(), 0.0, -w.x(), -w.y(), w.x(), 0.0;
  if (th < 1e-12) return Mat3::Identity() + W;
  return Mat3::Identity() + std::sin(th) / th * W + (1.0 - std::cos(th)) / (th * th) * W * W;
}

// Right perturbation g exp(delta) as the model's Jacobians define it: R exp(dtheta^),
// x + R dv (exact for the one-coordinate perturbations used here).
SE3 perturb(const SE3& g, const Vec6& d) {
  return SE3{g.R * rot(d.head<3>()), g.x + g.R * d.tail<3>()};
}

double yaw_of(const Mat3& R) { return std::atan2(R(1, 0), R(0, 0)); }

// A boat exercising every term: current, wind, pressure and a non-symmetric damping
// whose symmetric part is positive definite.
BoatParams busy_params() {
  BoatParams p;
  p.current = Vec3(0.3, -0.2, 0.05);
  p.wind_force = Vec3(40.0, 25.0, -5.0);
  p.wind_point = Vec3(0.2, -0.1, 0.6);
  p.pressure_P = 150.0;
  p.damping_E << 100.0, 20.0, 0.0, -10.0, 1000.0, 50.0, 5.0, 0.0, 2000.0;
  return p;
}

// Random pose near the floating equilibrium, small enough tilts that no buoyancy column
// reaches a clamp (the default draft is 0.111 m; tilts of 0.03 rad move the hull ends by
// at most 0.06 m).
SE3 near_equilibrium(const Boat& boat, std::mt19937& rng, bool capsized) {
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  SE3 g;
  const Mat3 tilt = rot(Vec3(0.03 * U(rng), 0.03 * U(rng), 0.0));
  const Mat3 yaw = rot(Vec3(0.0, 0.0, std::numbers::pi * U(rng)));
  // Upside down, the box floats at the same height (it is symmetric about z = 0).
  const Mat3 flip = capsized ? rot(Vec3(std::numbers::pi, 0.0, 0.0)) : Mat3::Identity();
  g.R = yaw * tilt * flip;
  g.x = Vec3(5.0 * U(rng), 5.0 * U(rng), boat.equilibrium_height() + 0.02 * U(rng));
  return g;
}

void expect_wrench_jacobians_match_central_differences(const Boat& boat) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const double eps = 1e-6;
  for (int trial = 0; trial < 8; ++trial) {
    const SE3 g = near_equilibrium(boat, rng, trial % 4 == 3);
    Vec6 xi;
    for (int i = 0; i < 6; ++i) xi[i] = 0.5 * U(rng);
    Vec6 f;
    Mat6 J_g, J_xi;
    boat.external_wrench(0.3, g, xi, f, &J_g, &J_xi);
    Mat6 fd_g, fd_xi;
    for (int k = 0; k < 6; ++k) {
      Vec6 d = Vec6::Zero();
      d[k] = eps;
      Vec6 fp, fm;
      boat.external_wrench(0.3, perturb(g, d), xi, fp, nullptr, nullptr);
      boat.external_wrench(0.3, perturb(g, -d), xi, fm, nullptr, nullptr);
      fd_g.col(k) = (fp - fm) / (2 * eps);
      boat.external_wrench(0.3, g, xi + d, fp, nullptr, nullptr);
      boat.external_wrench(0.3, g, xi - d, fm, nullptr, nullptr);
      fd_xi.col(k) = (fp - fm) / (2 * eps);
    }
    const double scale_g = 1.0 + J_g.cwiseAbs().maxCoeff();
    const double scale_xi = 1.0 + J_xi.cwiseAbs().maxCoeff();
    EXPECT_LT((J_g - fd_g).cwiseAbs().maxCoeff(), 1e-7 * scale_g)
        << "trial " << trial << "\nanalytic\n" << J_g << "\nfd\n" << fd_g;
    EXPECT_LT((J_xi - fd_xi).cwiseAbs().maxCoeff(), 1e-7 * scale_xi)
        << "trial " << trial << "\nanalytic\n" << J_xi << "\nfd\n" << fd_xi;
    // Passing only one Jacobian pointer gives the same blocks and wrench.
    Vec6 f2;
    Mat6 J_g2;
    boat.external_wrench(0.3, g, xi, f2, &J_g2, nullptr);
    EXPECT_EQ(f, f2);
    EXPECT_EQ(J_g, J_g2);
  }
}

TEST(Boat, ExternalWrenchJacobiansMatchCentralDifferences) {
  expect_wrench_jacobians_match_central_differences(Boat(busy_params()));
}

// With a smooth wet set the patch weights depend on the pose, and so enter J_f_g.
TEST(Boat, SmoothWetSetJacobiansMatchCentralDifferences) {
  BoatParams p = busy_params();
  p.wet_smoothing = 0.02;
  expect_wrench_jacobians_match_central_differences(Boat(p));
}

// The logistic weights tend to the sharp wet set as the width goes to zero.
TEST(Boat, SmoothWetSetTendsToTheSharpOne) {
  BoatParams p = busy_params();
  const Boat sharp(p);
  p.wet_smoothing = 1e-7;
  const Boat smooth(p);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (int trial = 0; trial < 8; ++trial) {
    const SE3 g = near_equilibrium(sharp, rng, false);
    Vec6 xi;
    for (int i = 0; i < 6; ++i) xi[i] = 0.5 * U(rng);
    Vec6 f_sharp, f_smooth;
    sharp.external_wrench(0.0, g, xi, f_sharp, nullptr, nullptr);
    smooth.external_wrench(0.0, g, xi, f_smooth, nullptr, nullptr);
    // Exact unless a patch centre lies within a few widths of the waterline (a 1e-6 m band).
    EXPECT_LT((f_sharp - f_smooth).norm(), 1e-9 * f_sharp.norm()) << "trial " << trial;
  }
}

TEST(Boat, ControlWrenchIsThrusterForceAndMoment) {
  BoatParams p;
  p.thruster_right = Vec3(-1.2, -0.5, -0.2);
  p.thruster_left = Vec3(-1.1, 0.45, 0.1);
  const Boat boat(p);
  InputVec u(2);
  u << 30.0, -12.0;
  Vec6 f;
  InputJacobian<SE3> J_u, J_gamma;
  boat.control_wrench(InputVec(0), u, f, &J_u, &J_gamma);
  Vec6 expected = Vec6::Zero();
  for (int i = 0; i < 2; ++i) {
    const Vec3 c = i == 0 ? p.thruster_right : p.thruster_left;
    const Vec3 force = u[i] * Vec3::UnitX();
    expected.head<3>() += c.cross(force);
    expected.tail<3>() += force;
  }
  EXPECT_LT((f - expected).cwiseAbs().maxCoeff(), 1e-12);
  ASSERT_EQ(J_u.rows(), 6);
  ASSERT_EQ(J_u.cols(), 2);
  EXPECT_LT((J_u * u - f).cwiseAbs().maxCoeff(), 1e-12);
  Vec6 col_r;
  col_r << 0.0, p.thruster_right.z(), -p.thruster_right.y(), 1.0, 0.0, 0.0;
  EXPECT_EQ(J_u.col(0), col_r);
  EXPECT_EQ(J_gamma.cols(), 0);
  EXPECT_THROW(boat.control_wrench(InputVec(0), InputVec::Zero(3), f, nullptr, nullptr),
               InputError);
}

TEST(Boat, LevelHullAtEquilibriumHeightIsInBalance) {
  const BoatParams p;
  const Boat boat(p);
  const double draft = p.hull_size.z() / 2 - boat.equilibrium_height();
  EXPECT_GT(draft, 0.0);
  EXPECT_LT(draft, p.hull_size.z());
  for (double yaw : {0.0, 0.7, -2.5}) {
    SE3 g;
    g.R = rot(Vec3(0.0, 0.0, yaw));
    g.x = Vec3(1.0, -2.0, boat.equilibrium_height());
    Vec6 f;
    boat.external_wrench(0.0, g, Vec6::Zero(), f, nullptr, nullptr);
    const double mg = p.mass * p.gravity;
    EXPECT_LT(f.cwiseAbs().maxCoeff(), 1e-9 * mg) << f.transpose();
    // Lower is pushed up, higher falls.
    g.x.z() -= 0.01;
    boat.external_wrench(0.0, g, Vec6::Zero(), f, nullptr, nullptr);
    EXPECT_NEAR(f[5], p.water_density * p.gravity * p.hull_size.x() * p.hull_size.y() * 0.01,
                1e-6 * mg);
  }
}

TEST(Boat, TiltedHullIsRighted) {
  const BoatParams p;
  const Boat boat(p);
  const double L = p.hull_size.x(), B = p.hull_size.y(), H = p.hull_size.z();
  const double d = H / 2 - boat.equilibrium_height();
  // Wall-sided box, small angle: righting moment m g GM sin(phi), GM = BM - BG.
  const double GM_roll = B * B / (12 * d) - (H / 2 - d / 2);
  const double GM_pitch = L * L / (12 * d) - (H / 2 - d / 2);
  const double mg = p.mass * p.gravity;
  const double phi = 0.02;
  for (int axis = 0; axis < 2; ++axis) {
    for (double sgn : {1.0, -1.0}) {
      SE3 g;
      g.R = rot(sgn * phi * Vec3::Unit(axis));
      g.x = Vec3(0.0, 0.0, boat.equilibrium_height());
      Vec6 f;
      boat.external_wrench(0.0, g, Vec6::Zero(), f, nullptr, nullptr);
      const double GM = axis == 0 ? GM_roll : GM_pitch;
      EXPECT_LT(sgn * f[axis], 0.0) << "axis " << axis;
      EXPECT_NEAR(f[axis], -sgn * mg * GM * std::sin(phi), 0.01 * mg * GM * phi) << "axis " << axis;
      EXPECT_NEAR(f[2], 0.0, 1e-9 * mg);
    }
  }
}

// At rest in still water (no drag, no pressure, no wind) the external wrench is the
// negative gradient of the potential: f = -d/d delta U(g exp(delta)).
TEST(Boat, RestWrenchIsMinusGradientOfPotential) {
  BoatParams p;
  p.pressure_P = 0.0;
  p.wind_force.setZero();
  p.current.setZero();
  const Boat boat(p);
  const double eps = 1e-6;
  for (const Vec3& angles : {Vec3(0.0, 0.0, 0.3), Vec3(0.05, -0.03, 1.0), Vec3(0.2, 0.1, -2.0)}) {
    SE3 g;
    g.R = rot(angles);
    g.x = Vec3(0.5, -1.0, boat.equilibrium_height() + 0.02);
    Vec6 f;
    boat.external_wrench(0.0, g, Vec6::Zero(), f, nullptr, nullptr);
    for (int i = 0; i < 6; ++i) {
      const Vec6 e = eps * Vec6::Unit(i);
      const double dU = (boat.potential_energy(g * SE3::exp(e)) -
                         boat.potential_energy(g * SE3::exp(-e))) / (2 * eps);
      EXPECT_NEAR(f[i], -dU, 1e-5 * p.mass * p.gravity) << "component " << i;
    }
  }
}

TEST(Boat, SubmergedVolumeOfLevelBoxIsClosedForm) {
  const BoatParams p;
  const Boat boat(p);
  const double L = p.hull_size.x(), B = p.hull_size.y(), H = p.hull_size.z();
  for (double z : {1.0, 0.29, 0.1, 0.0, -0.17, -0.31, -2.0}) {
    SE3 g;
    g.R = rot(Vec3(0.0, 0.0, 1.1));
    g.x = Vec3(3.0, 4.0, z);
    Vec3 c;
    const double V = boat.submerged_volume(g, &c);
    const double wet = std::clamp(H / 2 - z, 0.0, H);
    EXPECT_NEAR(V, L * B * wet, 1e-12) << "z = " << z;
    if (wet > 0.0) {
      EXPECT_NEAR(c.z(), z - H / 2 + wet / 2, 1e-12);
      EXPECT_NEAR(c.x(), 3.0, 1e-12);
      EXPECT_NEAR(c.y(), 4.0, 1e-12);
    }
  }
  // Capsized, the same.
  SE3 g;
  g.R = rot(Vec3(std::numbers::pi, 0.0, 0.0));
  g.x.z() = 0.1;
  EXPECT_NEAR(boat.submerged_volume(g, nullptr), L * B * (H / 2 - 0.1), 1e-12);
  EXPECT_NEAR(p.water_density * L * B * (H / 2 - boat.equilibrium_height()), p.mass, 1e-9);
}

TEST(Boat, HullOnItsSideGivesFiniteWrench) {
  // |n_z| ~ 0: the columns lie flat, the model must not divide by n_z.
  const BoatParams p;
  const Boat boat(p);
  for (double phi : {std::numbers::pi / 2, std::numbers::pi / 2 + 1e-9, -std::numbers::pi / 2}) {
    SE3 g;
    g.R = rot(Vec3(phi, 0.0, 0.0));
    g.x.z() = 0.1;
    Vec6 f;
    Mat6 J_g, J_xi;
    boat.external_wrench(0.0, g, Vec6::Constant(0.2), f, &J_g, &J_xi);
    EXPECT_TRUE(f.allFinite() && J_g.allFinite() && J_xi.allFinite()) << "phi " << phi;
    Vec3 c;
    const double V = boat.submerged_volume(g, &c);
    // On its side the beam is vertical: wet depth B/2 - 0.1 of L x H, to the column spacing.
    const double wet = p.hull_size.y() / 2 - 0.1;
    EXPECT_NEAR(V, p.hull_size.x() * p.hull_size.z() * wet,
                p.hull_size.prod() / 16) << "phi " << phi;
    EXPECT_LT(c.z(), 0.0);
  }
}

TEST(Boat, HydrodynamicDragOfLevelHullIsMinusEv) {
  BoatParams p;
  p.damping_E << 100.0, 20.0, 0.0, -10.0, 1000.0, 50.0, 5.0, 0.0, 2000.0;
  const Boat still(p);
  p.current = Vec3(0.4, 0.1, 0.0);
  const Boat flowing(p);
  SE3 g;
  g.R = rot(Vec3(0.0, 0.0, 0.6));
  g.x.z() = still.equilibrium_height();
  const Vec3 v(1.0, -0.3, 0.2);
  Vec6 xi;
  xi << 0.0, 0.0, 0.0, v;
  Vec6 f0, f;
  still.external_wrench(0.0, g, Vec6::Zero(), f0, nullptr, nullptr);
  EXPECT_LT(f0.cwiseAbs().maxCoeff(), 1e-9 * p.mass * p.gravity);
  still.external_wrench(0.0, g, xi, f, nullptr, nullptr);
  // The patch weights sum to one, so a translation gives the total damping force.
  EXPECT_LT((f.tail<3>() - (-p.damping_E * v)).cwiseAbs().maxCoeff(), 1e-9);
  // Drifting with the current (body velocity R^T eta) feels no drag.
  xi.tail<3>() = g.R.transpose() * p.current;
  flowing.external_wrench(0.0, g, xi, f, nullptr, nullptr);
  EXPECT_LT(f.cwiseAbs().maxCoeff(), 1e-9);
  // Held still, the current pushes along itself.
  flowing.external_wrench(0.0, g, Vec6::Zero(), f, nullptr, nullptr);
  EXPECT_LT((f.tail<3>() - p.damping_E * g.R.transpose() * p.current).cwiseAbs().maxCoeff(),
            1e-9);
  // Out of the water, no hydrodynamic force at all: gravity only.
  g.x.z() = 5.0;
  flowing.external_wrench(0.0, g, xi, f, nullptr, nullptr);
  Vec6 grav;
  grav << 0.0, 0.0, 0.0, 0.0, 0.0, -p.mass * p.gravity;
  EXPECT_LT((f - grav).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Boat, WrenchEvaluationDoesNotAllocate) {
  const Boat boat(busy_params());
  SE3 g;
  g.x.z() = boat.equilibrium_height();
  Vec6 xi = Vec6::Constant(0.1), f;
  Mat6 J_g, J_xi;
  InputVec u(2);
  u << 1.0, 2.0;
  InputVec gamma(0);
  InputJacobian<SE3> J_u, J_gamma;
  EXPECT_EQ(test_support::allocations_during([&] {
              boat.external_wrench(0.0, g, xi, f, &J_g, &J_xi);
              boat.control_wrench(gamma, u, f, &J_u, &J_gamma);
            }),
            0);
}

void expect_rejected(BoatParams p, const std::string& field) {
  try {
    Boat boat(p);
    ADD_FAILURE() << "accepted bad '" << field << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + field + "'"), std::string::npos) << e.what();
  }
}

TEST(Boat, RejectsBadParameters) {
  const BoatParams ok;
  EXPECT_NO_THROW(Boat{ok});
  BoatParams p = ok;
  p.mass = -1.0;
  expect_rejected(p, "mass");
  p = ok;
  p.mass = 1.01 * ok.water_density * ok.hull_size.prod();  // would sink
  expect_rejected(p, "mass");
  p = ok;
  p.J_principal.y() = 0.0;
  expect_rejected(p, "J_principal");
  p = ok;
  p.hull_size.z() = -0.5;
  expect_rejected(p, "hull_size");
  p = ok;
  p.patches_per_side = 0;
  expect_rejected(p, "patches_per_side");
  p = ok;
  p.wet_smoothing = -0.01;
  expect_rejected(p, "wet_smoothing");
  p = ok;
  p.damping_E(1, 1) = -5.0;
  expect_rejected(p, "damping_E");
  p = ok;
  p.damping_E(0, 1) = 1e4;  // symmetric part indefinite
  expect_rejected(p, "damping_E");
  p = ok;
  p.current.x() = std::nan("");
  expect_rejected(p, "current");
  p = ok;
  p.wind_force.z() = INFINITY;
  expect_rejected(p, "wind_force");
  p = ok;
  p.water_density = 0.0;
  expect_rejected(p, "water_density");
  p = ok;
  p.pressure_P = -1.0;
  expect_rejected(p, "pressure_P");
}

// ---- Integrated motion (discrete Euler-Poincare, vehicles eqs. (9)-(10)) ----

struct BoatRun {
  VehicleState<SE3> end;
  double max_abs_y = 0.0;
  double max_abs_yaw = 0.0;
};

BoatRun simulate(const std::shared_ptr<const Boat>& boat, const SE3& g0, double u_r, double u_l,
                 double dt, double T) {
  HolonomicOptions<SE3> opt;
  auto stepper = make_stepper<SE3>(Method::VI, boat, opt);
  VehicleState<SE3> s0;
  s0.g = g0;
  stepper->reset(s0, dt);
  InputVec u(2);
  u << u_r, u_l;
  const ConstantInputs inputs(InputVec(0), u);
  BoatRun run;
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k) {
    const NewtonStatus st = stepper->step(inputs);
    EXPECT_TRUE(st.converged) << "step " << k << " residual " << st.residual_norm;
    if (!st.converged) break;
    const VehicleState<SE3> s = stepper->state();
    run.max_abs_y = std::max(run.max_abs_y, std::abs(s.g.x.y()));
    run.max_abs_yaw = std::max(run.max_abs_yaw, std::abs(yaw_of(s.g.R)));
  }
  run.end = stepper->state();
  return run;
}

TEST(BoatDynamics, ReleasedAboveEquilibriumSettlesAtTheDraft) {
  auto boat = std::make_shared<const Boat>(BoatParams{});
  const double H = boat->params().hull_size.z();
  const double expected = H / 2 - boat->equilibrium_height();
  for (double dt : {0.02, 0.05}) {
    SE3 g0;
    g0.x.z() = boat->equilibrium_height() + 0.05;
    const BoatRun run = simulate(boat, g0, 0.0, 0.0, dt, 20.0);
    const double draft = H / 2 - run.end.g.x.z();
    EXPECT_NEAR(draft, expected, 1e-4) << "dt = " << dt;
    EXPECT_LT(run.end.xi.norm(), 1e-4) << "dt = " << dt;
    EXPECT_LT((run.end.g.R - Mat3::Identity()).norm(), 1e-9) << "dt = " << dt;
    std::printf("boat: dt = %.2f settled draft %.6f m (closed form %.6f m), |xi| = %.2e\n", dt,
                draft, expected, run.end.xi.norm());
  }
}

TEST(BoatDynamics, EqualThrustGoesStraight) {
  auto boat = std::make_shared<const Boat>(BoatParams{});
  SE3 g0;
  g0.x.z() = boat->equilibrium_height();
  const BoatRun run = simulate(boat, g0, 40.0, 40.0, 0.02, 20.0);
  EXPECT_GT(run.end.xi[3], 0.3);  // forward body speed, m/s
  EXPECT_GT(run.end.g.x.x(), 3.0);
  EXPECT_LT(run.max_abs_y, 1e-6);
  EXPECT_LT(run.max_abs_yaw, 1e-6);
  std::printf("boat: straight run x = %.3f m, v = %.3f m/s\n", run.end.g.x.x(), run.end.xi[3]);
}

TEST(BoatDynamics, StrongerRightThrusterTurnsLeft) {
  auto boat = std::make_shared<const Boat>(BoatParams{});
  SE3 g0;
  g0.x.z() = boat->equilibrium_height();
  const BoatRun run = simulate(boat, g0, 60.0, 20.0, 0.02, 10.0);
  EXPECT_GT(run.end.xi[2], 0.0);  // yaw rate about body z (up)
  EXPECT_GT(yaw_of(run.end.g.R), 0.0);
  EXPECT_GT(run.end.g.x.y(), 0.0);  // drifted to the left of the start heading
  std::printf("boat: turn yaw = %.3f rad, yaw rate = %.4f rad/s\n", yaw_of(run.end.g.R),
              run.end.xi[2]);
  // Mirror image: left stronger turns right.
  const BoatRun mirror = simulate(boat, g0, 20.0, 60.0, 0.02, 10.0);
  EXPECT_NEAR(yaw_of(mirror.end.g.R), -yaw_of(run.end.g.R), 1e-6);
}

}  // namespace
}  // namespace marsden::vehicle
