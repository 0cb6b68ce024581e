// Systems handed to Python remember what made them (a factory of the extension module and
// its arguments) and every call that changed them since, so that pickle and copy.deepcopy
// rebuild a fresh system and replay those calls: the copy continues bit for bit, whatever
// histories the method keeps (a VI's momentum, Newton's warm starts). set_state restarts a
// method from its state alone, so it clears what came before (docs/python.md, "Copies and
// pickles").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "marsden/sim/simulate.hpp"

namespace marsden::python {

class RecordedSystem final : public sim::System {
 public:
  // factory: the name of a function of marsden._core ("make_system", "tree.make_system")
  // that args make this system with.
  RecordedSystem(std::unique_ptr<sim::System> inner, std::string factory, nanobind::tuple args);
  ~RecordedSystem() override;

  const sim::Layout& layout() const override { return inner_->layout(); }
  void checkpoint() override;
  void rollback() override;
  sim::StepStatus step(double t_k, double dt) override;
  double energy() const override { return inner_->energy(); }
  int momentum_size() const override { return inner_->momentum_size(); }
  void momentum(std::span<double> out) const override { inner_->momentum(out); }
  bool has_constraint() const override { return inner_->has_constraint(); }
  double constraint_violation() const override { return inner_->constraint_violation(); }
  void row(double t, std::span<double> out) const override;
  int state_size() const override { return inner_->state_size(); }
  std::vector<std::string> state_names() const override { return inner_->state_names(); }
  std::span<const int> state_quaternions() const override { return inner_->state_quaternions(); }
  void get_state(std::span<double> x) const override { inner_->get_state(x); }
  void set_state(std::span<const double> x) override;
  bool has_residual() const override { return inner_->has_residual(); }
  bool has_step_derivatives() const override { return inner_->has_step_derivatives(); }
  void step_derivatives(double t_k, double dt, std::span<const double> u_k, Eigen::MatrixXd& A,
                        Eigen::MatrixXd& B) const override {
    inner_->step_derivatives(t_k, dt, u_k, A, B);
  }
  sim::ResidualPoint residual_point(double t_k, double dt) const override {
    return inner_->residual_point(t_k, dt);
  }
  void residual(double t_k, double dt, const sim::ResidualPoint& at, sim::ResidualBlocks& out,
                bool jacobians) const override {
    inner_->residual(t_k, dt, at, out, jacobians);
  }

  // A run of sim::simulate on this system: its inner calls are not recorded one by one; the
  // run is, as its options and the steps to replay (steps_done where it was interrupted).
  struct Run {
    sim::RunOptions options;
    int steps_replayed = 0;
  };
  void pause(bool paused) { paused_ = paused; }
  void record_run(const sim::RunOptions& options, const sim::RunSummary& summary);
  // What was done that a replay cannot repeat (a closed loop, a benchmark's timing): the
  // reason, which pickling then names.
  void unreplayable(std::string why);

  // What made it (the repr says what the system is from these).
  const std::string& factory() const { return factory_; }
  const nanobind::tuple& args() const { return args_; }

  // (restore function, (factory, args, calls)) for __reduce__; TypeError if it cannot be
  // replayed.
  nanobind::tuple reduce() const;
  // Repeats recorded calls (a list of tuples, as reduce() gives them) on this system.
  void replay(nanobind::handle calls);

 private:
  struct Call {
    enum Kind { Checkpoint, Rollback, Step, Row, SetState, Simulate } kind;
    double t = 0.0, dt = 0.0;
    std::vector<double> x = {};
    Run run = {};
  };
  std::unique_ptr<sim::System> inner_;
  std::string factory_;
  nanobind::tuple args_;
  mutable std::vector<Call> calls_;
  bool paused_ = false;
  // A checkpoint taken before the last set_state, which a rollback would return to.
  bool checkpoint_before_set_ = false, checkpoint_since_set_ = false;
  std::string unreplayable_;
};

// The extension's Python System from a family's system and what made it.
std::unique_ptr<sim::System> recorded(std::unique_ptr<sim::System> inner, std::string factory,
                                      nanobind::tuple args);

// __reduce__ of an object that a function of the marsden package made and marked with its
// call (_recipe: its dotted name, args, kwargs; marsden/_pickle.py): that call again.
nanobind::tuple reduce_by_recipe(nanobind::handle self);

// Where an object with a recipe came from, for its repr: ", from 'FILE'" for a URDF
// file, ", from marsden.tree.Builder", or ", from" the function that made it; empty
// without a recipe.
std::string recipe_origin(nanobind::handle self);

// The system factory(*args) made, with calls replayed on it (__reduce__'s restore function).
nanobind::object restore_system(const std::string& factory, nanobind::tuple args,
                                nanobind::handle calls);

}  // namespace marsden::python
