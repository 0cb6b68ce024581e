// One generic suite for the step contract: every family's adapter (sim::make_*_system),
// with each of its methods, is instantiated from a small scene and must pass the same
// checks: layout and rows, no NaN or infinity written, rollback restoring the state to the
// bit, a rerun giving bit-identical output, the failure policy (a step that cannot succeed
// fails with a status, and the run keeps the last good state), subdivision agreeing with
// the smaller step, no heap allocation inside a step, and the discrete residual's Jacobian
// blocks against central differences; and the state: get/set round trips, set_state as a
// fresh start whatever came before, set-then-step as rollback, the tangent chart, bad states
// refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>

#include "marsden/error.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/simulate.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::sim {
namespace {

struct Case {
  std::string name;
  std::string scene;  // a scene file's text
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string scene(const std::string& system, const std::string& integrator, double dt,
                  const std::string& rest = "") {
  return R"({"system": )" + system + R"(, "integrator": )" + integrator + R"(, "dt": )" +
         std::to_string(dt) + R"(, "duration": 0.5)" + rest + "}";
}

const std::string kCartPole = R"({"type": "tree", "gravity": [0, 0, -9.81],
    "frames": [
      {"name": "cart", "type": "ty", "coordinate": "y", "mass": {"mass": 2.0}},
      {"name": "pole", "parent": "cart", "type": "rx", "coordinate": "theta"},
      {"name": "tip", "parent": "pole", "type": "tz", "value": 0.5,
       "mass": {"mass": 0.5, "com": [0, 0, 0], "inertia": [0.01, 0.01, 0.001]}}],
    "inputs": [{"type": "force", "coordinate": "y"}]})";
const std::string kForce =
    R"(, "controls": {"type": "sinusoid", "offset": [0.5], "amplitude": [1.0], "frequency_hz": [1.0]})";

// A planar chain of n links hanging from the world with a torque on every joint: more
// inputs than a vehicle takes, driven by a sinusoid of n components.
std::string driven_chain(int n) {
  std::string frames, inputs, offset, amplitude, frequency, parent = "world";
  for (int i = 1; i <= n; ++i) {
    const std::string k = std::to_string(i), sep = i > 1 ? ", " : "";
    frames += sep + R"({"name": "joint)" + k + R"(", "parent": ")" + parent +
              R"(", "type": "rx", "coordinate": "q)" + k + R"("}, {"name": "link)" + k +
              R"(", "parent": "joint)" + k +
              R"(", "type": "tz", "value": -0.1, "mass": {"mass": 0.2}})";
    inputs += sep + R"({"type": "force", "coordinate": "q)" + k + R"("})";
    offset += sep + std::to_string(0.01 * i);
    amplitude += sep + std::to_string(0.02 + 0.001 * i);
    frequency += sep + std::to_string(0.5 + 0.1 * i);
    parent = "link" + k;
  }
  return scene(R"({"type": "tree", "gravity": [0, 0, -9.81], "frames": [)" + frames +
                   R"(], "inputs": [)" + inputs + "]}",
               R"({"method": "midpoint"})", 0.01,
               R"(, "initial_state": {"q": {"q1": 0.3}}, "controls": {"type": "sinusoid", "offset": [)" +
                   offset + R"(], "amplitude": [)" + amplitude + R"(], "frequency_hz": [)" +
                   frequency + "]}");
}

// examples/mjcf/motor_arm.xml: two motors, the first with gear 10 and controls clamped to
// [-1, 1]; the controls stay inside the range, where the step is smooth in them.
const std::string kMotorArm = std::string(MARSDEN_SOURCE_DIR) + "/examples/mjcf/motor_arm.xml";
const std::string kMotorControls =
    R"(, "controls": {"type": "sinusoid", "offset": [0.3, -0.2], "amplitude": [0.4, 0.5], "frequency_hz": [1.0, 2.0]})";

std::vector<Case> cases() {
  const std::string body =
      R"({"type": "rigid_body", "inertia": {"J": [1.0, 2.0, 3.0], "mass": 1.0}})";
  const std::string spin = R"(, "initial_state": {"angular_velocity": [0.3, 2.0, 0.1]})";
  const std::string heli = R"({"type": "helicopter"})";
  const std::string heli_u =
      R"(, "controls": {"type": "sinusoid", "offset": [49.05, 0.0], "amplitude": [2.0, 0.1], "frequency_hz": [0.5, 0.5]})";
  const std::string car_u =
      R"(, "initial_state": {"psi_dot": 2.0}, "controls": {"type": "sinusoid", "offset": [0.2, 0.0], "amplitude": [0.5, 0.4], "frequency_hz": [0.7, 0.5]})";
  const std::string board = R"({"type": "snakeboard"})";
  const std::string board_u =
      R"(, "initial_state": {"v1": 0.5}, "controls": {"type": "sinusoid", "offset": [0.0, 0.0], "amplitude": [0.3, 0.2], "frequency_hz": [0.5, 0.5]})";
  const std::string sleigh_x = R"(, "initial_state": {"omega": 1.0, "v1": 1.0})";
  const std::string chain =
      R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 4}})";
  return {
      {"rigid_body_vi", scene(body, R"({"method": "vi"})", 0.01, spin)},
      {"rigid_body_rk4", scene(body, R"({"method": "rk4"})", 0.01, spin)},
      {"helicopter_vi", scene(heli, R"({"method": "vi"})", 0.01, heli_u)},
      {"helicopter_rk2", scene(heli, R"({"method": "rk2"})", 0.01, heli_u)},
      {"helicopter_lie_newmark", scene(heli, R"({"method": "lie_newmark"})", 0.01, heli_u)},
      {"car_rdp", scene(R"({"type": "car"})", R"({"method": "rdp"})", 0.01, car_u)},
      {"car_rdp_explicit",
       scene(R"({"type": "car"})", R"({"method": "rdp_explicit"})", 0.01, car_u)},
      {"car_rk4", scene(R"({"type": "car"})", R"({"method": "rk4"})", 0.01, car_u)},
      {"snakeboard_rdp", scene(board, R"({"method": "rdp"})", 0.01, board_u)},
      {"snakeboard_gni", scene(board, R"({"method": "gni"})", 0.01, board_u)},
      {"snakeboard_rattle", scene(board, R"({"method": "rattle"})", 0.01, board_u)},
      {"sleigh_rk4", scene(R"({"type": "sleigh"})", R"({"method": "rk4"})", 0.01, sleigh_x)},
      {"tree_midpoint", scene(kCartPole, R"({"method": "midpoint"})", 0.01,
                              kForce + R"(, "initial_state": {"q": {"theta": 0.3}})")},
      {"tree_galerkin", scene(kCartPole, R"({"method": "galerkin", "stages": 2})", 0.01,
                              kForce + R"(, "initial_state": {"q": {"theta": 0.3}})")},
      {"tree_rk4", scene(kCartPole, R"({"method": "rk4"})", 0.01,
                         kForce + R"(, "initial_state": {"q": {"theta": 0.3}})")},
      {"tree_12_inputs", driven_chain(12)},
      {"tree_mjcf_motors",
       scene(R"({"type": "tree", "mjcf": ")" + kMotorArm + R"("})", R"({"method": "midpoint"})", 0.01,
             kMotorControls)},
      {"maximal_mjcf_motors",
       scene(R"({"type": "maximal", "mjcf": ")" + kMotorArm + R"("})", "{}", 0.01, kMotorControls)},
      {"maximal_chain", scene(chain, "{}", 0.01)},
      {"maximal_driven",
       scene(
           R"({"type": "maximal", "mechanism": "pendulum_chain",
            "parameters": {"n": 3}, "inputs": ["joint0", "joint2"],
            "springs": [{"joint": "joint1", "stiffness": 2.0}],
            "dampers": [{"joint": "joint2", "damping": 0.1}]})",
           "{}", 0.01,
           R"(, "controls": {"type": "sinusoid", "offset": [0.5, 0.0], "amplitude": [0.2, 0.3], "frequency_hz": [1.0, 2.0]})")},
      {"maximal_kinematic",
       scene(R"({"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 3},
                 "inputs": ["joint0"]})",
             "{}", 0.01,
             R"(, "controls": {"type": "sinusoid", "offset": [0.2], "amplitude": [0.3], "frequency_hz": [1.0]},
                  "kinematic": {"joint1": {"type": "sinusoid", "offset": [0], "amplitude": [0.4], "frequency_hz": [0.8]}})")},
      {"maximal_lane_change",
       scene(R"({"type": "maximal", "mechanism": "trailer_train", "parameters": {"trailers": 2}})",
             "{}", 0.01,
             R"(, "initial_state": {"qd": {"plane": [2.0, 0.0, 0.0]}},
                  "kinematic": {"steering": {"type": "sinusoid", "offset": [0], "amplitude": [0.1], "frequency_hz": [0.5]}})")},
  };
}

std::unique_ptr<System> make(const Case& c) {
  return run::make_system(io::parse_scene(c.scene, c.name));
}

RunOptions options(double dt, int steps, int every = 1) {
  RunOptions o;
  o.dt = dt;
  o.steps = steps;
  o.output_every = every;
  return o;
}

std::vector<double> current_row(const System& s, double t) {
  std::vector<double> row(s.layout().columns.size());
  s.row(t, row);
  return row;
}

bool bit_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

class SystemContract : public ::testing::TestWithParam<Case> {};

TEST_P(SystemContract, LayoutRowsAndStatistics) {
  auto sys = make(GetParam());
  const Layout& l = sys->layout();
  ASSERT_FALSE(l.columns.empty());
  EXPECT_EQ(l.columns[0], "t");
  for (const ArrayLayout& a : l.arrays) {
    std::size_t n = 1;
    for (std::size_t d : a.shape) n *= d;
    EXPECT_EQ(a.columns.size(), n) << a.name;
    for (int c : a.columns) EXPECT_LT(std::size_t(c), l.columns.size()) << a.name;
  }
  MemoryRecorder rec;
  const RunSummary s = simulate(*sys, options(0.01, 50, 7), rec);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(rec.rows, 1u + 7u + 1u);  // t = 0, every 7th step, the last
  EXPECT_EQ(s.rows_written, rec.rows);
  EXPECT_TRUE(rec.finished_ok);
  for (double x : rec.values) EXPECT_TRUE(std::isfinite(x));
  EXPECT_DOUBLE_EQ(rec.values[(rec.rows - 1) * l.columns.size()], 0.5);
  EXPECT_EQ(s.steps_done, 50);
  EXPECT_EQ(s.failures, 0);
  EXPECT_LE(s.newton_min, s.newton_max);
  EXPECT_TRUE(std::isfinite(s.energy_drift));
}

TEST_P(SystemContract, RollbackRestoresTheStateToTheBit) {
  auto sys = make(GetParam());
  MemoryRecorder rec;
  simulate(*sys, options(0.01, 5), rec);  // leave the start, where histories are empty
  sys->checkpoint();
  const auto before = current_row(*sys, 1.0);
  ASSERT_TRUE(sys->step(0.05, 0.01).converged);
  const auto after = current_row(*sys, 1.0);
  EXPECT_FALSE(bit_equal(before, after));
  sys->rollback();
  EXPECT_TRUE(bit_equal(before, current_row(*sys, 1.0)));
  ASSERT_TRUE(sys->step(0.05, 0.01).converged);
  EXPECT_TRUE(bit_equal(after, current_row(*sys, 1.0)));
}

TEST_P(SystemContract, RerunIsBitIdentical) {
  MemoryRecorder a, b;
  auto s1 = make(GetParam());
  auto s2 = make(GetParam());
  simulate(*s1, options(0.01, 30), a);
  simulate(*s2, options(0.01, 30), b);
  EXPECT_TRUE(bit_equal(a.values, b.values));
}

// A system whose steps longer than `limit` fail: the failure policy seen from outside.
class Fussy final : public System {
 public:
  Fussy(std::unique_ptr<System> inner, double limit) : inner_(std::move(inner)), limit_(limit) {}
  const Layout& layout() const override { return inner_->layout(); }
  void checkpoint() override { inner_->checkpoint(); }
  void rollback() override { inner_->rollback(); }
  StepStatus step(double t, double dt) override {
    if (dt > limit_) return {false, 3, 1.0, {}};
    return inner_->step(t, dt);
  }
  int state_size() const override { return inner_->state_size(); }
  std::vector<std::string> state_names() const override { return inner_->state_names(); }
  std::span<const int> state_quaternions() const override { return inner_->state_quaternions(); }
  void get_state(std::span<double> x) const override { inner_->get_state(x); }
  void set_state(std::span<const double> x) override { inner_->set_state(x); }
  double energy() const override { return inner_->energy(); }
  int momentum_size() const override { return inner_->momentum_size(); }
  void momentum(std::span<double> out) const override { inner_->momentum(out); }
  bool has_constraint() const override { return inner_->has_constraint(); }
  double constraint_violation() const override { return inner_->constraint_violation(); }
  void row(double t, std::span<double> out) const override { inner_->row(t, out); }

 private:
  std::unique_ptr<System> inner_;
  double limit_;
};

TEST_P(SystemContract, SubdivisionMatchesTheSmallerStepAndStopKeepsTheLastGoodState) {
  // Steps of 0.01 fail; subdivided they run as 4 x 0.0025, like a plain run at 0.0025
  // (up to the restart a subdivision imposes on multistep histories and Newton guesses).
  Fussy sub(make(GetParam()), 0.003);
  RunOptions o = options(0.01, 10);
  o.policy = {OnFailure::Subdivide, 4};
  MemoryRecorder r_sub, r_fine;
  const RunSummary s = simulate(sub, o, r_sub);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(s.subdivisions.size(), 10u);
  EXPECT_EQ(s.subdivisions[0].level, 2);
  EXPECT_EQ(s.failures, 20);
  auto fine = make(GetParam());
  simulate(*fine, options(0.0025, 40, 4), r_fine);
  ASSERT_EQ(r_sub.values.size(), r_fine.values.size());
  double diff = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < r_sub.values.size(); ++i) {
    diff = std::max(diff, std::abs(r_sub.values[i] - r_fine.values[i]));
    scale = std::max(scale, std::abs(r_fine.values[i]));
  }
  EXPECT_LT(diff, 1e-6 * scale);

  // With "stop" the run ends at the first step, keeping the initial state.
  Fussy stop(make(GetParam()), 0.003);
  MemoryRecorder r_stop;
  const RunSummary st = simulate(stop, options(0.01, 10), r_stop);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.steps_done, 0);
  EXPECT_EQ(st.failed_step, 0);
  EXPECT_EQ(st.failed_code, "not_converged");
  EXPECT_EQ(r_stop.rows, 1u);
  EXPECT_FALSE(r_stop.finished_ok);
}

TEST_P(SystemContract, NoHeapAllocationInsideAStep) {
  auto sys = make(GetParam());
  MemoryRecorder rec;
  simulate(*sys, options(0.01, 5), rec);
  double t = 0.05;
  EXPECT_EQ(test_support::allocations_during([&] {
              for (int k = 0; k < 10; ++k, t += 0.01) {
                sys->checkpoint();
                sys->step(t, 0.01);
              }
            }),
            0);
}

// The residual the step solves (System::residual), a few steps into the run: every block
// the family provides against central differences in its argument (the unknowns, the state
// at t_k in the family's chart, the inputs), at a point off the solution.
class ResidualContract : public ::testing::TestWithParam<Case> {};

// The explicit methods (Runge-Kutta, Lie-Newmark, the car's explicit RDP) solve nothing.
bool is_explicit(const Case& c) {
  for (const char* m : {"_rk2", "_rk4", "_lie_newmark", "_rdp_explicit"})
    if (c.name.ends_with(m)) return true;
  return false;
}

std::vector<Case> implicit_cases() {
  std::vector<Case> out;
  for (const Case& c : cases())
    if (!is_explicit(c)) out.push_back(c);
  return out;
}

TEST_P(SystemContract, OnlyExplicitMethodsLackAResidual) {
  const auto system = make(GetParam());
  EXPECT_EQ(system->has_residual(), !is_explicit(GetParam()));
  if (!system->has_residual()) {
    EXPECT_THROW(system->residual_point(0.0, 0.01), std::logic_error);
  }
}

TEST_P(ResidualContract, JacobiansMatchCentralDifferences) {
  const auto system = make(GetParam());
  ASSERT_TRUE(system->has_residual());
  const double dt = 0.01;
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(system->step(k * dt, dt).converged);
  const double t_k = 5 * dt;
  ResidualPoint at = system->residual_point(t_k, dt);
  for (Eigen::Index i = 0; i < at.z.size(); ++i) at.z[i] += 1e-3 * std::sin(1.0 + i);
  ResidualBlocks blocks;
  system->residual(t_k, dt, at, blocks, true);
  const Eigen::Index n = blocks.r.size();
  ASSERT_GT(n, 0);
  ASSERT_EQ(blocks.J_r_z.rows(), n);
  ASSERT_EQ(blocks.J_r_z.cols(), at.z.size());
  // Every family but GNI, RATTLE and the tree's Galerkin VI (no optimal control yet)
  // provides all three blocks.
  const bool all_blocks = !GetParam().name.ends_with("_gni") &&
                          !GetParam().name.ends_with("_rattle") &&
                          !GetParam().name.ends_with("_galerkin");
  EXPECT_EQ(blocks.J_r_state.cols() > 0, all_blocks);
  EXPECT_EQ(blocks.J_r_u.cols() > 0, all_blocks && at.u.size() > 0);
  // A block a family does not provide has no columns; a provided one has them all.
  for (const Eigen::MatrixXd* J : {&blocks.J_r_state, &blocks.J_r_u}) {
    if (J->cols() > 0) {
      ASSERT_EQ(J->rows(), n);
    }
  }
  if (blocks.J_r_state.cols() > 0) {
    ASSERT_EQ(blocks.J_r_state.cols(), at.delta.size());
  }
  if (blocks.J_r_u.cols() > 0) {
    ASSERT_EQ(blocks.J_r_u.cols(), at.u.size());
  }
  const double h = 1e-6;
  auto r_at = [&](const ResidualPoint& p) {
    ResidualBlocks b;
    system->residual(t_k, dt, p, b, false);
    return b.r;
  };
  auto check = [&](Eigen::VectorXd ResidualPoint::*arg, const Eigen::MatrixXd& J,
                   const char* name) {
    for (Eigen::Index c = 0; c < J.cols(); ++c) {
      ResidualPoint plus = at, minus = at;
      (plus.*arg)[c] += h;
      (minus.*arg)[c] -= h;
      const Eigen::VectorXd fd = (r_at(plus) - r_at(minus)) / (2 * h);
      EXPECT_LT((fd - J.col(c)).lpNorm<Eigen::Infinity>(),
                1e-6 * (1.0 + fd.lpNorm<Eigen::Infinity>()))
          << name << " column " << c;
    }
  };
  // A point of the wrong size is an InputError naming it, never a read out of bounds.
  for (Eigen::VectorXd ResidualPoint::*arg :
       {&ResidualPoint::z, &ResidualPoint::delta, &ResidualPoint::u}) {
    ResidualPoint bad = at;
    (bad.*arg).conservativeResize((bad.*arg).size() + 1);
    (bad.*arg).setZero();
    ResidualBlocks ignored;
    EXPECT_THROW(system->residual(t_k, dt, bad, ignored, true), InputError);
  }
  check(&ResidualPoint::z, blocks.J_r_z, "J_r_z");
  check(&ResidualPoint::delta, blocks.J_r_state, "J_r_state");
  check(&ResidualPoint::u, blocks.J_r_u, "J_r_u");
}

// The state in the contract (System::get_state, set_state and the tangent chart), for every
// family and method.
std::vector<double> state_of(const System& s) {
  std::vector<double> x(std::size_t(s.state_size()));
  s.get_state(x);
  return x;
}

std::vector<double> rows_of(System& s, double t0, int steps) {
  RunOptions o = options(0.01, steps);
  o.t0 = t0;
  MemoryRecorder rec;
  const RunSummary sum = simulate(s, o, rec);
  EXPECT_TRUE(sum.ok) << sum.message;
  return rec.values;
}

TEST_P(SystemContract, StateNamesAndSizes) {
  auto sys = make(GetParam());
  const std::vector<std::string> names = sys->state_names();
  ASSERT_EQ(int(names.size()), sys->state_size());
  for (const std::string& n : names) EXPECT_FALSE(n.empty());
  for (int q : sys->state_quaternions()) {
    ASSERT_LE(q + 4, sys->state_size());
    EXPECT_TRUE(names[std::size_t(q)].ends_with("qw")) << names[std::size_t(q)];
  }
  EXPECT_EQ(sys->tangent_size(), sys->state_size() - int(sys->state_quaternions().size()));
}

TEST_P(SystemContract, StateRoundTripIsBitForBit) {
  auto sys = make(GetParam());
  for (int steps : {0, 5}) {
    if (steps > 0) rows_of(*sys, 0.0, steps);
    const std::vector<double> x = state_of(*sys);
    for (double v : x) EXPECT_TRUE(std::isfinite(v));
    sys->set_state(x);
    EXPECT_TRUE(bit_equal(state_of(*sys), x)) << "after " << steps << " steps";
  }
}

// set_state(x) restarts the method from x as a fresh system starts from its scene: the same
// rows to the bit, whatever the system did before.
TEST_P(SystemContract, SetStateStartsLikeAFreshSystem) {
  auto fresh = make(GetParam());
  auto used = make(GetParam());
  const std::vector<double> x0 = state_of(*fresh);
  used->set_state(x0);
  EXPECT_TRUE(bit_equal(rows_of(*used, 0.0, 20), rows_of(*fresh, 0.0, 20)));

  // Two systems with different pasts, both at t = 0.05, set to one state: one future.
  auto a = make(GetParam());
  auto b = make(GetParam());
  rows_of(*a, 0.0, 5);
  rows_of(*b, 0.02, 3);
  const std::vector<double> x = state_of(*a);
  a->set_state(x);
  b->set_state(x);
  EXPECT_TRUE(bit_equal(rows_of(*a, 0.05, 15), rows_of(*b, 0.05, 15)));
}

// A step from a state that was set, retried after rollback() or after setting the state
// again, repeats to the bit.
TEST_P(SystemContract, SetThenStepEqualsCheckpointAndRollback) {
  auto sys = make(GetParam());
  rows_of(*sys, 0.0, 5);
  const std::vector<double> x = state_of(*sys);
  sys->set_state(x);
  sys->checkpoint();
  ASSERT_TRUE(sys->step(0.05, 0.01).converged);
  const std::vector<double> first = state_of(*sys), first_row = current_row(*sys, 0.06);
  EXPECT_FALSE(bit_equal(first, x));
  sys->rollback();
  EXPECT_TRUE(bit_equal(state_of(*sys), x));
  ASSERT_TRUE(sys->step(0.05, 0.01).converged);
  EXPECT_TRUE(bit_equal(state_of(*sys), first));
  sys->set_state(x);
  ASSERT_TRUE(sys->step(0.05, 0.01).converged);
  EXPECT_TRUE(bit_equal(state_of(*sys), first));
  EXPECT_TRUE(bit_equal(current_row(*sys, 0.06), first_row));
}

TEST_P(SystemContract, DifferenceAndIntegrateInvertEachOther) {
  auto sys = make(GetParam());
  rows_of(*sys, 0.0, 5);
  const std::vector<double> x = state_of(*sys);
  const auto n = std::size_t(sys->tangent_size());
  std::vector<double> dx(n), y(x.size()), back(n), zero(n, 0.0), same(x.size());
  for (std::size_t i = 0; i < n; ++i) dx[i] = 0.3 * std::sin(1.0 + 2.0 * double(i));
  sys->state_integrate(x, dx, y);
  sys->state_difference(x, y, back);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(back[i], dx[i], 1e-12) << i;
  sys->state_difference(x, x, back);
  for (double b : back) EXPECT_EQ(b, 0.0);
  sys->state_integrate(x, zero, same);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(same[i], x[i], 1e-15) << i;
  // A quaternion and its negative are one rotation: no difference between them.
  for (int q : sys->state_quaternions()) {
    std::vector<double> flipped = x;
    for (int k = 0; k < 4; ++k) flipped[std::size_t(q + k)] = -x[std::size_t(q + k)];
    sys->state_difference(x, flipped, back);
    for (double b : back) EXPECT_NEAR(b, 0.0, 1e-15);
  }
  std::vector<double> wrong(n + 1);
  EXPECT_THROW(sys->state_difference(x, y, wrong), InputError);
}

TEST_P(SystemContract, BadStatesAreRefusedNamingTheEntry) {
  auto sys = make(GetParam());
  const std::vector<double> x = state_of(*sys);
  const std::vector<std::string> names = sys->state_names();
  std::vector<double> longer = x;
  longer.push_back(0.0);
  EXPECT_THROW(sys->set_state(longer), InputError);
  const std::size_t k = x.size() - 1;
  std::vector<double> bad = x;
  bad[k] = std::nan("");
  try {
    sys->set_state(bad);
    ADD_FAILURE() << "NaN accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(" + names[k] + ")"), std::string::npos) << e.what();
  }
  for (int q : sys->state_quaternions()) {
    std::vector<double> zero = x;
    for (int i = 0; i < 4; ++i) zero[std::size_t(q + i)] = 0.0;
    EXPECT_THROW(sys->set_state(zero), InputError);
  }
  // The refused states left the system as it was.
  EXPECT_TRUE(bit_equal(state_of(*sys), x));
}

INSTANTIATE_TEST_SUITE_P(Families, ResidualContract, ::testing::ValuesIn(implicit_cases()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Families, SystemContract, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace marsden::sim
