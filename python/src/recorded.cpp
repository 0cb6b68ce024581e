#include "recorded.hpp"

#include <stdexcept>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "marsden/error.hpp"
#include "module.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

// Drops the rows of a replayed run: only the system's state matters.
class NoRows final : public sim::Recorder {
 public:
  void begin(const sim::Layout&) override {}
  void row(std::span<const double>) override {}
  void finish(bool) override {}
};

const char* on_failure_name(sim::OnFailure f) {
  return f == sim::OnFailure::Stop ? "stop" : "subdivide";
}

}  // namespace

RecordedSystem::RecordedSystem(std::unique_ptr<sim::System> inner, std::string factory,
                               nb::tuple args)
    : inner_(std::move(inner)), factory_(std::move(factory)), args_(std::move(args)) {}

RecordedSystem::~RecordedSystem() {
  nb::gil_scoped_acquire acquire;
  args_.reset();
}

void RecordedSystem::checkpoint() {
  inner_->checkpoint();
  if (paused_) return;
  calls_.push_back({Call::Checkpoint});
  checkpoint_since_set_ = true;
}

void RecordedSystem::rollback() {
  inner_->rollback();
  if (paused_) return;
  if (checkpoint_before_set_ && !checkpoint_since_set_)
    unreplayable("it was rolled back to a checkpoint taken before its last set_state");
  calls_.push_back({Call::Rollback});
}

sim::StepStatus RecordedSystem::step(double t_k, double dt) {
  if (!paused_) calls_.push_back({Call::Step, t_k, dt});
  return inner_->step(t_k, dt);
}

void RecordedSystem::row(double t, std::span<double> out) const {
  inner_->row(t, out);  // may keep the sign of the last quaternion written: recorded
  if (!paused_) calls_.push_back({Call::Row, t});
}

void RecordedSystem::set_state(std::span<const double> x) {
  inner_->set_state(x);
  if (paused_) return;
  // The steps that follow depend on x alone (System::set_state): the past is not replayed.
  checkpoint_before_set_ = checkpoint_before_set_ || checkpoint_since_set_;
  checkpoint_since_set_ = false;
  calls_.clear();
  calls_.push_back({Call::SetState, 0.0, 0.0, std::vector<double>(x.begin(), x.end())});
}

void RecordedSystem::record_run(const sim::RunOptions& options, const sim::RunSummary& summary) {
  if (options.feedback != nullptr)
    unreplayable("it ran a closed loop (a Feedback's controller is not recorded)");
  Call call{Call::Simulate};
  call.run.options.t0 = options.t0;
  call.run.options.dt = options.dt;
  call.run.options.steps = options.steps;
  call.run.options.output_every = options.output_every;
  call.run.options.policy = options.policy;
  call.run.steps_replayed = summary.interrupted ? summary.steps_done : options.steps;
  calls_.push_back(std::move(call));
}

void RecordedSystem::unreplayable(std::string why) {
  if (unreplayable_.empty()) unreplayable_ = std::move(why);
}

nb::tuple RecordedSystem::reduce() const {
  if (!unreplayable_.empty())
    throw nb::type_error(("this System cannot be copied or pickled: " + unreplayable_).c_str());
  nb::list calls;
  for (const Call& c : calls_) {
    switch (c.kind) {
      case Call::Checkpoint:
        calls.append(nb::make_tuple("checkpoint"));
        break;
      case Call::Rollback:
        calls.append(nb::make_tuple("rollback"));
        break;
      case Call::Step:
        calls.append(nb::make_tuple("step", c.t, c.dt));
        break;
      case Call::Row:
        calls.append(nb::make_tuple("row", c.t));
        break;
      case Call::SetState:
        calls.append(nb::make_tuple("set_state", c.x));
        break;
      case Call::Simulate: {
        const sim::RunOptions& o = c.run.options;
        calls.append(nb::make_tuple("simulate", o.t0, o.dt, c.run.steps_replayed, o.output_every,
                                    on_failure_name(o.policy.on_failure),
                                    o.policy.max_subdivisions));
        break;
      }
    }
  }
  const nb::object restore = nb::module_::import_("marsden._pickle").attr("restore_system");
  return nb::make_tuple(restore, nb::make_tuple(factory_, args_, calls));
}

void RecordedSystem::replay(nb::handle calls) {
  std::vector<double> row(layout().columns.size());
  for (nb::handle item : calls) {
    const nb::tuple call = nb::cast<nb::tuple>(item);
    const std::string kind = nb::cast<std::string>(call[0]);
    if (kind == "checkpoint") {
      checkpoint();
    } else if (kind == "rollback") {
      rollback();
    } else if (kind == "step") {
      try {
        step(nb::cast<double>(call[1]), nb::cast<double>(call[2]));
      } catch (const SolverError&) {
        // Thrown as in the original, which went on: so does the copy.
      }
    } else if (kind == "row") {
      this->row(nb::cast<double>(call[1]), row);
    } else if (kind == "set_state") {
      set_state(nb::cast<std::vector<double>>(call[1]));
    } else if (kind == "simulate") {
      sim::RunOptions o;
      o.t0 = nb::cast<double>(call[1]);
      o.dt = nb::cast<double>(call[2]);
      o.steps = nb::cast<int>(call[3]);
      o.output_every = nb::cast<int>(call[4]);
      o.policy.on_failure = nb::cast<std::string>(call[5]) == "stop" ? sim::OnFailure::Stop
                                                                     : sim::OnFailure::Subdivide;
      o.policy.max_subdivisions = nb::cast<int>(call[6]);
      NoRows rows;
      pause(true);
      sim::RunSummary summary;
      try {
        summary = sim::simulate(*this, o, rows);
      } catch (...) {
        pause(false);
        throw;
      }
      pause(false);
      record_run(o, summary);
    } else {
      throw InputError("System replay: unknown call '" + kind + "'");
    }
  }
}

std::unique_ptr<sim::System> recorded(std::unique_ptr<sim::System> inner, std::string factory,
                                      nb::tuple args) {
  return std::make_unique<RecordedSystem>(std::move(inner), std::move(factory), std::move(args));
}

nb::tuple reduce_by_recipe(nb::handle self) {
  nb::object recipe = nb::getattr(self, "_recipe", nb::none());
  if (recipe.is_none())
    throw nb::type_error(("this " + std::string(nb::type_name(self.type()).c_str()) +
                          " was not made by a function of the marsden package and cannot be "
                          "pickled")
                             .c_str());
  return nb::make_tuple(nb::module_::import_("marsden._pickle").attr("rebuild"), recipe);
}

std::string recipe_origin(nb::handle self) {
  const nb::object recipe = nb::getattr(self, "_recipe", nb::none());
  if (recipe.is_none()) return "";
  const std::string function = nb::cast<std::string>(recipe[0]);
  const nb::tuple args = nb::cast<nb::tuple>(recipe[1]);
  // marsden.tree._model_from_urdf and marsden.maximal._mechanism_from_urdf: the path first.
  if (function.ends_with("_from_urdf") && args.size() > 0)
    return ", from " + quoted(nb::str(args[0]).c_str());
  if (function == "marsden.tree._replay_builder") return ", from marsden.tree.Builder";
  return ", from " + function;
}

nb::object restore_system(const std::string& factory, nb::tuple args, nb::handle calls) {
  nb::object f = nb::module_::import_("marsden._core");
  for (std::size_t start = 0, dot; start <= factory.size(); start = dot + 1) {
    dot = factory.find('.', start);
    if (dot == std::string::npos) dot = factory.size();
    f = nb::getattr(f, factory.substr(start, dot - start).c_str());
  }
  nb::object system = f(*args);
  auto* r = dynamic_cast<RecordedSystem*>(nb::cast<sim::System*>(system));
  if (r == nullptr) throw InputError("System restore: " + factory + " made no recorded system");
  r->replay(calls);
  return system;
}

}  // namespace marsden::python
