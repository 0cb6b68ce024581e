// Closed loops over scene files (run/track.hpp, docs/control.md).
#include "marsden/run/track.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "marsden/control/lqr.hpp"
#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/batch.hpp"
#include "marsden/run/run.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/support/text.hpp"

namespace marsden::run {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// The state after every step, read from the system as the driver writes each row.
class StateRecorder final : public sim::Recorder {
 public:
  explicit StateRecorder(const sim::System& system) : system_(system) {}
  void begin(const sim::Layout&) override {}
  void row(std::span<const double>) override {
    VectorXd x(system_.state_size());
    system_.get_state({x.data(), std::size_t(x.size())});
    states.push_back(std::move(x));
  }
  void finish(bool) override {}
  std::vector<VectorXd> states;

 private:
  const sim::System& system_;
};

// Names of the tangent entries: a state's own names, three per quaternion.
std::vector<std::string> tangent_names(const sim::System& system) {
  const std::vector<std::string> names = system.state_names();
  const std::span<const int> quats = system.state_quaternions();
  std::vector<std::string> out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < names.size();) {
    if (next < quats.size() && std::size_t(quats[next]) == i) {
      for (const char* axis : {"x", "y", "z"})
        out.push_back("rotation_" + std::string(axis) + " (" + names[i] + ".." + names[i + 3] + ")");
      i += 4;
      ++next;
    } else {
      out.push_back(names[i++]);
    }
  }
  return out;
}

}  // namespace

double configuration_error(const sim::System& chart, const VectorXd& reference, const VectorXd& x) {
  VectorXd dx(chart.tangent_size());
  chart.state_difference({reference.data(), std::size_t(reference.size())},
                         {x.data(), std::size_t(x.size())}, {dx.data(), std::size_t(dx.size())});
  return dx.head(dx.size() / 2).cwiseAbs().maxCoeff();
}

HeldSystem held_system(const io::Scene& scene, int inputs) {
  io::Scene held_scene = scene;
  HeldSystem out{std::make_shared<sim::HeldInput>(inputs), nullptr};
  set_controls(held_scene, out.held);
  out.system = make_system(held_scene);
  return out;
}

StateRun run_states(const io::Scene& scene, std::shared_ptr<sim::Controller> controller,
                    const std::vector<double>& lower, const std::vector<double>& upper,
                    const VectorXd& x0, double t0, double dt, int steps) {
  io::Scene s = scene;
  std::unique_ptr<sim::Feedback> feedback;
  if (controller) {
    const std::shared_ptr<const sim::Signal> controls = scene.controls();
    const int inputs = controls ? controls->size() : 0;
    feedback = std::make_unique<sim::Feedback>(std::move(controller), inputs, lower, upper);
    set_controls(s, feedback->signal());
  }
  const auto system = make_system(s);
  system->set_state({x0.data(), std::size_t(x0.size())});
  sim::RunOptions o;
  o.t0 = t0;
  o.dt = dt;
  o.steps = steps;
  o.feedback = feedback.get();
  o.policy = {sim::OnFailure::Subdivide, 8};
  StateRecorder rows(*system);
  const sim::RunSummary sum = sim::simulate(*system, o, rows);
  StateRun r;
  if (!sum.ok) r.failed = sum.message;
  r.x.resize(Eigen::Index(rows.states.size()), x0.size());
  for (std::size_t k = 0; k < rows.states.size(); ++k) r.x.row(Eigen::Index(k)) = rows.states[k].transpose();
  return r;
}

TrackSummary track_optimum(const io::Scene& resimulation, const std::filesystem::path& out_dir,
                           double offset) {
  if (!(offset > 0.0) || !std::isfinite(offset))
    throw InputError("track: the offset must be a finite number > 0 (rad or m)");
  const std::shared_ptr<const sim::Signal> controls = resimulation.controls();
  if (!controls || controls->size() == 0)
    throw InputError(resimulation.file + ": track: the system has no controls to feed back");
  const int nu = controls->size(), N = resimulation.steps;
  const double dt = resimulation.dt;
  // The nominal: the optimal controls, held over each step, re-run through a held input.
  MatrixXd u(N, nu);
  VectorXd u_k(nu);
  for (int k = 0; k < N; ++k) {
    controls->eval(k * dt, {u_k.data(), std::size_t(nu)});
    u.row(k) = u_k.transpose();
  }
  const auto [held, system] = held_system(resimulation, nu);
  VectorXd x0(system->state_size());
  system->get_state({x0.data(), std::size_t(x0.size())});
  const control::Nominal nominal = control::rollout(*system, *held, 0.0, dt, x0, u);
  const control::Linearization lin = control::linearize(*system, held.get(), nominal);
  const int nt = system->tangent_size();
  const MatrixXd I = MatrixXd::Identity(nt, nt);
  const control::Gains gains = control::tvlqr(lin, I, MatrixXd::Identity(nu, nu), 100.0 * I);
  auto tracking = std::make_shared<control::Tracking>(system->state_chart(), nominal, gains.K);

  TrackSummary summary;
  summary.exact = lin.exact;
  const std::vector<std::string> names = tangent_names(*system);
  record::CsvWriter csv(out_dir / "tracking.csv",
                        {"t", "entry", "offset", "open_loop_error", "closed_loop_error"},
                        record::CsvWriter::Staging::Hidden);
  const VectorXd x_N = nominal.x.row(N).transpose();
  for (int j = 0; j < nt / 2; ++j)
    for (double sign : {1.0, -1.0}) {
      VectorXd dx = VectorXd::Zero(nt), x_start(x0.size());
      dx[j] = sign * offset;
      system->state_integrate({x0.data(), std::size_t(x0.size())}, {dx.data(), std::size_t(nt)},
                              {x_start.data(), std::size_t(x_start.size())});
      const StateRun open = run_states(resimulation, nullptr, {}, {}, x_start, 0.0, dt, N);
      const StateRun closed = run_states(resimulation, tracking, {}, {}, x_start, 0.0, dt, N);
      if (!closed.failed.empty())
        throw SolverError(resimulation.file + ": track: the closed loop from " + names[std::size_t(j)] +
                          (sign > 0 ? " +" : " -") + number_text(offset) + " failed: " + closed.failed);
      for (Eigen::Index k = 0; k < open.x.rows(); ++k) {
        const VectorXd ref = nominal.x.row(k).transpose();
        csv.write_row({double(k) * dt, double(j), sign * offset,
                       configuration_error(*system, ref, open.x.row(k).transpose()),
                       configuration_error(*system, ref, closed.x.row(k).transpose())});
      }
      TrackCase c;
      c.entry = names[std::size_t(j)];
      c.offset = sign * offset;
      c.open_loop_failed = open.failed;
      c.open_loop_error = open.failed.empty()
                              ? configuration_error(*system, x_N, open.x.row(N).transpose())
                              : std::numeric_limits<double>::infinity();
      c.closed_loop_error = configuration_error(*system, x_N, closed.x.row(N).transpose());
      summary.cases.push_back(c);
    }
  csv.close();
  record::Json cases = record::Json::array();
  for (const TrackCase& c : summary.cases) {
    record::Json row = record::Json::object();
    row.set("entry", c.entry).set("offset", c.offset).set("closed_loop_error", c.closed_loop_error);
    if (c.open_loop_failed.empty())
      row.set("open_loop_error", c.open_loop_error);
    else
      row.set("open_loop_failed", c.open_loop_failed);
    cases.push_back(row);
  }
  record::Json::object()
      .set("derivatives", summary.exact ? "exact" : "central differences")
      .set("weights", "Q = I, R = I, Q_N = 100 I; no saturation")
      .set("cases", cases)
      .write_file(out_dir / "tracking.json");
  return summary;
}

}  // namespace marsden::run
