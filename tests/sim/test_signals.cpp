// Signals of any size (sim/signal.hpp): each kind evaluated into a caller's buffer, and
// systems with more than eight inputs driven with every control applied: a 12-link chain
// held bent by a table of the torques its static equilibrium needs stays there, and loses
// that equilibrium when any one torque is left out; the same torques from a controller
// through Feedback; the rows record every input; a maximal chain actuated at ten joints.
// And what keeps a buffer's size honest: a prescribed displacement has one component.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <variant>
#include <vector>

#include "marsden/error.hpp"
#include "marsden/run/batch.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/feedback.hpp"
#include "marsden/sim/signal.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/sim/tree.hpp"
#include "marsden/support/text.hpp"

namespace marsden::sim {
namespace {

constexpr int kLinks = 12;
constexpr double kLength = 0.1, kMass = 0.2, kGravity = 9.81;

Eigen::VectorXd ramp(int n, double first, double step) {
  return Eigen::VectorXd::LinSpaced(n, first, first + step * (n - 1));
}

TEST(Signals, EvaluateIntoABufferOfAnySize) {
  constexpr int n = 12;
  std::vector<double> out(n);

  ConstantSignal c(ramp(n, 1.0, 1.0));
  EXPECT_EQ(c.size(), n);
  c.eval(3.0, out);
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[std::size_t(i)], i + 1.0);

  // Linear between the rows, held outside them.
  TableSignal table({0.0, 2.0}, {ramp(n, 0.0, 1.0), ramp(n, 10.0, -1.0)});
  EXPECT_EQ(table.size(), n);
  table.eval(0.5, out);
  for (int i = 0; i < n; ++i) EXPECT_DOUBLE_EQ(out[std::size_t(i)], 0.75 * i + 0.25 * (10.0 - i));
  table.eval(-1.0, out);
  EXPECT_EQ(out[n - 1], n - 1.0);
  table.eval(5.0, out);
  EXPECT_EQ(out[n - 1], 10.0 - (n - 1));

  const Eigen::VectorXd offset = ramp(n, 0.5, 0.1), amplitude = ramp(n, 1.0, 0.2),
                        frequency = ramp(n, 0.3, 0.05), phase = ramp(n, -1.0, 0.15);
  SinusoidSignal sine(offset, amplitude, frequency, phase);
  const double t = 0.7;
  sine.eval(t, out);
  for (int i = 0; i < n; ++i)
    EXPECT_DOUBLE_EQ(out[std::size_t(i)],
                     offset[i] + amplitude[i] * std::sin(2.0 * std::numbers::pi * frequency[i] * t +
                                                         phase[i]));

  HeldSignal held(std::make_shared<SinusoidSignal>(sine));
  EXPECT_TRUE(held.zero_order_hold());
  std::vector<double> again(n);
  held.eval(t, again);
  EXPECT_EQ(again, out);

  Eigen::VectorXd v;
  eval_into(sine, t, v);
  ASSERT_EQ(v.size(), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(v[i], out[std::size_t(i)]);
}

TEST(Signals, RefuseInconsistentTablesAndSinusoids) {
  EXPECT_THROW(TableSignal({0.0, 0.0}, {ramp(2, 0, 1), ramp(2, 0, 1)}), InputError);
  EXPECT_THROW(TableSignal({0.0, 1.0}, {ramp(2, 0, 1), ramp(3, 0, 1)}), InputError);
  EXPECT_THROW(TableSignal({}, {}), InputError);
  EXPECT_THROW(SinusoidSignal(ramp(9, 0, 1), ramp(9, 0, 1), ramp(8, 0, 1), ramp(9, 0, 1)),
               InputError);
  EXPECT_THROW(SinusoidSignal(ramp(1, 0, 1), ramp(1, 0, 1), ramp(1, 0, 1), ramp(1, 0, 1),
                              std::nan("")),
               InputError);
}

// A sinusoid with `until` is the sinusoid up to that time and its value there after it.
TEST(Signals, ASinusoidUntilATimeHoldsItsValueThere) {
  const SinusoidSignal stroke(Eigen::VectorXd::Constant(1, 0.1), Eigen::VectorXd::Constant(1, 0.08),
                              Eigen::VectorXd::Constant(1, 0.2), Eigen::VectorXd::Constant(1, 0.3), 4.0);
  auto at = [&](double t) {
    double v = 0.0;
    stroke.eval(t, std::span<double>(&v, 1));
    return v;
  };
  auto sine = [](double t) { return 0.1 + 0.08 * std::sin(2.0 * std::numbers::pi * 0.2 * t + 0.3); };
  for (const double t : {0.0, 1.3, 3.999}) EXPECT_DOUBLE_EQ(at(t), sine(t));
  for (const double t : {4.0, 4.5, 100.0}) EXPECT_DOUBLE_EQ(at(t), sine(4.0));
}

// A planar chain hanging from the world: joint i rotates about x by q_i, link i carries a
// point mass kMass at kLength below its joint, and every coordinate takes a torque.
std::string chain_system() {
  std::string frames, inputs;
  std::string parent = "world";
  for (int i = 1; i <= kLinks; ++i) {
    const std::string k = std::to_string(i);
    frames += (i > 1 ? ",\n" : "") + std::string(R"({"name": "joint)") + k + R"(", "parent": ")" +
              parent + R"(", "type": "rx", "coordinate": "q)" + k + R"("},)" +
              R"({"name": "link)" + k + R"(", "parent": "joint)" + k +
              R"(", "type": "tz", "value": -)" + std::to_string(kLength) +
              R"(, "mass": {"mass": )" + std::to_string(kMass) + "}}";
    inputs += (i > 1 ? ", " : "") + std::string(R"({"type": "force", "coordinate": "q)") + k +
              R"("})";
    parent = "link" + k;
  }
  return R"({"type": "tree", "gravity": [0, 0, -9.81], "frames": [)" + frames +
         R"(], "inputs": [)" + inputs + "]}";
}

// The bent configuration the tests hold: q_1 = 0.3, the others 0.02 (rad).
std::vector<double> bent() {
  std::vector<double> q(kLinks, 0.02);
  q[0] = 0.3;
  return q;
}

// The torques that hold the chain still at q: tau_i = dV/dq_i = m g l sum_{k >= i}
// (n - k + 1) sin(phi_k), phi_k = q_1 + ... + q_k the absolute angle of link k from -z
// (the potential V = -m g l sum_j sum_{k <= j} cos phi_k).
std::vector<double> holding_torques(const std::vector<double>& q) {
  std::vector<double> phi(kLinks), tau(kLinks, 0.0);
  double sum = 0.0;
  for (int k = 0; k < kLinks; ++k) phi[std::size_t(k)] = sum += q[std::size_t(k)];
  for (int i = 0; i < kLinks; ++i)
    for (int k = i; k < kLinks; ++k)
      tau[std::size_t(i)] += kMass * kGravity * kLength * (kLinks - k) * std::sin(phi[std::size_t(k)]);
  return tau;
}

std::string numbers(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + number_text(v[i]);
  return s + "]";
}

// The chain from rest at bent(), with `controls` (a signal's JSON) on its 12 inputs.
io::Scene chain_scene(const std::string& controls) {
  std::string q0 = "{";
  const std::vector<double> q = bent();
  for (int i = 0; i < kLinks; ++i)
    q0 += (i ? ", " : "") + std::string("\"q") + std::to_string(i + 1) + "\": " + number_text(q[std::size_t(i)]);
  q0 += "}";
  return io::parse_scene(R"({"system": )" + chain_system() +
                             R"(, "integrator": {"method": "midpoint"}, "dt": 0.01, "duration": 0.5,
                             "initial_state": {"q": )" + q0 + R"(}, "controls": )" + controls + "}",
                         "chain.json");
}

// "q3", "u0": a column's name (appended, for GCC 12's false -Wrestrict on "q" + string).
std::string numbered_column(const char* prefix, int i) {
  std::string name(prefix);
  name += std::to_string(i);
  return name;
}

struct Outcome {
  MemoryRecorder rec;
  RunSummary summary;
  double column(const std::string& name, std::size_t row) const {
    const auto& c = rec.layout.columns;
    const std::size_t j = std::size_t(std::find(c.begin(), c.end(), name) - c.begin());
    EXPECT_LT(j, c.size()) << name;
    return rec.values[row * c.size() + j];
  }
  // The largest |q_i - bent_i| over the rows.
  double largest_departure() const {
    const std::vector<double> q = bent();
    double d = 0.0;
    for (std::size_t r = 0; r < rec.rows; ++r)
      for (int i = 0; i < kLinks; ++i)
        d = std::max(d, std::abs(column(numbered_column("q", i + 1), r) - q[std::size_t(i)]));
    return d;
  }
};

Outcome run(System& system, int steps, Feedback* feedback = nullptr) {
  RunOptions o;
  o.dt = 0.01;
  o.steps = steps;
  o.feedback = feedback;
  Outcome r;
  r.summary = simulate(system, o, r.rec);
  EXPECT_TRUE(r.summary.ok) << r.summary.message;
  return r;
}

std::string table_of(const std::vector<double>& tau) {
  return R"({"type": "table", "times": [0, 10], "values": [)" + numbers(tau) + ", " +
         numbers(tau) + "]}";
}

TEST(ManyInputs, ATwelveLinkChainIsHeldByATableOfItsEquilibriumTorques) {
  const std::vector<double> tau = holding_torques(bent());
  auto system = run::make_system(chain_scene(table_of(tau)));
  const Outcome held = run(*system, 50);
  EXPECT_LT(held.largest_departure(), 1e-9);
  for (int i = 0; i < kLinks; ++i)
    EXPECT_DOUBLE_EQ(held.column(numbered_column("u", i), held.rec.rows - 1), tau[std::size_t(i)])
        << i;

  // Leaving out any one torque, the ninth to the twelfth included, the chain moves (within
  // 0.05 s, before its fall outruns the step).
  for (int i = 0; i < kLinks; ++i) {
    std::vector<double> missing = tau;
    missing[std::size_t(i)] = 0.0;
    auto s = run::make_system(chain_scene(table_of(missing)));
    EXPECT_GT(run(*s, 5).largest_departure(), 1e-4) << "without the torque on q" << i + 1;
  }
}

TEST(ManyInputs, ASinusoidDrivesEveryInputAndTheRowsRecordThem) {
  const Eigen::VectorXd offset = ramp(kLinks, -0.1, 0.02), amplitude = ramp(kLinks, 0.05, 0.01),
                        frequency = ramp(kLinks, 0.5, 0.1);
  auto system = run::make_system(chain_scene(
      R"({"type": "sinusoid", "offset": )" +
      numbers({offset.data(), offset.data() + kLinks}) + R"(, "amplitude": )" +
      numbers({amplitude.data(), amplitude.data() + kLinks}) + R"(, "frequency_hz": )" +
      numbers({frequency.data(), frequency.data() + kLinks}) + "}"));
  const Outcome r = run(*system, 30);
  for (std::size_t row = 0; row < r.rec.rows; ++row) {
    const double t = r.column("t", row);
    for (int i = 0; i < kLinks; ++i)
      EXPECT_DOUBLE_EQ(r.column(numbered_column("u", i), row),
                       offset[i] + amplitude[i] * std::sin(2.0 * std::numbers::pi * frequency[i] * t));
  }
}

// The equilibrium torques from a controller: the chain stays put under feedback too.
class Holding final : public Controller {
 public:
  void control(double, std::span<const double>, std::span<double> u) override {
    const std::vector<double> tau = holding_torques(bent());
    std::copy(tau.begin(), tau.end(), u.begin());
  }
};

TEST(ManyInputs, FeedbackDrivesTwelveInputs) {
  Feedback feedback(std::make_shared<Holding>(), kLinks);
  io::Scene scene = chain_scene(table_of(std::vector<double>(kLinks, 0.0)));
  run::set_controls(scene, feedback.signal());
  auto system = run::make_system(scene);
  EXPECT_LT(run(*system, 50, &feedback).largest_departure(), 1e-9);
}

// A maximal chain actuated at ten joints: a torque on the tenth alone moves the chain away
// from the run without it, and the rows record all ten inputs.
TEST(ManyInputs, AMaximalChainTakesTenActuatedJoints) {
  auto chain = [](const std::vector<double>& torques) {
    std::string joints;
    for (int i = 0; i < 10; ++i)
      joints += (i ? ", " : "") + std::string("\"joint") + std::to_string(i) + "\"";
    auto system = run::make_system(io::parse_scene(
        R"({"system": {"type": "maximal", "mechanism": "pendulum_chain", "parameters": {"n": 10},
            "inputs": [)" + joints + R"(]}, "dt": 0.01, "duration": 0.1,
            "controls": {"type": "constant", "value": )" + numbers(torques) + "}}",
        "maximal.json"));
    return run(*system, 10);
  };
  std::vector<double> torques(10, 0.0);
  const Outcome unforced = chain(torques);
  torques[9] = 0.05;
  const Outcome driven = chain(torques);
  const std::size_t last = driven.rec.rows - 1;
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(driven.column(numbered_column("u", i), last), torques[std::size_t(i)]) << i;
  double moved = 0.0;
  for (const char* c : {"link9_x", "link9_y", "link9_z"})
    moved = std::max(moved, std::abs(driven.column(c, last) - unforced.column(c, last)));
  EXPECT_GT(moved, 1e-6);
}

// A kinematic coordinate's displacement is one number: a tree system built in code with a
// signal of two components for it is refused, naming the coordinate.
TEST(ManyInputs, APrescribedDisplacementOfTwoComponentsIsRefused) {
  io::Scene scene = io::parse_scene(
      R"({"system": {"type": "tree", "gravity": [0, 0, -9.81], "frames": [
            {"name": "cart", "type": "ty", "coordinate": "y", "kinematic": true},
            {"name": "pole", "parent": "cart", "type": "rx", "coordinate": "theta"},
            {"name": "tip", "parent": "pole", "type": "tz", "value": 0.5, "mass": {"mass": 1}}]},
          "dt": 0.01, "duration": 0.1})",
      "kinematic.json");
  TreeSetup setup = std::get<io::TreeScene>(scene.system);
  setup.prescribed[0] = std::make_shared<ConstantSignal>(Eigen::VectorXd::Zero(2));
  try {
    make_tree_system(setup);
    ADD_FAILURE() << "a two-component displacement was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marsden::sim
