// The driver of sim/simulate.hpp on small systems whose exact behaviour is known: time
// keeping, the failure policy, subdivision, rows never holding NaN, reruns, and the file
// recorder's final names.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/solve/newton.hpp"

namespace marsden::sim {
namespace {

// The harmonic oscillator x'' = -x by Stoermer-Verlet, a symplectic method: its energy
// error stays O(dt^2) and bounded over long runs. Steps longer than fail_above fail (as a
// Newton solve that does not converge would), and a step starting at fail_at_step's time
// produces a NaN or throws, as configured.
class Oscillator final : public System {
 public:
  double fail_above = 1e300;
  double nan_from_t = 1e300;
  double throw_from_t = 1e300;
  double x = 1.0, v = 0.0;
  int steps_taken = 0;

  Oscillator() {
    layout_.add("", {"t"}, {});
    layout_.add("state", {"x", "v"}, {2});
    layout_.add("energy", {"energy"}, {});
  }
  const Layout& layout() const override { return layout_; }
  void checkpoint() override { saved_ = {x, v}; }
  void rollback() override { std::tie(x, v) = saved_; }
  StepStatus step(double t_k, double dt) override {
    if (t_k >= throw_from_t) throw std::runtime_error("oscillator: thrown on purpose");
    if (dt > fail_above) return {false, 7, 1.5, {}};
    ++steps_taken;
    v -= 0.5 * dt * x;
    x += dt * v;
    v -= 0.5 * dt * x;
    if (t_k >= nan_from_t) x = std::nan("");
    return {true, 1, 0.0, {}};
  }
  int state_size() const override { return 2; }
  std::vector<std::string> state_names() const override { return {"x", "v"}; }
  void get_state(std::span<double> out) const override {
    out[0] = x;
    out[1] = v;
  }
  void set_state(std::span<const double> in) override {
    x = in[0];
    v = in[1];
  }
  double energy() const override { return 0.5 * (x * x + v * v); }
  int momentum_size() const override { return 1; }
  // Not conserved: its drift must show.
  void momentum(std::span<double> out) const override { out[0] = v; }
  void row(double t, std::span<double> out) const override {
    out[0] = t;
    out[1] = x;
    out[2] = v;
    out[3] = energy();
  }

 private:
  Layout layout_;
  std::pair<double, double> saved_;
};

RunOptions options(double dt, int steps) {
  RunOptions o;
  o.dt = dt;
  o.steps = steps;
  return o;
}

bool rows_finite(const MemoryRecorder& r) {
  for (double x : r.values)
    if (!std::isfinite(x)) return false;
  return true;
}

TEST(Simulate, TimeIsT0PlusKDtNotARunningSum) {
  Oscillator osc;
  RunOptions o = options(0.01, 1000000);
  o.t0 = 3.0;
  o.output_every = 250000;
  MemoryRecorder rec;
  const RunSummary s = simulate(osc, o, rec);
  ASSERT_TRUE(s.ok) << s.message;
  ASSERT_EQ(rec.rows, 5u);
  EXPECT_EQ(s.final_time, 3.0 + 1000000 * 0.01);
  EXPECT_EQ(rec.values[4 * 4], 3.0 + 1000000 * 0.01);
  double t = 3.0;
  for (int k = 0; k < 1000000; ++k) t += 0.01;
  EXPECT_NE(t, s.final_time);  // what a running sum would have written
}

// The stop flag (set by a signal handler in the command) ends the run before the next
// step: the rows so far are recorded, the last state included, and the summary says so.
TEST(Simulate, StopFlagInterruptsAtTheNextStepAndKeepsTheRows) {
  Oscillator osc;
  RunOptions o = options(0.01, 1000);
  o.output_every = 7;
  std::atomic<bool> stop{false};
  o.stop = &stop;
  int reports = 0;
  o.progress_interval_s = 0.0;  // every clock read reports
  o.progress = [&](const Progress& p) {
    ++reports;
    EXPECT_LE(p.steps_done, p.steps);
    if (p.steps_done >= 300) stop = true;
  };
  MemoryRecorder rec;
  const RunSummary s = simulate(osc, o, rec);
  EXPECT_FALSE(s.ok);
  EXPECT_TRUE(s.interrupted);
  EXPECT_GE(s.steps_done, 300);
  EXPECT_LT(s.steps_done, 1000);
  EXPECT_EQ(osc.steps_taken, s.steps_done);
  EXPECT_NE(s.message.find("interrupted after step " + std::to_string(s.steps_done)),
            std::string::npos) << s.message;
  EXPECT_GE(reports, 2);  // during the run and at its end
  ASSERT_TRUE(rows_finite(rec));
  EXPECT_EQ(rec.values[(rec.rows - 1) * 4], s.final_time);  // the last state is kept
}

TEST(Simulate, SymplecticEnergyErrorIsBoundedAndMomentumDriftShows) {
  Oscillator osc;
  MemoryRecorder rec;
  const RunSummary s = simulate(osc, options(0.1, 100000), rec);
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.steps_done, 100000);
  EXPECT_LT(s.energy_drift_relative, 0.01);  // dt^2 / 4 for Stoermer-Verlet, bounded
  EXPECT_GT(s.momentum_drift, 0.9);          // v swings through [-1, 1]
  EXPECT_EQ(rec.rows, 100001u);
  EXPECT_EQ(s.newton_total, 100000);
  EXPECT_DOUBLE_EQ(s.newton_mean, 1.0);
}

TEST(Simulate, StopPolicyKeepsTheLastGoodStateAndNamesTheStep) {
  Oscillator osc;
  osc.throw_from_t = 1e300;
  RunOptions o = options(0.1, 20);
  o.output_every = 4;
  MemoryRecorder rec;
  // Steps are fine until a NaN appears in the step starting at t = 0.5 (step 5).
  osc.nan_from_t = 0.45;
  const RunSummary s = simulate(osc, o, rec);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.steps_done, 5);
  EXPECT_EQ(s.failed_step, 5);
  EXPECT_NE(s.message.find("step 5 (t = 0.5 s)"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("NaN or infinite"), std::string::npos) << s.message;
  EXPECT_EQ(s.failures, 1);
  // Rows: t = 0, 0.4 (output_every), then the last good state at t = 0.5.
  ASSERT_EQ(rec.rows, 3u);
  EXPECT_DOUBLE_EQ(rec.values[2 * 4], 0.5);
  EXPECT_TRUE(rows_finite(rec));
  EXPECT_FALSE(rec.finished_ok);
}

TEST(Simulate, SubdivisionRescuesAStepAtTheShallowestLevelThatWorks) {
  // Steps longer than dt / 3 fail: each step needs 4 substeps (level 2).
  Oscillator sub, fine;
  sub.fail_above = 0.1 / 3.0;
  RunOptions o = options(0.1, 10);
  o.policy = {OnFailure::Subdivide, 6};
  MemoryRecorder rec, rec_fine;
  const RunSummary s = simulate(sub, o, rec);
  ASSERT_TRUE(s.ok) << s.message;
  ASSERT_EQ(s.subdivisions.size(), 10u);
  EXPECT_EQ(s.subdivisions[3].level, 2);
  EXPECT_DOUBLE_EQ(s.subdivisions[3].t, 0.3);
  EXPECT_EQ(s.failures, 20);  // the full step and the halves, every step
  EXPECT_EQ(sub.steps_taken, 40);
  // The same as running dt / 4 from the start, to the bit: rollback restored the state.
  const RunSummary s_fine = simulate(fine, options(0.025, 40), rec_fine);
  ASSERT_TRUE(s_fine.ok);
  EXPECT_EQ(sub.x, fine.x);
  EXPECT_EQ(sub.v, fine.v);
  EXPECT_EQ(s.final_time, 1.0);
}

TEST(Simulate, SubdivisionThatCannotRescueReportsTheDeepestLevel) {
  Oscillator osc;
  osc.fail_above = 1e-6;
  RunOptions o = options(0.1, 5);
  o.policy = {OnFailure::Subdivide, 3};
  MemoryRecorder rec;
  const RunSummary s = simulate(osc, o, rec);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.failures, 4);
  EXPECT_EQ(s.steps_done, 0);
  EXPECT_NE(s.message.find("did not converge: residual 1.5 after 7 Newton iterations"),
            std::string::npos)
      << s.message;
  EXPECT_NE(s.message.find("also with 8 substeps of dt/8"), std::string::npos) << s.message;
  EXPECT_EQ(osc.x, 1.0);  // rolled back to the start
  EXPECT_EQ(rec.rows, 1u);
}

TEST(Simulate, RerunIsBitIdentical) {
  Oscillator a, b;
  a.fail_above = b.fail_above = 0.05;
  RunOptions o = options(0.07, 500);
  o.policy = {OnFailure::Subdivide, 4};
  MemoryRecorder ra, rb;
  simulate(a, o, ra);
  simulate(b, o, rb);
  ASSERT_EQ(ra.values.size(), rb.values.size());
  EXPECT_EQ(std::memcmp(ra.values.data(), rb.values.data(), ra.values.size() * sizeof(double)), 0);
}

TEST(Simulate, BadOptionsAreInputErrors) {
  Oscillator osc;
  MemoryRecorder rec;
  for (const double dt : {0.0, -1.0, std::nan(""), double(INFINITY)})
    EXPECT_THROW(simulate(osc, options(dt, 10), rec), InputError);
  EXPECT_THROW(simulate(osc, options(0.1, 0), rec), InputError);
  RunOptions o = options(0.1, 10);
  o.output_every = 0;
  EXPECT_THROW(simulate(osc, o, rec), InputError);
  o = options(0.1, 10);
  o.policy.max_subdivisions = 31;
  EXPECT_THROW(simulate(osc, o, rec), InputError);
}

// Checks at every row that the final names are absent and the partial CSV grows.
class WatchingRecorder final : public Recorder {
 public:
  explicit WatchingRecorder(const std::filesystem::path& dir) : dir_(dir), files_(dir) {}
  void begin(const Layout& l) override { files_.begin(l); }
  void row(std::span<const double> v) override {
    files_.row(v);
    if (std::filesystem::exists(dir_ / "trajectory.csv") ||
        std::filesystem::exists(dir_ / "trajectory.npz"))
      final_name_seen = true;
    if (!std::filesystem::exists(dir_ / "trajectory.csv.part")) part_missing = true;
  }
  void finish(bool ok) override { files_.finish(ok); }
  bool final_name_seen = false, part_missing = false;

 private:
  std::filesystem::path dir_;
  record::FileRecorder files_;
};

std::size_t count_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(FileRecorder, FilesAppearUnderFinalNamesOnlyWhenComplete) {
  test::TempDir dir;
  { std::ofstream(dir.path() / "trajectory.npz") << "stale"; }
  Oscillator osc;
  WatchingRecorder rec(dir.path());
  const RunSummary s = simulate(osc, options(0.1, 50), rec);
  ASSERT_TRUE(s.ok);
  EXPECT_FALSE(rec.final_name_seen);
  EXPECT_FALSE(rec.part_missing);
  EXPECT_EQ(count_lines(dir.path() / "trajectory.csv"), 52u);  // header + 51 rows
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "trajectory.npz"));
  EXPECT_GT(std::filesystem::file_size(dir.path() / "trajectory.npz"), 51u * 3 * 8);
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".part"), std::string::npos) << e.path();
}

TEST(FileRecorder, AnExceptionMidRunStillPublishesTheRowsComputed) {
  test::TempDir dir;
  Oscillator osc;
  osc.throw_from_t = 0.95;
  record::FileRecorder rec(dir.path());
  EXPECT_THROW(simulate(osc, options(0.1, 50), rec), std::runtime_error);
  EXPECT_EQ(count_lines(dir.path() / "trajectory.csv"), 12u);  // header, t = 0 .. 1
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "trajectory.npz"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "trajectory.csv.part"));
}

// The norm every Newton loop compares with its tolerance (the dense one, the tree's
// articulated one, the maximal engine's scaled one) propagates NaN wherever the entry
// sits, and a NaN residual never reads as converged.
TEST(NewtonNorm, NaNEntryIsNeverSmall) {
  const double nan = std::nan("");
  for (int at = 0; at < 3; ++at) {
    Eigen::Vector3d r(1e-20, 0.0, -1e-20);
    r[at] = nan;
    EXPECT_TRUE(std::isnan(inf_norm_propagating_nan(r))) << "NaN at " << at;
  }
  EXPECT_EQ(inf_norm_propagating_nan(Eigen::VectorXd()), 0.0);
  Eigen::Vector2d x(1.0, 1.0);
  NewtonWorkspace<Eigen::Vector2d> ws(2);
  const NewtonStatus st = newton_solve(
      [&](const Eigen::Vector2d& z, Eigen::Vector2d& r, Eigen::Matrix2d* J) {
        r << 1e-20 * z[0], nan;
        if (J) J->setIdentity();
      },
      x, 0.0, NewtonOptions{}, ws);
  EXPECT_FALSE(st.converged);
}

// A linearly converging iteration (r = x - 1, each step half the residual: contraction
// 1/2) meets a residual tolerance of 1e-6 about 1e-6 from its solution. With a step
// tolerance it goes on until the distance estimated from its last step and contraction is
// within it, and then the true distance is too.
TEST(NewtonStepTolerance, BoundsTheDistanceOfALinearIteration) {
  struct Halving {
    void residual(const Eigen::Vector2d& x, Eigen::Vector2d& r, bool) {
      r = x - Eigen::Vector2d::Ones();
    }
    void factor() {}
    void solve(const Eigen::Vector2d& r, Eigen::Vector2d& dx) { dx = 0.5 * r; }
    double norm(const Eigen::Vector2d& r) const { return inf_norm_propagating_nan(r); }
  } problem;
  const auto distance = [](const Eigen::Vector2d& x) {
    return (x - Eigen::Vector2d::Ones()).lpNorm<Eigen::Infinity>();
  };
  NewtonOptions opt;
  opt.max_iterations = 100;
  NewtonVectors<Eigen::Vector2d> v(2);
  Eigen::Vector2d x(3.0, -2.0);
  const NewtonStatus residual_only = newton_iterate(problem, x, 1e-6, opt, v);
  ASSERT_TRUE(residual_only.converged);
  EXPECT_GT(distance(x), 1e-7);

  opt.step_tolerance = 1e-12;
  x << 3.0, -2.0;
  const NewtonStatus both = newton_iterate(problem, x, 1e-6, opt, v);
  ASSERT_TRUE(both.converged);
  EXPECT_LE(distance(x), 1e-12 * (1.0 + x.lpNorm<Eigen::Infinity>()));
  EXPECT_GT(both.iterations, residual_only.iterations + 15);

  // Without room for those iterations it reports no convergence, however small r is.
  opt.max_iterations = residual_only.iterations + 2;
  x << 3.0, -2.0;
  EXPECT_FALSE(newton_iterate(problem, x, 1e-6, opt, v).converged);
}

// A residual with a noise floor above the tolerance (r = x - 1 plus 1e-10 of deterministic
// noise, the exact Jacobian): on the residual alone Newton never converges; with a step
// tolerance it stops where a full step within that tolerance no longer cuts the residual,
// within the noise's reach of the solution.
TEST(NewtonStepTolerance, ConvergesAtTheResidualsRoundOff) {
  const auto noisy = [](const Eigen::Vector2d& z, Eigen::Vector2d& r, Eigen::Matrix2d* J) {
    for (int i = 0; i < 2; ++i) r[i] = z[i] - 1.0 + 1e-10 * std::sin(1e12 * z[i] + i);
    if (J) J->setIdentity();
  };
  NewtonOptions opt;
  opt.tolerance = 1e-16;  // a millionth of the noise: no iterate meets it by chance
  NewtonWorkspace<Eigen::Vector2d> ws(2);
  Eigen::Vector2d x(3.0, -2.0);
  EXPECT_FALSE(newton_solve(noisy, x, 0.0, opt, ws).converged);
  opt.step_tolerance = 1e-9;
  x << 3.0, -2.0;
  const NewtonStatus status = newton_solve(noisy, x, 0.0, opt, ws);
  ASSERT_TRUE(status.converged);
  EXPECT_GT(status.residual_norm, opt.tolerance);
  EXPECT_LE((x - Eigen::Vector2d::Ones()).lpNorm<Eigen::Infinity>(), 3e-10);
}

}  // namespace
}  // namespace marsden::sim
