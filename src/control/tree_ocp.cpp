#include "marsden/control/tree_ocp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

#include "marsden/error.hpp"
#include "marsden/tree/dynamics.hpp"
#include "resimulation.hpp"

namespace marsden::control {

namespace {

using tree::MatX;

constexpr double kInf = std::numeric_limits<double>::infinity();

void require_size(const VecX& v, int size, const char* field, bool may_be_empty = false) {
  if (may_be_empty && v.size() == 0) return;
  if (v.size() != size)
    throw InputError(std::string("tree OCP: ") + field + " needs " + std::to_string(size) +
                     " entries, got " + std::to_string(v.size()));
}

void require_finite(const VecX& v, const char* field) {
  if (!v.allFinite()) throw InputError(std::string("tree OCP: ") + field + " is not finite");
}

// lower <= upper entrywise, neither NaN (infinities allowed).
void require_ordered(const VecX& lower, const VecX& upper, const char* field) {
  for (int i = 0; i < lower.size(); ++i)
    if (std::isnan(lower[i]) || std::isnan(upper[i]) || lower[i] > upper[i])
      throw InputError(std::string("tree OCP: ") + field + " bounds at entry " +
                       std::to_string(i) + " are NaN or not ordered (lower " +
                       std::to_string(lower[i]) + ", upper " + std::to_string(upper[i]) + ")");
}

TreeOcpSpec checked(TreeOcpSpec s) {
  if (!s.model) throw InputError("tree OCP: model is not set");
  const tree::Model& model = *s.model;
  if (model.num_prescribed() > 0)
    throw InputError("tree OCP: model has prescribed coordinates (first: " +
                     model.coords()[model.prescribed_coords()[0]].name +
                     "); optimal control needs every coordinate dynamic");
  if (!(s.dt > 0.0) || !std::isfinite(s.dt))
    throw InputError("tree OCP: dt must be positive and finite (got " + std::to_string(s.dt) +
                     ")");
  if (s.steps < 1)
    throw InputError("tree OCP: steps must be >= 1 (got " + std::to_string(s.steps) + ")");
  if (!(s.integrator.alpha >= 0.0 && s.integrator.alpha <= 1.0))
    throw InputError("tree OCP: integrator.alpha must lie in [0, 1]");
  const int n = model.num_coords(), nu = model.num_inputs();
  require_size(s.q0, n, "q0");
  require_size(s.qd0, n, "qd0");
  require_size(s.q_final, n, "q_final");
  require_size(s.u_lower, nu, "u_lower");
  require_size(s.u_upper, nu, "u_upper");
  require_size(s.q_lower, n, "q_lower", true);
  require_size(s.q_upper, n, "q_upper", true);
  require_size(s.effort_weights, nu, "effort_weights");
  require_size(s.u_guess, nu, "u_guess", true);
  if (s.q_final_fixed.empty()) s.q_final_fixed.assign(n, true);
  if (static_cast<int>(s.q_final_fixed.size()) != n)
    throw InputError("tree OCP: q_final_fixed needs " + std::to_string(n) + " entries, got " +
                     std::to_string(s.q_final_fixed.size()));
  require_finite(s.q0, "q0");
  require_finite(s.qd0, "qd0");
  require_finite(s.q_final, "q_final");
  require_finite(s.effort_weights, "effort_weights");
  require_finite(s.u_guess, "u_guess");
  if ((s.effort_weights.array() < 0.0).any())
    throw InputError("tree OCP: effort_weights must be >= 0");
  require_ordered(s.u_lower, s.u_upper, "u");
  if (s.q_lower.size() == 0) s.q_lower = VecX::Constant(n, -kInf);
  if (s.q_upper.size() == 0) s.q_upper = VecX::Constant(n, kInf);
  require_ordered(s.q_lower, s.q_upper, "q");
  if (s.u_guess.size() == 0) s.u_guess = VecX::Zero(nu);
  if (s.free_final_time) {
    if (!(s.dt_min > 0.0) || !(s.dt_min <= s.dt) || !(s.dt <= s.dt_max))
      throw InputError("tree OCP: dt_min: needs 0 < dt_min <= dt <= dt_max (got dt_min " +
                       std::to_string(s.dt_min) + ", dt " + std::to_string(s.dt) + ", dt_max " +
                       std::to_string(s.dt_max) + ")");
    if (!(s.time_weight >= 0.0) || !std::isfinite(s.time_weight))
      throw InputError("tree OCP: time_weight must be finite and >= 0");
  }
  return s;
}

}  // namespace

TreeOcp::TreeOcp(TreeOcpSpec spec)
    : spec_(checked(std::move(spec))),
      n_(spec_.model->num_coords()),
      nu_(spec_.model->num_inputs()),
      m_(spec_.model->num_constraint_rows()),
      stride_(2 * n_ + nu_ + m_ + (spec_.free_final_time ? 1 : 0)),
      data_(*spec_.model),
      blocks_(spec_.steps) {
  const tree::Model& model = *spec_.model;
  tree::check_generated_constraints(model, data_, spec_.q0);
  x0_ = tree::midpoint_initial_state(model, data_, 0.0, spec_.q0, spec_.qd0);
  if (m_ > 0) {
    // The first step imposes h on q_1 only: q0 must already be assembled.
    tree::constraint_terms(model, data_, spec_.q0, nullptr);
    const double h0 = data_.h.lpNorm<Eigen::Infinity>();
    if (h0 > 1e-8)
      throw InputError("tree OCP: q0 violates the model's constraints (|h(q0)| = " +
                       std::to_string(h0) + ")");
  }
}

int TreeOcp::num_variables() const { return spec_.steps * stride_ + 2 * n_; }

int TreeOcp::num_constraints() const {
  return spec_.steps * (2 * n_ + m_) + (spec_.free_final_time ? spec_.steps - 1 : 0);
}

double TreeOcp::dt_at(const VecX& x, int k) const {
  return spec_.free_final_time ? x[dt_offset(k)] : spec_.dt;
}

void TreeOcp::bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const {
  const int N = spec_.steps;
  x_l = VecX::Constant(num_variables(), -kInf);
  x_u = VecX::Constant(num_variables(), kInf);
  g_l = g_u = VecX::Zero(num_constraints());
  x_l.segment(q_offset(0), n_) = x_u.segment(q_offset(0), n_) = x0_.q;
  x_l.segment(p_offset(0), n_) = x_u.segment(p_offset(0), n_) = x0_.p;
  for (int k = 0; k < N; ++k) {
    x_l.segment(u_offset(k), nu_) = spec_.u_lower;
    x_u.segment(u_offset(k), nu_) = spec_.u_upper;
    if (spec_.free_final_time) {
      x_l[dt_offset(k)] = spec_.dt_min;
      x_u[dt_offset(k)] = spec_.dt_max;
    }
  }
  for (int k = 1; k <= N; ++k) {
    x_l.segment(q_offset(k), n_) = spec_.q_lower;
    x_u.segment(q_offset(k), n_) = spec_.q_upper;
  }
  for (int i = 0; i < n_; ++i)
    if (spec_.q_final_fixed[i]) x_l[q_offset(N) + i] = x_u[q_offset(N) + i] = spec_.q_final[i];
  if (spec_.final_at_rest) {
    x_l.segment(p_offset(N), n_).setZero();
    x_u.segment(p_offset(N), n_).setZero();
  }
}

void TreeOcp::initial_guess(VecX& x) const {
  const int N = spec_.steps;
  const double T = N * spec_.dt;
  VecX q_end = spec_.q0;
  for (int i = 0; i < n_; ++i)
    if (spec_.q_final_fixed[i]) q_end[i] = spec_.q_final[i];
  const VecX v = (q_end - spec_.q0) / T;
  tree::Data data(*spec_.model);
  x = VecX::Zero(num_variables());
  for (int k = 0; k <= N; ++k) {
    const VecX q = spec_.q0 + (static_cast<double>(k) / N) * (q_end - spec_.q0);
    tree::lagrangian_terms(*spec_.model, data, q, v, false, spec_.integrator.algorithm);
    x.segment(q_offset(k), n_) = q;
    x.segment(p_offset(k), n_) = data.L_v;
    if (k < N) x.segment(u_offset(k), nu_) = spec_.u_guess;
    if (k < N && spec_.free_final_time) x[dt_offset(k)] = spec_.dt;
  }
  x.segment(p_offset(0), n_) = x0_.p;
  if (spec_.final_at_rest) x.segment(p_offset(N), n_).setZero();
}

void TreeOcp::check_size(const VecX& x) const {
  if (x.size() != num_variables())
    throw InputError("tree OCP: x needs " + std::to_string(num_variables()) + " entries, got " +
                     std::to_string(x.size()));
}

void TreeOcp::evaluate(const VecX& x) {
  if (x_evaluated_.size() == x.size() && x_evaluated_ == x) return;
  check_size(x);
  // Invalidate first: a throw below must not leave a stale cache behind.
  x_evaluated_.resize(0);
  x_k_.t = 0.0;
  for (int k = 0; k < spec_.steps; ++k) {
    x_k_.q = x.segment(q_offset(k), n_);
    x_k_.p = x.segment(p_offset(k), n_);
    tree::midpoint_residual_blocks(*spec_.model, data_, spec_.integrator, dt_at(x, k), x_k_,
                                   x.segment(u_offset(k), nu_), x.segment(q_offset(k + 1), n_),
                                   x.segment(p_offset(k + 1), n_),
                                   x.segment(lambda_offset(k), m_), blocks_[k]);
    x_k_.t += dt_at(x, k);
  }
  x_evaluated_ = x;
}

double TreeOcp::cost(const VecX& x, VecX* grad) {
  check_size(x);
  const auto& w = spec_.effort_weights;
  double f = 0.0;
  if (grad) grad->setZero(num_variables());
  for (int k = 0; k < spec_.steps; ++k) {
    const double dt = dt_at(x, k);
    const auto u = x.segment(u_offset(k), nu_);
    const double rate =
        u.dot(w.cwiseProduct(u)) + (spec_.free_final_time ? spec_.time_weight : 0.0);
    f += dt * rate;
    if (grad) {
      grad->segment(u_offset(k), nu_) = (2.0 * dt) * w.cwiseProduct(u);
      if (spec_.free_final_time) (*grad)[dt_offset(k)] = rate;
    }
  }
  return f;
}

void TreeOcp::constraints(const VecX& x, VecX& g) {
  evaluate(x);
  g.resize(num_constraints());
  const int rows = 2 * n_ + m_;
  const int equal_row0 = spec_.steps * rows;
  for (int k = 0; k < spec_.steps; ++k) {
    g.segment(k * rows, n_ + m_) = blocks_[k].r_a;
    g.segment(k * rows + n_ + m_, n_) = blocks_[k].r_b;
    if (spec_.free_final_time && k > 0) g[equal_row0 + k - 1] = dt_at(x, k) - dt_at(x, k - 1);
  }
}

void TreeOcp::jacobian(const VecX& x, BlockSink& sink) {
  if (!sink.structure_mode()) evaluate(x);
  const int rows = 2 * n_ + m_;
  // The structure pass needs only the blocks' shapes.
  tree::MidpointResidualBlocks shapes;
  if (sink.structure_mode()) {
    shapes.Ja_qk = shapes.Ja_qkp1 = MatX::Zero(n_ + m_, n_);
    shapes.Jb_qk = shapes.Jb_qkp1 = MatX::Zero(n_, n_);
    shapes.Ja_u = MatX::Zero(n_ + m_, nu_);
    shapes.Jb_u = MatX::Zero(n_, nu_);
    shapes.Ja_lambda = MatX::Zero(n_ + m_, m_);
    shapes.Ja_dt = VecX::Zero(n_ + m_);
    shapes.Jb_dt = VecX::Zero(n_);
  }
  const int equal_row0 = spec_.steps * rows;
  for (int k = 0; k < spec_.steps; ++k) {
    const tree::MidpointResidualBlocks& b = sink.structure_mode() ? shapes : blocks_[k];
    const int ra = k * rows, rb = ra + n_ + m_;
    // r_a: h(q_kp1) rows depend on q_kp1 only; d r_a / d p_k is the identity.
    sink.block(ra, q_offset(k), b.Ja_qk.topRows(n_));
    for (int i = 0; i < n_; ++i) sink.entry(ra + i, p_offset(k) + i, 1.0);
    sink.block(ra, u_offset(k), b.Ja_u.topRows(n_));
    sink.block(ra, lambda_offset(k), b.Ja_lambda.topRows(n_));
    sink.block(ra, q_offset(k + 1), b.Ja_qkp1);
    // r_b: d r_b / d p_kp1 is the identity.
    sink.block(rb, q_offset(k), b.Jb_qk);
    sink.block(rb, u_offset(k), b.Jb_u);
    sink.block(rb, q_offset(k + 1), b.Jb_qkp1);
    for (int i = 0; i < n_; ++i) sink.entry(rb + i, p_offset(k + 1) + i, 1.0);
    if (spec_.free_final_time) {
      sink.block(ra, dt_offset(k), b.Ja_dt.head(n_));  // h(q_kp1) has no dt
      sink.block(rb, dt_offset(k), b.Jb_dt);
      if (k > 0) {
        sink.entry(equal_row0 + k - 1, dt_offset(k), 1.0);
        sink.entry(equal_row0 + k - 1, dt_offset(k - 1), -1.0);
      }
    }
  }
}

std::string TreeOcp::constraint_name(int i) const {
  const int rows = 2 * n_ + m_, equal_row0 = spec_.steps * rows;
  if (i >= equal_row0)
    return "equal steps h_" + std::to_string(i - equal_row0 + 1) + " = h_" +
           std::to_string(i - equal_row0);
  const int k = i / rows, r = i % rows;
  if (r < n_ + m_) return "dynamics r_a step " + std::to_string(k) + " row " + std::to_string(r);
  return "dynamics r_b step " + std::to_string(k) + " row " + std::to_string(r - n_ - m_);
}

std::string TreeOcp::variable_name(int j) const {
  const int k = j / stride_, r = j % stride_;
  const std::string at_knot = "] at knot " + std::to_string(k);
  if (r < n_) return "q[" + std::to_string(r) + at_knot;
  if (r < 2 * n_) return "p[" + std::to_string(r - n_) + at_knot;
  const std::string at_step = "] at step " + std::to_string(k);
  if (r < 2 * n_ + nu_) return "u[" + std::to_string(r - 2 * n_) + at_step;
  if (r < 2 * n_ + nu_ + m_) return "lambda[" + std::to_string(r - 2 * n_ - nu_) + at_step;
  return "h at step " + std::to_string(k);
}

void TreeOcp::tables(const VecX& x, Table& states, Table& controls) const {
  check_size(x);
  const int N = spec_.steps;
  const auto& coords = spec_.model->coords();
  states.columns = {"t"};
  for (const auto& c : coords) states.columns.push_back("q_" + c.name);
  for (const auto& c : coords) states.columns.push_back("p_" + c.name);
  states.rows.resize(N + 1, 1 + 2 * n_);
  double t = 0.0;
  for (int k = 0; k <= N; ++k) {
    states.rows(k, 0) = t;
    if (k < N) t += dt_at(x, k);
    states.rows.row(k).segment(1, 2 * n_) = x.segment(q_offset(k), 2 * n_).transpose();
  }
  controls.columns = {"t"};
  for (int i = 0; i < nu_; ++i) controls.columns.push_back("u_" + std::to_string(i));
  controls.rows.resize(N, 1 + nu_);
  for (int k = 0; k < N; ++k) {
    controls.rows(k, 0) = states.rows(k, 0);
    controls.rows.row(k).tail(nu_) = x.segment(u_offset(k), nu_).transpose();
  }
}

double TreeOcp::resimulation_error(const VecX& x) const {
  check_size(x);
  const tree::Model& model = *spec_.model;
  tree::Data data(model);
  tree::TreeState state = tree::midpoint_initial_state(model, data, 0.0, spec_.q0, spec_.qd0);
  tree::TreeState next;
  const VecX no_prescribed;
  std::vector<std::string> names;
  for (const auto& c : model.coords()) names.push_back("q_" + c.name);
  for (const auto& c : model.coords()) names.push_back("p_" + c.name);
  VecX simulated(2 * n_), previous(2 * n_);
  simulated << state.q, state.p;
  double error = 0.0, t = 0.0;
  for (int k = 0; k < spec_.steps; ++k) {
    const double dt = dt_at(x, k);
    const auto status = tree::midpoint_step(model, data, spec_.integrator, dt, state,
                                            x.segment(u_offset(k), nu_), no_prescribed, next);
    if (!status.converged)
      throw SolverError("tree OCP re-simulation: step " + std::to_string(k) +
                        " did not converge (" + std::to_string(status.iterations) +
                        " Newton iterations, residual " + std::to_string(status.residual_norm) +
                        ")");
    state = next;
    previous = simulated;
    simulated << state.q, state.p;
    detail::check_resimulated(simulated, previous, names, k, t + dt, t);
    VecX solution(2 * n_);
    solution << x.segment(q_offset(k + 1), n_), x.segment(p_offset(k + 1), n_);
    error = std::max(error, detail::resimulation_difference(simulated, solution, names, k, t + dt));
    t += dt;
  }
  return error;
}

double TreeOcp::min_clearance(const VecX&) const { return kInf; }

// ---------------------------------------------------------------------------------------
// Acrobot

tree::Model acrobot(const AcrobotParams& p) {
  for (auto [value, name] : {std::pair{p.mass1, "mass1"}, std::pair{p.mass2, "mass2"},
                             std::pair{p.length1, "length1"}, std::pair{p.length2, "length2"}})
    if (!(value > 0.0) || !std::isfinite(value))
      throw InputError(std::string("acrobot: ") + name + " must be a finite number > 0 (got " +
                       std::to_string(value) + ")");
  if (!(p.gravity >= 0.0) || !std::isfinite(p.gravity))
    throw InputError("acrobot: gravity must be a finite number >= 0 (got " +
                     std::to_string(p.gravity) + ")");
  tree::ModelBuilder b;
  b.set_gravity(Vec3(0.0, 0.0, -p.gravity));
  // A link hangs along its frame's -z; a rod's inertia across it about its centre.
  auto link = [&](int frame, double m, double l) {
    const double c = p.rods ? 0.5 * l : l;
    const double across = p.rods ? m * l * l / 12.0 : 0.0;
    b.add_mass(frame, m, Vec3(0.0, 0.0, -c), Vec3(across, across, 0.0).asDiagonal());
  };
  const int link1 = b.add_joint_frame("link1", tree::kWorld, tree::Transform::Rx, "shoulder");
  link(link1, p.mass1, p.length1);
  const int elbow = b.add_fixed_frame("elbow", link1, tree::Transform::Tz, -p.length1);
  const int link2 = b.add_joint_frame("link2", elbow, tree::Transform::Rx, "elbow");
  link(link2, p.mass2, p.length2);
  b.add_coordinate_force_input(b.coord_index("elbow"));
  return b.build();
}

TreeOcpSpec acrobot_swing_up(const AcrobotParams& p, double dt, int steps,
                             double torque_limit) {
  if (!(torque_limit > 0.0))
    throw InputError("acrobot swing-up: torque_limit must be > 0 (got " +
                     std::to_string(torque_limit) + ")");
  TreeOcpSpec s;
  s.model = std::make_shared<const tree::Model>(acrobot(p));
  s.dt = dt;
  s.steps = steps;
  s.q0 = s.qd0 = VecX::Zero(2);
  s.q_final = VecX(2);
  s.q_final << std::numbers::pi, 0.0;
  s.final_at_rest = true;
  s.u_lower = VecX::Constant(1, -torque_limit);
  s.u_upper = VecX::Constant(1, torque_limit);
  s.effort_weights = VecX::Ones(1);
  // Upright is unstable: re-simulating the optimal controls amplifies the step's own
  // solve error about a million-fold over a few seconds, so the steps solve to round-off.
  s.integrator.newton.tolerance = 1e-13;
  return s;
}

}  // namespace marsden::control
