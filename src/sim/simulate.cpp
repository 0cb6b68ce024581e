#include "marsden/sim/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "marsden/error.hpp"
#include "marsden/sim/feedback.hpp"

namespace marsden::sim {

ResidualPoint System::residual_point(double, double) const {
  throw std::logic_error("this method has no discrete residual (an explicit method)");
}

void System::residual(double, double, const ResidualPoint&, ResidualBlocks&, bool) const {
  throw std::logic_error("this method has no discrete residual (an explicit method)");
}

int Layout::add(const std::string& array, const std::vector<std::string>& names,
                std::vector<std::size_t> shape) {
  const int first = static_cast<int>(columns.size());
  columns.insert(columns.end(), names.begin(), names.end());
  if (!array.empty()) {
    ArrayLayout a{array, std::move(shape), {}};
    for (int i = 0; i < static_cast<int>(names.size()); ++i) a.columns.push_back(first + i);
    arrays.push_back(std::move(a));
  }
  return first;
}

std::vector<std::string> numbered(const std::string& prefix, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    // Appended, not prefix + std::to_string(i): GCC 12 warns falsely (-Wrestrict) on the
    // inlined insert of operator+(const char*, string&&).
    names.push_back(prefix);
    names.back().append(std::to_string(i));
  }
  return names;
}

void MemoryRecorder::begin(const Layout& l) {
  layout = l;
  values.clear();
  rows = 0;
  finished_ok = false;
}

void MemoryRecorder::row(std::span<const double> v) {
  values.insert(values.end(), v.begin(), v.end());
  ++rows;
}

namespace {

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// "step N (t = T) did not converge: residual R after I Newton iterations" or "... failed:
// REASON", noting the substeps tried when the policy subdivides.
std::string failure_message(int step, double t, const StepStatus& st, int max_level) {
  std::string msg = "step " + std::to_string(step) + " (t = " + time_text(t) + ") ";
  msg += st.reason.empty() ? "did not converge: residual " + number_text(st.residual) + " after " +
                                 std::to_string(st.iterations) + " Newton iterations"
                           : "failed: " + st.reason;
  if (max_level > 0)
    msg += " (also with " + std::to_string(1 << max_level) + " substeps of dt/" +
           std::to_string(1 << max_level) + ")";
  return msg;
}

void check(const RunOptions& o) {
  if (!(o.dt > 0.0) || !std::isfinite(o.dt))
    throw InputError("simulate: the time step dt must be > 0 and finite (got " + number_text(o.dt) +
                     ")");
  if (!std::isfinite(o.t0)) throw InputError("simulate: the start time t0 is not finite");
  if (o.steps < 1)
    throw InputError("simulate: steps must be >= 1 (got " + std::to_string(o.steps) + ")");
  if (o.output_every < 1)
    throw InputError("simulate: output_every must be >= 1 (got " + std::to_string(o.output_every) +
                     ")");
  if (o.policy.max_subdivisions < 0 || o.policy.max_subdivisions > 30)
    throw InputError("simulate: max_subdivisions must be in [0, 30] (got " +
                     std::to_string(o.policy.max_subdivisions) + ")");
}

// Calls recorder.finish(false) when an exception leaves simulate(), so that a recorder
// never stays half open and keeps the rows it has.
struct FinishGuard {
  Recorder& recorder;
  bool armed = true;
  ~FinishGuard() {
    if (!armed) return;
    try {
      recorder.finish(false);
    } catch (...) {
      // The exception already on its way is the one to report.
    }
  }
};

}  // namespace

RunSummary simulate(System& system, const RunOptions& o, Recorder& recorder) {
  check(o);
  const auto wall_start = std::chrono::steady_clock::now();
  const Layout& layout = system.layout();
  std::vector<double> row(layout.columns.size());
  std::vector<double> mu(static_cast<std::size_t>(system.momentum_size()));

  RunSummary sum;
  sum.steps_requested = o.steps;
  sum.final_time = o.t0;
  sum.has_constraint = system.has_constraint();
  sum.ok = true;
  auto fail = [&](std::string msg) {
    sum.ok = false;
    sum.message = std::move(msg);
  };

  recorder.begin(layout);
  FinishGuard guard{recorder};

  // Appends the current state's row at time t; false (nothing written) if not finite.
  auto record = [&](double t) {
    system.row(t, row);
    if (!all_finite(row)) return false;
    recorder.row(row);
    ++sum.rows_written;
    return true;
  };

  if (o.feedback) o.feedback->update(o.t0, system);
  sum.energy_initial = system.energy();
  if (!mu.empty()) {
    system.momentum(mu);
    sum.momentum_initial = mu;
  }
  if (sum.has_constraint) {
    const double v = system.constraint_violation();
    sum.constraint_violation_max = std::isfinite(v) ? v : 0.0;
  }
  if (!std::isfinite(sum.energy_initial) || !record(o.t0)) {
    // Name what is not finite: the first such column of the initial row, or the energy.
    std::string what = "its energy is " + number_text(sum.energy_initial);
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (std::isfinite(row[i])) continue;
      what = "column '" + layout.columns[i] + "' is " + number_text(row[i]);
      break;
    }
    fail("the initial state is not finite (" + what + " at t = " + time_text(o.t0) +
         "); check the initial state and the model's parameters");
  }

  const int max_level = o.policy.on_failure == OnFailure::Subdivide ? o.policy.max_subdivisions : 0;
  int last_recorded = 0;
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  // The clock is read about a hundred times per progress interval, not at every step (a
  // read costs a tenth of a rigid-body step).
  double last_report = 0.0, last_check = 0.0;
  int stride = 1, since_check = 0;
  auto report = [&] {
    if (o.progress) o.progress({sum.steps_done, o.steps, sum.final_time, wall()});
  };
  for (int n = 0; sum.ok && n < o.steps; ++n) {
    if (o.stop != nullptr && o.stop->load(std::memory_order_relaxed)) {
      sum.interrupted = true;
      fail("interrupted after step " + std::to_string(n) + " (t = " +
           time_text(o.t0 + n * o.dt) + ")");
      break;
    }
    const double t_n = o.t0 + n * o.dt;
    const double t_next = o.t0 + (n + 1) * o.dt;
    int iterations = 0;
    StepStatus st;
    double energy = 0.0;
    // `count` substeps of size dt from the checkpoint; false at the first failure. Each
    // substep's row and energy are checked; those of the last are the step's, kept in
    // `row` and `energy` for the statistics and the recorder.
    auto attempt = [&](int count, double dt) {
      if (o.feedback) o.feedback->restore();
      try {
        for (int j = 0; j < count; ++j) {
          st = system.step(t_n + j * dt, dt);
          iterations += st.iterations;
          if (!st.converged) return false;
          const double t_end = j + 1 == count ? t_next : t_n + (j + 1) * dt;
          if (o.feedback) o.feedback->update(t_end, system);
          system.row(t_end, row);
          energy = system.energy();
          if (!all_finite(row) || !std::isfinite(energy)) {
            st.converged = false;
            st.reason = "the state became NaN or infinite";
            st.code = "non_finite";
            return false;
          }
        }
        return true;
      } catch (const SolverError& e) {
        st = StepStatus{false, 0, 0.0, e.what(), "error"};
        return false;
      }
    };

    system.checkpoint();
    if (o.feedback) o.feedback->save();
    int level = attempt(1, o.dt) ? 0 : -1;
    if (level < 0) {
      ++sum.failures;
      for (int k = 1; k <= max_level && level < 0; ++k) {
        system.rollback();
        if (attempt(1 << k, std::ldexp(o.dt, -k)))
          level = k;
        else
          ++sum.failures;
      }
    }
    if (level < 0) {
      system.rollback();
      if (o.feedback) o.feedback->restore();
      sum.failed_step = n;
      sum.failed_t = t_n;
      sum.failed_code = *st.code ? st.code : st.reason.empty() ? "not_converged" : "error";
      fail(failure_message(n, t_n, st, max_level));
      break;
    }
    if (level > 0) sum.subdivisions.push_back({n, t_n, level});

    sum.energy_drift = std::max(sum.energy_drift, std::abs(energy - sum.energy_initial));
    if (!mu.empty()) {
      system.momentum(mu);
      for (std::size_t i = 0; i < mu.size(); ++i)
        sum.momentum_drift =
            std::max(sum.momentum_drift, std::abs(mu[i] - sum.momentum_initial[i]));
    }
    if (sum.has_constraint)
      sum.constraint_violation_max =
          std::max(sum.constraint_violation_max, system.constraint_violation());
    sum.newton_min = n == 0 ? iterations : std::min(sum.newton_min, iterations);
    sum.newton_max = std::max(sum.newton_max, iterations);
    sum.newton_total += iterations;
    sum.steps_done = n + 1;
    sum.final_time = t_next;

    if ((n + 1) % o.output_every == 0 || n + 1 == o.steps) {
      recorder.row(row);  // checked finite by the attempt
      ++sum.rows_written;
      last_recorded = n + 1;
    }
    if (o.progress && ++since_check >= stride) {
      const double now = wall();
      const double per_step = (now - last_check) / since_check;
      since_check = 0;
      last_check = now;
      stride = per_step > 0.0
                   ? std::clamp(int(o.progress_interval_s / (100.0 * per_step)), 1, 4096)
                   : std::min(2 * stride, 4096);
      if (now - last_report >= o.progress_interval_s) {
        last_report = now;
        report();
      }
    }
  }
  // After a failure, the last good state is part of what was computed: keep it.
  if (sum.steps_done > last_recorded) record(sum.final_time);

  sum.newton_mean = sum.steps_done > 0 ? double(sum.newton_total) / sum.steps_done : 0.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  sum.energy_drift_relative =
      sum.energy_initial != 0.0 ? sum.energy_drift / std::abs(sum.energy_initial) : nan;
  double mu0 = 0.0;
  for (double m : sum.momentum_initial) mu0 = std::max(mu0, std::abs(m));
  sum.momentum_drift_relative = mu0 != 0.0 ? sum.momentum_drift / mu0 : nan;
  sum.wall_time_s = wall();
  report();
  guard.armed = false;
  recorder.finish(sum.ok);
  return sum;
}

}  // namespace marsden::sim
