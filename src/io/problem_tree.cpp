// Problem files for tree systems (tree paper) with the midpoint variational integrator:
// TreeOcp (control/tree_ocp.hpp). The system, integrator and initial state are read exactly
// as in tree scene files (scene_tree.cpp); the rest is as for the vehicles. Schema in
// docs/dmoc.md; problem.cpp dispatches here.
#include <limits>
#include <memory>
#include <vector>

#include "marsden/control/tree_ocp.hpp"
#include "problem_detail.hpp"
#include "scene_detail.hpp"

namespace marsden::io::detail {

namespace {

control::VecX vector_of(const JsonNode& n, int size) {
  const std::vector<double> v = n.numbers(static_cast<std::size_t>(size));
  return Eigen::Map<const control::VecX>(v.data(), size);
}

}  // namespace

std::unique_ptr<control::Ocp> parse_tree_problem(const JsonNode& root, const CodeResolver& code) {
  root.expect_keys({"name", "description", "system", "integrator", "dt", "steps", "initial_state",
                    "final_state", "final_time", "bounds", "cost", "initial_guess", "solver"});
  Scene scene;
  scene.file = root.file();
  scene.system_type = "tree";
  parse_tree(root, scene, code);
  const TreeScene& ts = std::get<TreeScene>(scene.system);
  if (ts.method != TreeMethod::Midpoint)
    root.at("integrator").at("method").fail("optimal control uses the midpoint variational integrator only");
  const tree::Model& model = *ts.model;
  if (model.num_prescribed() > 0)
    root.at("system").fail("the model has kinematic coordinates (first: '" +
                           model.coords()[model.prescribed_coords()[0]].name +
                           "'); optimal control needs every coordinate dynamic");
  const int n = model.num_coords(), nu = model.num_inputs();
  if (nu == 0) root.at("system").fail("the model has no inputs to optimise; add \"inputs\"");

  control::TreeOcpSpec s;
  s.model = ts.model;
  s.integrator = ts.midpoint;
  s.dt = root.at("dt").number_greater(0.0);
  s.steps = root.at("steps").integer(1, 100000);
  parse_final_time(root, s.dt, s.steps, s.free_final_time, s.dt_min, s.dt_max, s.time_weight);
  s.q0 = ts.q0;
  s.qd0 = ts.qd0;

  // Final state: the coordinates given are fixed, the others free.
  s.q_final = ts.q0;
  s.q_final_fixed.assign(static_cast<std::size_t>(n), false);
  s.final_at_rest = false;
  if (const auto fin = root.find("final_state")) {
    fin->expect_keys({"q", "at_rest"});
    if (const auto q = fin->find("q")) s.q_final_fixed = parse_coordinates(*q, model, s.q_final);
    if (const auto r = fin->find("at_rest")) s.final_at_rest = r->boolean();
  }

  constexpr double kInf = std::numeric_limits<double>::infinity();
  s.u_lower = control::VecX::Constant(nu, -kInf);
  s.u_upper = control::VecX::Constant(nu, kInf);
  if (const auto b = root.find("bounds")) {
    b->expect_keys({"controls", "q"});
    parse_range(*b, "controls", static_cast<std::size_t>(nu), s.u_lower.data(), s.u_upper.data());
    if (const auto q = b->find("q")) {
      q->expect_keys({"lower", "upper"});
      s.q_lower = control::VecX::Constant(n, -kInf);
      s.q_upper = control::VecX::Constant(n, kInf);
      if (const auto lo = q->find("lower")) parse_coordinates(*lo, model, s.q_lower);
      if (const auto hi = q->find("upper")) parse_coordinates(*hi, model, s.q_upper);
    }
  }

  s.effort_weights = control::VecX::Ones(nu);
  if (const auto cost = root.find("cost")) {
    cost->expect_keys({"control_weights"});
    if (const auto w = cost->find("control_weights"))
      s.effort_weights = vector_of(*w, nu);
  }
  if (const auto g = root.find("initial_guess")) {
    g->expect_keys({"controls"});
    check_guess_magnitudes(*g);
    if (const auto u = g->find("controls")) s.u_guess = vector_of(*u, nu);
  }
  return with_field(root, [&] {
    return std::unique_ptr<control::Ocp>(std::make_unique<control::TreeOcp>(std::move(s)));
  });
}

}  // namespace marsden::io::detail
