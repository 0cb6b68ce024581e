// Hard contact in the maximal engine against closed forms (docs/contact.md): a box sliding
// to rest with Coulomb friction, blocks held and sliding on inclines, a sphere rolling down
// an incline, a box tossed onto the ground coming to rest on a face, and structural
// properties: no penetration beyond the solver's tolerance, energy that never rises with
// plastic contact, the sparse block LDU agreeing with a dense LU through the contact rows.
#include <cmath>
#include <memory>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/sim/maximal.hpp"
#include "maximal/contact_checks.hpp"
#include "maximal/contact_rows.hpp"

namespace marsden::maximal {
namespace {

constexpr double kG = 9.81;

Surface ground(double friction) { return {"ground", geometry::HalfSpace(Vec3::UnitZ(), 0.0), friction}; }

// An incline through the origin rising along +x at angle a (rad).
Surface incline(double a, double friction) {
  return {"incline", geometry::HalfSpace(Vec3(-std::sin(a), 0.0, std::cos(a)), 0.0), friction};
}

Model box_model(const Vec3& half, double friction, const Surface& surface, double mass = 1.0) {
  Contacts contacts;
  contacts.shapes.push_back({"box", 0, geometry::Box(half), friction});
  contacts.surfaces.push_back(surface);
  return Model({solid_box("box", mass, half)}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
}

Model sphere_model(double radius, double friction, const Surface& surface) {
  Contacts contacts;
  contacts.shapes.push_back({"ball", 0, geometry::Sphere(radius), friction});
  contacts.surfaces.push_back(surface);
  return Model({solid_sphere("ball", 1.0, radius)}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
}

// Steps and checks each step's status; returns false on the first failure.
void run(const Model& model, Data& data, const StepOptions& options, int steps) {
  for (int k = 0; k < steps; ++k) {
    const StepStatus status = step(model, data, options);
    ASSERT_TRUE(status.ok()) << "step " << k << ": " << describe(status.failure)
                             << ", residual " << status.newton.residual_norm
                             << ", complementarity " << status.complementarity;
  }
}


// A box of edge 0.2 m sliding from v = (4, 0.8, 0) m/s with mu = 0.25 stops after
// |v|^2 / (2 mu g) = 3.392457 m (error O(dt)) on its heading atan(0.2).
double sliding_distance(double dt, double* heading_error) {
  const Vec3 half(0.1, 0.1, 0.1);
  const Model model = box_model(half, 0.25, ground(0.0));
  BodyState st;
  st.x = Vec3(0.0, 0.0, half.z());
  st.v = Vec3(4.0, 0.8, 0.0);
  Data data(model, {st});
  StepOptions options;
  options.dt = dt;
  const int steps = static_cast<int>(std::ceil(2.0 / dt));  // stops after 1.66 s
  run(model, data, options, steps);
  EXPECT_LT(data.state[0].v.norm(), 1e-9);
  EXPECT_LE(test::excess_penetration(model, data, options), 0.0);
  const Vec3 d = data.state[0].x - st.x;
  *heading_error = std::abs(std::atan2(d.y(), d.x()) - std::atan2(0.8, 4.0));
  return d.head<2>().norm();
}

TEST(Contact, SlidingBoxStopsAtTheClosedFormDistanceOnItsHeading) {
  const double exact = (16.0 + 0.64) / (2.0 * 0.25 * kG);
  EXPECT_NEAR(exact, 3.392457, 1e-6);
  double heading_coarse = 0.0, heading_fine = 0.0;
  const double coarse = sliding_distance(0.01, &heading_coarse);
  const double fine = sliding_distance(0.005, &heading_fine);
  EXPECT_LT(std::abs(coarse - exact) / exact, 0.01);
  // First order: halving dt halves the error (ratio 2 +- 0.3).
  const double ratio = std::abs(coarse - exact) / std::abs(fine - exact);
  EXPECT_NEAR(ratio, 2.0, 0.3) << coarse << " " << fine;
  EXPECT_LT(heading_coarse, 1e-9);
  EXPECT_LT(heading_fine, 1e-9);
}

TEST(Contact, FrictionlessBoxKeepsItsVelocity) {
  const Vec3 half(0.1, 0.2, 0.05);
  const Model model = box_model(half, 0.0, ground(0.0));
  BodyState st;
  st.x = Vec3(0.0, 0.0, half.z());
  st.v = Vec3(1.5, -0.7, 0.0);
  Data data(model, {st});
  StepOptions options;
  run(model, data, options, 200);
  EXPECT_LT((data.state[0].v - st.v).norm(), 1e-9);
  EXPECT_NEAR(data.state[0].x.z(), half.z(), 1e-9);
  // The surface carries the weight, shared by the four lower vertices.
  double normal = 0.0;
  for (const ContactState& c : data.contact) normal += c.normal_force;
  EXPECT_NEAR(normal, kG, 1e-7);
  // The library's measure of the sink beyond the allowance is this test's.
  EXPECT_DOUBLE_EQ(excess_penetration(model, data, options),
                   test::excess_penetration(model, data, options));
}

// A box resting face-down on the incline z = x tan(a): its centre half its height above
// the plane along the normal, at rest.
Data box_on_incline(const Model& model, double a, const Vec3& half) {
  BodyState st;
  const Vec3 n(-std::sin(a), 0.0, std::cos(a));
  st.x = half.z() * n;
  st.q = Quat::exp(Vec3(0.0, -a, 0.0));
  return Data(model, {st});
}

TEST(Contact, BlockOnAShallowInclineStaysPut) {
  const double a = 20.0 * std::numbers::pi / 180.0;
  const Vec3 half(0.1, 0.1, 0.1);
  const Model model = box_model(half, 0.5, incline(a, 0.0));
  Data data = box_on_incline(model, a, half);
  const Vec3 x0 = data.state[0].x;
  StepOptions options;
  run(model, data, options, 1000);  // 10 s
  EXPECT_LT((data.state[0].x - x0).norm(), 1e-9);
}

TEST(Contact, BlockOnASteepInclineSlidesAtTheClosedFormAcceleration) {
  const double a = 30.0 * std::numbers::pi / 180.0;
  const double expected = kG * (std::sin(a) - 0.15 * std::cos(a));
  EXPECT_NEAR(expected, 3.630644, 1e-6);
  const Vec3 half(0.1, 0.1, 0.1);
  const Model model = box_model(half, 0.15, incline(a, 0.0));
  Data data = box_on_incline(model, a, half);
  StepOptions options;
  run(model, data, options, 100);  // 1 s
  // Down the slope: the discrete velocity gains a dt each step, exactly.
  const Vec3 down(-std::cos(a), 0.0, -std::sin(a));
  EXPECT_NEAR(data.state[0].v.dot(down) / 1.0, expected, 1e-7);
  EXPECT_LE(test::excess_penetration(model, data, options), 0.0);
}

// A solid sphere rolling without slipping down an incline accelerates at (5/7) g sin(a);
// the step's rotation update makes the discrete acceleration second order in dt.
double rolling_acceleration(double dt) {
  const double a = 15.0 * std::numbers::pi / 180.0;
  const double r = 0.1;
  const Model model = sphere_model(r, 1.0, incline(a, 0.0));
  BodyState st;
  st.x = r * Vec3(-std::sin(a), 0.0, std::cos(a));
  Data data(model, {st});
  StepOptions options;
  options.dt = dt;
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  run(model, data, options, steps);
  const Vec3 down(-std::cos(a), 0.0, -std::sin(a));
  return data.state[0].v.dot(down) / (steps * dt);
}

TEST(Contact, SphereRollsDownAnInclineAtTheClosedFormAcceleration) {
  const double exact = 5.0 / 7.0 * kG * std::sin(15.0 * std::numbers::pi / 180.0);
  EXPECT_NEAR(exact, 1.813582, 1e-6);
  const double coarse = rolling_acceleration(0.01);
  const double fine = rolling_acceleration(0.005);
  EXPECT_LT(std::abs(coarse - exact) / exact, 0.002) << coarse;
  EXPECT_NEAR(std::log2(std::abs(coarse - exact) / std::abs(fine - exact)), 2.0, 0.1)
      << coarse << " " << fine;
}

// Dojo's box toss (edge 0.5 m, mu = 0.1): it comes to rest on a face at every step size.
TEST(Contact, TossedBoxComesToRestOnAFace) {
  const Vec3 half(0.25, 0.25, 0.25);
  const Model model = box_model(half, 0.1, ground(0.0));
  for (const double dt : {0.1, 0.05, 0.01, 0.005}) {
    BodyState st;
    st.x = Vec3(0.0, 0.0, 1.0);
    st.v = Vec3(1.0, 0.3, 0.2);
    st.omega = Vec3(2.5, -1.0, 2.0);
    Data data(model, {st});
    StepOptions options;
    options.dt = dt;
    const double e0 = energy(model, data.state);
    double worst_rise = -1.0;
    const int steps = static_cast<int>(std::lround(6.0 / dt));
    for (int k = 0; k < steps; ++k) {
      const StepStatus status = step(model, data, options);
      ASSERT_TRUE(status.ok()) << "dt " << dt << " step " << k << ": " << describe(status.failure);
      worst_rise = std::max(worst_rise, energy(model, data.state) - e0);
      ASSERT_LE(test::excess_penetration(model, data, options), 0.0) << "dt " << dt << " step " << k;
    }
    EXPECT_LT(data.state[0].v.norm(), 1e-8) << "dt " << dt;
    EXPECT_LT(data.state[0].omega.norm(), 1e-8) << "dt " << dt;
    EXPECT_NEAR(data.state[0].x.z(), 0.25, 1e-3) << "dt " << dt;
    EXPECT_LE(worst_rise, 0.0) << "dt " << dt;
  }
}

// A ball of radius 0.1 m, restitution e, released at rest with its lowest point 1 m above
// the ground. The state's velocity is that of the interval ending at t = 0 (integrator.hpp),
// so rest at t = 0 is v = -g dt / 2.
struct Ball {
  Model model;
  Data data;
  StepOptions options;
  Ball(double e, double dt)
      : model([e] {
          Contacts contacts;
          contacts.shapes.push_back({"ball", 0, geometry::Sphere(0.1), 0.0, e});
          contacts.surfaces.push_back(ground(0.0));
          return Model({solid_sphere("ball", 1.0, 0.1)}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
        }()),
        data(model) {
    options.dt = dt;
    data.state[0].x = Vec3(0.0, 0.0, 1.1);
    data.state[0].v = Vec3(0.0, 0.0, 0.5 * kG * dt);
  }
  // The height its lowest point would reach (m): gap plus the instantaneous velocity's.
  double apex() const {
    const double v = data.state[0].v.z() - 0.5 * kG * options.dt;
    return data.state[0].x.z() - 0.1 + v * v / (2.0 * kG);
  }
};

// e = 1: impacts at sqrt(2 / g) = 0.451524 s and every 0.903047 s after, every apex at 1 m.
TEST(Impacts, ElasticBallBouncesAtTheClosedFormTimesToItsHeight) {
  const double first = std::sqrt(2.0 / kG), period = 2.0 * first;
  EXPECT_NEAR(first, 0.451524, 1e-6);
  EXPECT_NEAR(period, 0.903047, 1e-6);
  for (const double dt : {0.01, 0.1}) {
    Ball ball(1.0, dt);
    int impacts = 0;
    double worst_apex = 0.0;
    const int steps = static_cast<int>(std::lround(5.0 / dt));
    for (int k = 0; k < steps; ++k) {
      const StepStatus status = step(ball.model, ball.data, ball.options);
      ASSERT_TRUE(status.ok()) << "dt " << dt << " step " << k << ": " << describe(status.failure);
      if (status.impacts > 0) {
        ASSERT_EQ(status.impacts, 1);
        EXPECT_NEAR(ball.data.contact[0].impact_time, first + impacts * period, 1e-10)
            << "dt " << dt << ", impact " << impacts;
        ++impacts;
      }
      worst_apex = std::max(worst_apex, std::abs(ball.apex() - 1.0));
      ASSERT_GE(ball.data.contact[0].phi, -1e-12) << "dt " << dt << " step " << k;
    }
    EXPECT_EQ(impacts, 6) << "dt " << dt;
    EXPECT_LT(worst_apex, 1e-10) << "dt " << dt;
  }
}

// Energy does not drift: 1100 bounces over 10^5 steps keep the apex at 1 m.
TEST(Impacts, ElasticBallKeepsItsEnergyOverManyBounces) {
  Ball ball(1.0, 0.01);
  double worst_apex = 0.0;
  for (int k = 0; k < 100000; ++k) {
    ASSERT_TRUE(step(ball.model, ball.data, ball.options).ok()) << "step " << k;
    worst_apex = std::max(worst_apex, std::abs(ball.apex() - 1.0));
  }
  EXPECT_LT(worst_apex, 1e-9);
}

// e = 0.5: each apex e^2 times the last, 0.25, 0.0625, 0.015625 m, then the ball rests.
TEST(Impacts, HalfElasticBallLosesThreeQuartersOfItsHeightPerBounceThenRests) {
  Ball ball(0.5, 0.01);
  std::vector<double> apexes;
  for (int k = 0; k < 500; ++k) {
    const StepStatus status = step(ball.model, ball.data, ball.options);
    ASSERT_TRUE(status.ok()) << "step " << k << ": " << describe(status.failure);
    if (status.impacts > 0) apexes.push_back(ball.apex());
  }
  ASSERT_GE(apexes.size(), 3u);
  EXPECT_NEAR(apexes[0], 0.25, 1e-10);
  EXPECT_NEAR(apexes[1], 0.0625, 1e-10);
  EXPECT_NEAR(apexes[2], 0.015625, 1e-10);
  EXPECT_LT(ball.data.state[0].v.norm(), 1e-8);
  EXPECT_NEAR(ball.data.state[0].x.z(), 0.1, 1e-6);
}

// Energy at the instants of the state (J): the interval's velocity v plus half a step of
// gravity, and the body momentum of eq. (33) (the variables an impact's impulse acts on).
double instant_energy(const Model& model, const Data& data, double dt) {
  const Body& body = model.bodies()[0];
  const BodyState& st = data.state[0];
  const Vec3 v = st.v + 0.5 * dt * model.gravity();
  const Vec3 Jw = body.inertia * st.omega;
  const double root = std::sqrt(4.0 / (dt * dt) - st.omega.squaredNorm());
  const Vec3 pi = 0.5 * dt * (root * Jw - st.omega.cross(Jw));
  return 0.5 * body.mass * v.squaredNorm() + 0.5 * pi.dot(body.inertia.inverse() * pi) -
         body.mass * model.gravity().dot(st.x);
}

// A spinning box landing on its corners without friction: the impulses act along the
// normal only, so the horizontal velocity never changes; with e = 1 the energy stays to
// round-off (free flight conserves it, and so does each impulse), with e = 0.5 it never
// rises.
TEST(Impacts, SpinningBoxKeepsItsHorizontalVelocityAndEnergyDoesNotRise) {
  const Vec3 half(0.25, 0.15, 0.1);
  for (const double e : {1.0, 0.5}) {
    Contacts contacts;
    contacts.shapes.push_back({"box", 0, geometry::Box(half), 0.0, e});
    contacts.surfaces.push_back(ground(0.0));
    const Model model({solid_box("box", 2.0, half)}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
    BodyState st;
    st.x = Vec3(0.0, 0.0, 1.0);
    st.v = Vec3(0.7, -0.4, 0.0);
    st.omega = Vec3(3.0, -2.0, 1.0);
    Data data(model, {st});
    StepOptions options;
    options.dt = 0.005;
    const double e0 = instant_energy(model, data, options.dt);
    double worst = 0.0, rise = -1.0;
    int impacts = 0;
    for (int k = 0; k < 2000; ++k) {
      const StepStatus status = step(model, data, options);
      ASSERT_TRUE(status.ok()) << "e " << e << " step " << k << ": " << describe(status.failure);
      impacts += status.impacts;
      EXPECT_LT((data.state[0].v.head<2>() - st.v.head<2>()).norm(), 1e-12) << "step " << k;
      const double change = instant_energy(model, data, options.dt) - e0;
      worst = std::max(worst, std::abs(change));
      rise = std::max(rise, change);
    }
    EXPECT_GT(impacts, 3) << "e " << e;
    if (e == 1.0) EXPECT_LT(worst, 1e-9 * e0);
    else EXPECT_LE(rise, 1e-10 * e0);
  }
}

TEST(Impacts, BadRestitutionIsNamed) {
  Contacts contacts;
  contacts.shapes.push_back({"ball", 0, geometry::Sphere(0.1), 0.0, 1.5});
  contacts.surfaces.push_back(ground(0.0));
  const std::vector<Body> bodies{solid_sphere("b", 1.0, 0.1), solid_sphere("c", 1.0, 0.1)};
  try {
    Model(bodies, {}, Vec3(0, 0, -kG), {}, contacts);
    FAIL() << "restitution 1.5 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'ball'"), std::string::npos) << e.what();
  }
  contacts.shapes[0].restitution = 0.5;
  Joint hinge;
  hinge.name = "hinge";
  hinge.type = JointType::Revolute;
  hinge.parent = 1;
  hinge.child = 0;
  try {
    Model(bodies, {hinge}, Vec3(0, 0, -kG), {}, contacts);
    FAIL() << "restitution on a body with a joint was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'hinge'"), std::string::npos) << e.what();
  }
}

// Derivatives through contact (docs/contact.md): a box with friction and a frictionless
// sphere on it, tilted and moving just above the ground.
Model relaxed_box() {
  const Vec3 half(0.1, 0.2, 0.15);
  Contacts contacts;
  contacts.shapes.push_back({"box", 0, geometry::Box(half), 0.5});
  contacts.shapes.push_back(
      {"knob", 0, geometry::Sphere(0.05, SE3{Mat3::Identity(), Vec3(0.05, -0.1, 0.2)}), 0.0});
  contacts.surfaces.push_back(ground(0.0));
  return Model({solid_box("box", 2.0, half)}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
}

BodyState relaxed_box_state() {
  BodyState st;
  st.x = Vec3(0.1, -0.2, 0.26);
  st.q = Quat::exp(Vec3(0.3, -0.2, 0.5));
  st.v = Vec3(0.8, -0.3, -0.4);
  st.omega = Vec3(0.7, 1.1, -0.6);
  return st;
}

// The relaxed residual's Jacobian blocks against central differences of the residual, in
// the unknowns (s, z) and the state (retract_state's chart), at unknowns off the solution.
TEST(DerivativesThroughContact, RelaxedResidualBlocksMatchCentralDifferences) {
  const Model model = relaxed_box();
  Data data(model, {relaxed_box_state()});
  const double dt = 0.01, kappa = 1e-4, eps = 1e-6;
  const int n = system_size(model), m = contact_unknowns_size(model);
  ASSERT_EQ(m, 8 * 7 + 2);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0.1, 1.0);
  Eigen::VectorXd s(n), z(m);
  s << 0.7, -0.2, -0.5, 0.9, 1.0, -0.4;
  for (int i = 0; i < m; ++i) z[i] = unit(rng);
  ResidualBlocks blocks;
  relaxed_residual_blocks(model, data, dt, kappa, eps, s, z, blocks);
  const auto r_at = [&](const Data& d, const Eigen::VectorXd& sz) {
    ResidualBlocks b;
    relaxed_residual_blocks(model, d, dt, kappa, eps, sz.head(n), sz.tail(m), b);
    return Eigen::VectorXd(b.r);
  };
  const double h = 1e-6;
  Eigen::VectorXd sz(n + m);
  sz << s, z;
  for (int j = 0; j < n + m; ++j) {
    Eigen::VectorXd plus = sz, minus = sz;
    plus[j] += h;
    minus[j] -= h;
    const Eigen::VectorXd fd = (r_at(data, plus) - r_at(data, minus)) / (2.0 * h);
    EXPECT_LT((fd - blocks.J_r_s.col(j)).cwiseAbs().maxCoeff(),
              1e-6 * std::max(1.0, fd.cwiseAbs().maxCoeff()))
        << "unknown " << j;
  }
  for (int j = 0; j < 12; ++j) {
    Eigen::VectorXd delta = Eigen::VectorXd::Zero(12);
    delta[j] = h;
    Data plus = data, minus = data;
    plus.state = retract_state(data.state, delta);
    minus.state = retract_state(data.state, -delta);
    const Eigen::VectorXd fd = (r_at(plus, sz) - r_at(minus, sz)) / (2.0 * h);
    EXPECT_LT((fd - blocks.J_r_state.col(j)).cwiseAbs().maxCoeff(),
              1e-6 * std::max(1.0, fd.cwiseAbs().maxCoeff()))
        << "state entry " << j;
  }
}

// The relaxed step's exact derivatives (sim::System::step_derivatives) against central
// differences of the relaxed step in every direction of the state's chart, with the box
// resting on four corners and sliding; and the step stops on the central path.
TEST(DerivativesThroughContact, StepDerivativesEqualCentralDifferencesOfTheRelaxedStep) {
  sim::MaximalSetup setup;
  setup.model = std::make_shared<const Model>(relaxed_box());
  BodyState st;
  st.x = Vec3(0.0, 0.0, 0.15);
  st.v = Vec3(0.6, 0.2, 0.0);
  st.omega = Vec3(0.0, 0.0, 0.8);
  setup.state0 = {st};
  setup.step.contact_relaxation = 1e-4;
  setup.step.newton.tolerance = 1e-14;
  setup.step.complementarity_tolerance = 1e-16;
  auto system = sim::make_maximal_system(setup);
  const double dt = 0.01;
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(system->step(k * dt, dt).converged);
  ASSERT_TRUE(system->has_step_derivatives());
  const int nx = system->state_size(), nt = system->tangent_size();
  Eigen::VectorXd x(nx);
  system->get_state({x.data(), std::size_t(nx)});
  Eigen::MatrixXd A, B;
  system->step_derivatives(0.0, dt, {}, A, B);
  const auto F = [&](const Eigen::VectorXd& start) {
    system->set_state({start.data(), std::size_t(nx)});
    EXPECT_TRUE(system->step(0.0, dt).converged);
    Eigen::VectorXd out(nx);
    system->get_state({out.data(), std::size_t(nx)});
    return out;
  };
  const auto chart_diff = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    Eigen::VectorXd out(nt);
    system->state_difference({b.data(), std::size_t(nx)}, {a.data(), std::size_t(nx)},
                             {out.data(), std::size_t(nt)});
    return out;  // a (-) b
  };
  const Eigen::VectorXd y0 = F(x);
  const double h = 1e-6;
  for (int j = 0; j < nt; ++j) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(nt), plus(nx), minus(nx);
    e[j] = h;
    system->state_integrate({x.data(), std::size_t(nx)}, {e.data(), std::size_t(nt)},
                            {plus.data(), std::size_t(nx)});
    e = -e;
    system->state_integrate({x.data(), std::size_t(nx)}, {e.data(), std::size_t(nt)},
                            {minus.data(), std::size_t(nx)});
    const Eigen::VectorXd fd = (chart_diff(F(plus), y0) - chart_diff(F(minus), y0)) / (2.0 * h);
    const double error = (A.col(j) - fd).cwiseAbs().maxCoeff() /
                         std::max(1.0, fd.cwiseAbs().maxCoeff());
    EXPECT_LT(error, 1e-6) << "direction " << j << "\nexact " << A.col(j).transpose()
                           << "\nfd    " << fd.transpose();
  }
  // Not a trivial agreement: the contacts change how the velocities respond.
  EXPECT_GT((A.bottomRightCorner(6, 6) - Eigen::MatrixXd::Identity(6, 6)).cwiseAbs().maxCoeff(), 1e-2);
}

TEST(DerivativesThroughContact, HardContactHasNoneAndSaysWhy) {
  sim::MaximalSetup setup;
  setup.model = std::make_shared<const Model>(relaxed_box());
  setup.state0 = {relaxed_box_state()};
  auto system = sim::make_maximal_system(setup);
  EXPECT_FALSE(system->has_step_derivatives());
  Eigen::MatrixXd A, B;
  try {
    system->step_derivatives(0.0, 0.01, {}, A, B);
    FAIL() << "hard contact gave derivatives";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("contact_relaxation"), std::string::npos) << e.what();
  }
}

// The sparse block LDU with the contacts eliminated onto their bodies' blocks gives the
// dense LU's steps: a three-link chain whose tip sphere and middle box hit the ground.
TEST(Contact, SparseAndDenseSolversAgreeThroughTheContactRows) {
  ChainOptions chain;
  chain.initial_angle = 1.2;
  Mechanism m = pendulum_chain(3, chain);
  Contacts contacts;
  contacts.shapes.push_back({"tip", 2, geometry::Sphere(0.1, SE3{Mat3::Identity(), Vec3(0, 0, -0.5)}), 0.6});
  contacts.shapes.push_back({"middle", 1, geometry::Box(Vec3(0.05, 0.05, 0.1)), 0.3});
  contacts.surfaces.push_back({"floor", geometry::HalfSpace(Vec3::UnitZ(), -2.2), 0.0});
  const Model model(m.model.bodies(), m.model.joints(), m.model.gravity(), {}, contacts);
  Data sparse(model, m.state), dense(model, m.state);
  StepOptions sparse_options, dense_options;
  dense_options.solver = LinearSolver::DenseLU;
  int touched = 0;
  for (int k = 0; k < 300; ++k) {
    const StepStatus st = step(model, sparse, sparse_options);
    ASSERT_TRUE(st.ok()) << k << " " << describe(st.failure) << " " << st.newton.residual_norm << " " << st.complementarity;
    ASSERT_TRUE(step(model, dense, dense_options).ok()) << k;
    for (const ContactState& c : sparse.contact) touched += c.normal_force > 1e-3 ? 1 : 0;
    for (int b = 0; b < 3; ++b) {
      ASSERT_LT((sparse.state[b].x - dense.state[b].x).norm(), 1e-8) << k;
    }
  }
  EXPECT_GT(touched, 0);
  EXPECT_LT(max_constraint_violation(model, sparse.state), 1e-9);
}

// The kinematics rows against central differences of the step's own pose update: x_kp1 =
// x_k + dt v, q_kp1 = q_k f(omega) (eq. (32)), at random points, poses, surfaces and
// velocities.
TEST(ContactRows, KinematicsJacobiansMatchCentralDifferences) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto random_vec = [&] { return Vec3(normal(rng), normal(rng), normal(rng)); };
  const double dt = 0.05;
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    ContactPoint c;
    c.c_b = 0.3 * random_vec();
    c.radius = trial % 2 == 0 ? 0.0 : 0.1;
    c.n = random_vec().normalized();
    c.offset = 0.1 * normal(rng);
    const Vec3 t1 = c.n.unitOrthogonal();
    c.T << t1, c.n.cross(t1);
    Quat q_k;
    q_k.q = Vec4(normal(rng), normal(rng), normal(rng), normal(rng)).normalized();
    const Vec3 x_k = random_vec();
    auto rows = [&](const Vec6& s, contact_rows::Row& row) {
      const Vec3 v = s.head<3>(), omega = s.tail<3>();
      const double root = std::sqrt(4.0 / (dt * dt) - omega.squaredNorm());
      Quat f;
      f.q << 0.5 * dt * root, 0.5 * dt * omega;
      contact_rows::kinematics(c, x_k + dt * v, (q_k * f).matrix(), v, omega, dt, row);
    };
    Vec6 s;
    s << random_vec(), 5.0 * random_vec();
    contact_rows::Row at;
    rows(s, at);
    for (int k = 0; k < 6; ++k) {
      const double h = 1e-6;
      contact_rows::Row plus, minus;
      rows(s + h * Vec6::Unit(k), plus);
      rows(s - h * Vec6::Unit(k), minus);
      const double d_phi = (plus.phi - minus.phi) / (2.0 * h * dt);
      const Eigen::Vector2d d_w = (plus.w - minus.w) / (2.0 * h);
      worst = std::max(worst, std::abs(d_phi - at.P[k]) / (1.0 + std::abs(at.P[k])));
      worst = std::max(worst, (d_w - at.Q.col(k)).norm() / (1.0 + at.Q.col(k).norm()));
    }
  }
  EXPECT_LT(worst, 1e-7);
}

// The elimination onto the body's block solves the contact's linearised equations: the
// unknowns it recovers satisfy every row (the cone pair's in its Nesterov-Todd scaling), and
// the body's force change is the condensed block's.
TEST(ContactRows, EliminationSolvesTheLinearisedRows) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    contact_rows::Row row;
    row.friction = true;
    row.mu = u(rng);
    row.scale = 10.0 * u(rng);
    row.compliance = 1e-3 * u(rng);
    row.dt = 0.01;
    row.phi = 1e-3 * u(rng);
    row.x.gamma = u(rng);
    row.x.sigma = u(rng);
    row.x.b = Eigen::Vector2d(u(rng), -u(rng)) * 0.3 * row.mu * row.x.gamma;
    row.x.eta = Eigen::Vector2d(-u(rng), u(rng));
    row.x.psi = 1.5 * row.x.eta.norm() + u(rng);
    row.P.setRandom();
    row.Q.setRandom();
    row.N.setRandom();
    row.D.setRandom();
    row.w = Eigen::Vector2d(u(rng), u(rng));
    const Mat6 block = contact_rows::eliminate(row);
    const double kappa = 0.01 * u(rng);
    const contact_rows::Residuals res = contact_rows::residuals(row, kappa, false);
    const Vec6 correction = contact_rows::eliminate_rhs(row, res);
    Vec6 ds;
    ds.setRandom();
    contact_rows::Unknowns d;
    contact_rows::recover(row, res, ds, d);
    const contact_rows::Unknowns& x = row.x;
    EXPECT_NEAR(d.sigma - row.P.dot(ds) - row.compliance * d.gamma, -res.e1, 1e-12);
    EXPECT_NEAR(x.sigma * d.gamma + x.gamma * d.sigma, -res.c1, 1e-12);
    EXPECT_LT((d.eta - row.Q * ds + res.e2).norm(), 1e-12);
    // In Nesterov-Todd scaling, W^-1 z = W y = lambda and lambda o (W^-1 dz + W dy) =
    // kappa e - lambda o lambda, with z = (mu gamma, b), y = (psi, eta).
    const Vec3 z(row.mu * x.gamma, x.b[0], x.b[1]), y(x.psi, x.eta[0], x.eta[1]);
    const Vec3 dz(row.mu * d.gamma, d.b[0], d.b[1]), dy(d.psi, d.eta[0], d.eta[1]);
    auto jordan = [](const Vec3& a, const Vec3& b) {
      Vec3 out;
      out << a.dot(b), a[0] * b.tail<2>() + b[0] * a.tail<2>();
      return out;
    };
    EXPECT_LT((row.W_inv * z - row.lambda).norm(), 1e-12);
    EXPECT_LT((row.W * y - row.lambda).norm(), 1e-12);
    EXPECT_LT((row.W * row.W_inv - Mat3::Identity()).norm(), 1e-12);
    Vec3 target = -jordan(row.lambda, row.lambda);
    target[0] += kappa;
    EXPECT_LT((jordan(row.lambda, row.W_inv * dz + row.W * dy) - target).norm(), 1e-12);
    // The body's rows: -scale (N dgamma + D db) = block ds - correction.
    const Vec6 force = -row.scale * (row.N * d.gamma + row.D * d.b);
    EXPECT_LT((force - (block * ds - correction)).norm(), 1e-10 * (1.0 + force.norm()));
  }
}

// A rod hinged to the world swings down onto a stop and rests there (the limit is plastic):
// its coordinate at the stop, at rest, the limit holding the gravity torque m g d sin(s) of
// its centre of mass d = 0.5 m from the hinge.
TEST(JointLimits, PendulumRestsOnItsStopHoldingTheGravityTorque) {
  const Mechanism chain = pendulum_chain(1);
  std::vector<Joint> joints = chain.model.joints();
  const double s0 = joint_coordinate(joints[0], BodyState(), chain.state[0], nullptr, nullptr);
  ASSERT_GT(std::abs(s0), 0.1);
  const double stop = 0.4 * s0;
  (s0 > 0.0 ? joints[0].lower : joints[0].upper) = stop;
  const Model model(chain.model.bodies(), joints, chain.model.gravity());
  ASSERT_EQ(model.topology().limit_joint.size(), 1u);
  Data data(model, chain.state);
  StepOptions options;
  run(model, data, options, 300);
  const double s = joint_coordinate(joints[0], BodyState(), data.state[0], nullptr, nullptr);
  EXPECT_NEAR(s, stop, 1e-9);
  EXPECT_LT(data.state[0].omega.norm(), 1e-8);
  const double m = model.bodies()[0].mass, d = 0.5;
  EXPECT_NEAR(std::abs(data.limit_force[0]), m * kG * d * std::sin(std::abs(stop)), 1e-6);
  EXPECT_GT(data.limit_force[0] * (s0 > 0.0 ? 1.0 : -1.0), 0.0);  // pushing back inside
  EXPECT_LT(max_constraint_violation(model, data.state), 1e-9);
}

// Limits on a chain's inner joints (parent a body, not the world) step the same with the
// sparse block LDU and a dense LU, keep every coordinate inside its limits and the energy
// never above its start.
TEST(JointLimits, ChainStaysInsideItsLimitsWithEitherSolver) {
  ChainOptions options_chain;
  options_chain.initial_angle = 1.0;
  const Mechanism chain = pendulum_chain(3, options_chain);
  std::vector<Joint> joints = chain.model.joints();
  joints[1].lower = -0.2;
  joints[1].upper = 0.3;
  joints[2].lower = -0.1;
  joints[2].upper = 0.1;
  const Model model(chain.model.bodies(), joints, chain.model.gravity());
  ASSERT_EQ(model.topology().limit_joint.size(), 4u);
  Data sparse(model, chain.state), dense(model, chain.state);
  StepOptions sparse_options, dense_options;
  dense_options.solver = LinearSolver::DenseLU;
  const double e0 = energy(model, sparse.state);
  double hit = 0.0;
  for (int k = 0; k < 400; ++k) {
    const StepStatus st = step(model, sparse, sparse_options);
    ASSERT_TRUE(st.ok()) << k << " " << describe(st.failure) << " " << st.newton.residual_norm << " " << st.complementarity;
    ASSERT_TRUE(step(model, dense, dense_options).ok()) << k;
    for (int b = 0; b < 3; ++b)
      ASSERT_LT((sparse.state[b].x - dense.state[b].x).norm(), 1e-8) << k;
    for (int j = 1; j < 3; ++j) {
      const double s = joint_coordinate(joints[j], sparse.state[j - 1], sparse.state[j], nullptr,
                                        nullptr);
      ASSERT_GE(s, joints[j].lower - 1e-9) << k;
      ASSERT_LE(s, joints[j].upper + 1e-9) << k;
    }
    for (const double f : sparse.limit_force) hit = std::max(hit, std::abs(f));
    ASSERT_LE(energy(model, sparse.state), e0 + 1e-9) << k;
  }
  EXPECT_GT(hit, 0.0);
  EXPECT_LT(max_constraint_violation(model, sparse.state), 1e-9);
}

TEST(JointLimits, BadLimitsAreNamed) {
  const Mechanism chain = pendulum_chain(2);
  std::vector<Joint> joints = chain.model.joints();
  joints[1].lower = 0.5;
  joints[1].upper = 0.2;
  EXPECT_THROW(Model(chain.model.bodies(), joints), InputError);
  joints[1].upper = std::nan("");
  EXPECT_THROW(Model(chain.model.bodies(), joints), InputError);
  ChainOptions spherical;
  spherical.joint = JointType::Spherical;
  const Mechanism ball = pendulum_chain(1, spherical);
  std::vector<Joint> ball_joints = ball.model.joints();
  ball_joints[0].lower = -1.0;
  try {
    Model(ball.model.bodies(), ball_joints);
    FAIL() << "a limit on a spherical joint was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("revolute and prismatic"), std::string::npos) << e.what();
  }
}

TEST(Contact, BadShapesAreNamed) {
  Contacts contacts;
  contacts.shapes.push_back({"can", 0, geometry::Cylinder(0.1, 0.2), 0.5});
  contacts.surfaces.push_back(ground(0.0));
  const std::vector<Body> bodies{Body{"b", 1.0, Mat3::Identity()}};
  try {
    Model(bodies, {}, Vec3(0, 0, -kG), {}, contacts);
    FAIL() << "a cylinder was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'can'"), std::string::npos) << e.what();
  }
  contacts.shapes[0] = {"ball", 3, geometry::Sphere(0.1), 0.5};
  EXPECT_THROW(Model(bodies, {}, Vec3(0, 0, -kG), {}, contacts), InputError);
  contacts.shapes[0] = {"ball", 0, geometry::Sphere(0.1), -0.5};
  EXPECT_THROW(Model(bodies, {}, Vec3(0, 0, -kG), {}, contacts), InputError);
  contacts.shapes[0].friction = std::nan("");
  EXPECT_THROW(Model(bodies, {}, Vec3(0, 0, -kG), {}, contacts), InputError);
}

}  // namespace
}  // namespace marsden::maximal
