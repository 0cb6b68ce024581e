#include "marsden/tree/dynamics.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include <Eigen/LU>
#include <Eigen/SVD>

#include "marsden/error.hpp"
#include "marsden/solve/rk.hpp"
#include "marsden/support/text.hpp"
#include "tree/detail.hpp"
#include "support/shared_object.hpp"

namespace marsden::tree {

namespace {

std::size_t saturating_add(std::size_t a, std::size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}
std::size_t saturating_mul(std::size_t a, std::size_t b) {
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

// Entries of the paper's first and second derivative caches: the sums over the frames of
// their driven-ancestor counts and of their squares.
std::pair<std::size_t, std::size_t> paper_cache_entries(const Model& model) {
  std::vector<std::size_t> count(model.num_frames(), 0);
  std::size_t d1 = 0, d2 = 0;
  for (int k = 0; k < model.num_frames(); ++k) {
    const Frame& f = model.frames()[k];
    count[k] = (f.parent == kWorld ? 0 : count[f.parent]) + (f.coord >= 0 ? 1 : 0);
    d1 = saturating_add(d1, count[k]);
    d2 = saturating_add(d2, saturating_mul(count[k], count[k]));
  }
  return {d1, d2};
}

}  // namespace

std::size_t data_memory_estimate(const Model& model, int paper_order) {
  const std::size_t n = model.num_coords(), k = n + model.num_constraint_rows();
  // Eight n x n matrices, four (n + m) x (n + m) ones (Newton, saddle point, LU).
  std::size_t bytes = saturating_mul(sizeof(double),
                                     saturating_add(saturating_mul(8 * n, n),
                                                    saturating_mul(4 * k, k)));
  if (paper_order <= 0) return bytes;
  const auto [d1, d2] = paper_cache_entries(model);
  const std::size_t entry = sizeof(Mat4) + 2 * sizeof(Vec6);
  bytes = saturating_add(bytes, saturating_mul(d1, sizeof(int) + entry));
  if (paper_order >= 2) bytes = saturating_add(bytes, saturating_mul(d2, entry));
  return bytes;
}

namespace detail {

void ensure_paper_cache(const Model& model, Data& data, int order) {
  const bool built = data.anc.size() == static_cast<std::size_t>(model.num_frames());
  const bool first = order < 1 || data.dg.size() == data.d1_size;
  const bool second = order < 2 || data.ddg.size() == data.d2_size;
  if (built && first && second) return;
  const std::size_t need = data_memory_estimate(model, order);
  if (need > data.memory_limit) {
    throw InputError("tree model: the paper's cached recursion needs about " + bytes_text(double(need)) +
                     " here (" + std::to_string(model.num_coords()) + " coordinates, " +
                     std::to_string(model.num_frames()) + " frames; its second derivatives "
                     "grow like n^3 on a chain), over the limit of " +
                     bytes_text(double(data.memory_limit)) +
                     "; the spatial algorithm (the default) needs O(n^2)");
  }
  if (!built) {
    const int nf = model.num_frames();
    data.anc.assign(nf, {});
    data.d1_offset.assign(nf, 0);
    data.d2_offset.assign(nf, 0);
    data.d1_size = data.d2_size = 0;
    for (int k = 0; k < nf; ++k) {
      const Frame& f = model.frames()[k];
      if (f.parent != kWorld) data.anc[k] = data.anc[f.parent];
      if (f.coord >= 0) data.anc[k].push_back(f.coord);
      data.d1_offset[k] = data.d1_size;
      data.d2_offset[k] = data.d2_size;
      data.d1_size += data.anc[k].size();
      data.d2_size += data.anc[k].size() * data.anc[k].size();
    }
  }
  if (order >= 1 && data.dg.size() != data.d1_size) {
    data.dg.assign(data.d1_size, Mat4::Zero());
    data.dvb_dq.assign(data.d1_size, Vec6::Zero());
    data.dvb_dqd.assign(data.d1_size, Vec6::Zero());
  }
  if (order >= 2 && data.ddg.size() != data.d2_size) {
    data.ddg.assign(data.d2_size, Mat4::Zero());
    data.ddvb_dqdq.assign(data.d2_size, Vec6::Zero());
    data.ddvb_dqd_dq.assign(data.d2_size, Vec6::Zero());
  }
}

}  // namespace detail

namespace {

// The limit, after checking the dense work space against it (before any is allocated).
std::size_t checked_memory_limit(const Model& model, std::size_t limit) {
  const std::size_t need = data_memory_estimate(model, 0);
  if (need > limit) {
    throw InputError("tree model: " + std::to_string(model.num_coords()) + " coordinates and " +
                     std::to_string(model.num_constraint_rows()) + " constraint rows need about " +
                     bytes_text(double(need)) + " of dense work space, over the limit of " +
                     bytes_text(double(limit)));
  }
  return limit;
}

}  // namespace

Data::Data(const Model& model, std::size_t memory_limit_bytes)
    : memory_limit(checked_memory_limit(model, memory_limit_bytes)),
      newton(model.num_dynamic() + model.num_constraint_rows()) {
  const int n = model.num_coords(), nf = model.num_frames(), nj = int(model.joints().size());
  const int nu = model.num_inputs(), m = model.num_constraint_rows();
  L_q = L_v = VecX::Zero(n);
  L_qq = L_qv = M = MatX::Zero(n, n);
  Q = VecX::Zero(n);
  Q_q = Q_v = MatX::Zero(n, n);
  Q_u = MatX::Zero(n, nu);
  h = VecX::Zero(m);
  Dh = Dh_k = MatX::Zero(m, n);
  h_qq_w = MatX::Zero(n, n);

  g_s.assign(nf, SE3::identity());
  v_b.assign(nf, Vec6::Zero());

  g_joint.assign(nj, SE3::identity());
  S = V = c = F = e = H = std::vector<Vec6>(nj, Vec6::Zero());
  m_c.assign(nj, 0.0);
  h_c = gamma = std::vector<Vec3>(nj, Vec3::Zero());
  I_c.assign(nj, Mat3::Zero());

  IA.assign(nj, Mat6::Zero());
  U_art = p_art = a_art = std::vector<Vec6>(nj, Vec6::Zero());
  D_art = u_art = std::vector<double>(nj, 0.0);
  d_art = b_art = x_art = VecX::Zero(n);

  q_kp1 = q_m = v_m = VecX::Zero(n);
  lambda = VecX::Zero(m);
  z = z_guess = VecX::Zero(model.num_dynamic() + m);
  z_art = z_art_prev = g_art = g_art_prev = VecX::Zero(model.num_dynamic());
  q_prev_end = v_prev = v_prev2 = VecX::Zero(n);
  D1 = MatX::Zero(n, n);
  J3_a = J3_b = MatX::Zero(3, n);
  grad_n = VecX::Zero(n);
  hess_n = MatX::Zero(n, n);
  const int nd = model.num_dynamic();
  qdd = rhs_dynamics = product_n = VecX::Zero(n);
  lambda_dynamics = product_m = weight_m = VecX::Zero(m);
  b_dynamics = x_dynamics = VecX::Zero(nd + m);
  A_dynamics = MatX::Zero(nd + m, nd + m);
  lu_dynamics = Eigen::FullPivLU<MatX>(nd + m, nd + m);
}

namespace {

void check_sizes(const Model& model, const VecX& q, const VecX& qd, const char* where) {
  if (q.size() != model.num_coords() || qd.size() != model.num_coords())
    throw InputError(std::string(where) + ": q and qd need " +
                     std::to_string(model.num_coords()) + " entries, got " +
                     std::to_string(q.size()) + " and " + std::to_string(qd.size()));
}

}  // namespace

void lagrangian_terms(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      bool second_order, LagrangianAlgorithm algorithm) {
  data.kinetic = data.potential = 0.0;
  data.L_q.setZero();
  data.L_v.setZero();
  if (second_order) {
    data.L_qq.setZero();
    data.L_qv.setZero();
    data.M.setZero();
  }
  detail::joint_kinematics(model, data, q, qd);
  if (algorithm == LagrangianAlgorithm::Spatial)
    detail::spatial_lagrangian(model, data, second_order);
  else
    detail::paper_lagrangian(model, data, q, qd, second_order,
                             algorithm == LagrangianAlgorithm::PaperCached);
  // Rotor inertia: 1/2 a qd_i^2 per coordinate, constant in q.
  for (int i = 0; i < model.num_coords(); ++i) {
    const double a = model.coords()[i].armature;
    if (a == 0.0) continue;
    data.kinetic += 0.5 * a * qd[i] * qd[i];
    data.L_v[i] += a * qd[i];
    if (second_order) data.M(i, i) += a;
  }
  detail::add_spring_terms(model, data, q, second_order);
}

void solve_mass_matrix(const Model& model, Data& data, const VecX& q, const VecX& d,
                       const VecX& b, VecX& x) {
  const int n = model.num_coords();
  if (q.size() != n || d.size() != n || b.size() != n)
    throw InputError("tree mass matrix solve: q, d and b need " + std::to_string(n) + " entries");
  if (!q.allFinite() || !d.allFinite() || !b.allFinite())
    throw InputError("tree mass matrix solve: q, d or b is not finite");
  detail::joint_poses(model, data, q);
  data.d_art = d;
  detail::articulated_factor(model, data);
  data.b_art = b;
  detail::articulated_solve(model, data);
  x = data.x_art;
}

void generalized_forces(const Model& model, Data& data, const VecX& q, const VecX& qd,
                        const VecX& u, bool derivatives) {
  if (u.size() != model.num_inputs())
    throw InputError("tree forces: u needs " + std::to_string(model.num_inputs()) +
                     " entries, got " + std::to_string(u.size()));
  detail::joint_kinematics(model, data, q, qd);
  detail::forces_at_current_kinematics(model, data, q, qd, u, derivatives);
}

void constraint_terms(const Model& model, Data& data, const VecX& q, const VecX* weight) {
  detail::joint_poses(model, data, q);
  detail::constraints_at_current_kinematics(model, data, q, weight);
}

double energy(const Model& model, Data& data, const VecX& q, const VecX& qd) {
  check_sizes(model, q, qd, "tree energy");
  lagrangian_terms(model, data, q, qd, false);
  return data.kinetic + data.potential;
}

void accelerations(const Model& model, Data& data, const VecX& q, const VecX& qd, const VecX& u,
                   const VecX& qdd_prescribed) {
  check_sizes(model, q, qd, "tree dynamics");
  if (qdd_prescribed.size() != model.num_prescribed())
    throw InputError("tree dynamics: qdd_prescribed needs " +
                     std::to_string(model.num_prescribed()) + " entries");
  const int nd = model.num_dynamic(), m = model.num_constraint_rows();
  lagrangian_terms(model, data, q, qd, true);
  detail::forces_at_current_kinematics(model, data, q, qd, u, false);
  // M qdd = L_q - (d2L/dqd dq) qd + Q + Dh^T lambda, eq. (14).
  VecX& rhs = data.rhs_dynamics;
  rhs = data.L_q + data.Q;
  rhs.noalias() -= data.L_qv.transpose() * qd;

  VecX& qdd = data.qdd;
  qdd.setZero();
  for (int a = 0; a < model.num_prescribed(); ++a) qdd[model.prescribed_coords()[a]] = qdd_prescribed[a];

  MatX& A = data.A_dynamics;
  VecX& b = data.b_dynamics;
  // The constraints' velocity product, -qd^T (d2h_c/dq2) qd, one row at a time (the last
  // call leaves Dh(q) in data).
  VecX& weight = data.weight_m;
  for (int c = 0; c < m; ++c) {
    weight.setZero();
    weight[c] = 1.0;
    constraint_terms(model, data, q, &weight);
    data.product_n.noalias() = data.h_qq_w * qd;
    b[nd + c] = -qd.dot(data.product_n);
  }
  A.setZero();
  const auto& dyn = model.dynamic_coords();
  // The prescribed accelerations' share of M qdd and Dh qdd (only those entries of qdd are
  // set here).
  data.product_n.noalias() = data.M * qdd;
  data.product_m.noalias() = data.Dh * qdd;
  for (int a = 0; a < nd; ++a) {
    for (int b2 = 0; b2 < nd; ++b2) A(a, b2) = data.M(dyn[a], dyn[b2]);
    for (int c = 0; c < m; ++c) {
      A(a, nd + c) = -data.Dh(c, dyn[a]);
      A(nd + c, a) = data.Dh(c, dyn[a]);
    }
    b[a] = rhs[dyn[a]] - data.product_n[dyn[a]];
  }
  for (int c = 0; c < m; ++c) b[nd + c] -= data.product_m[c];
  Eigen::FullPivLU<MatX>& lu = data.lu_dynamics;
  lu.compute(A);
  if (!lu.isInvertible())
    throw SolverError("tree dynamics: the constrained mass matrix is singular (rank " +
                      std::to_string(lu.rank()) + " of " + std::to_string(nd + m) +
                      "); check masses and redundant constraints");
  // x = Q U^-1 L^-1 P b, in place (FullPivLU::solve would allocate a temporary).
  VecX& x = data.x_dynamics;
  x.noalias() = lu.permutationP() * b;
  lu.matrixLU().triangularView<Eigen::UnitLower>().solveInPlace(x);
  lu.matrixLU().triangularView<Eigen::Upper>().solveInPlace(x);
  b.noalias() = lu.permutationQ() * x;
  for (int a = 0; a < nd; ++a) qdd[dyn[a]] = b[a];
  data.lambda_dynamics = b.tail(m);
}

Acceleration continuous_dynamics(const Model& model, Data& data, const VecX& q, const VecX& qd,
                                 const VecX& u, const VecX& qdd_prescribed) {
  accelerations(model, data, q, qd, u, qdd_prescribed);
  return Acceleration{data.qdd, data.lambda_dynamics};
}

void rk4_step(const Model& model, Data& data, double dt, const VecX& u, VecX& q, VecX& qd) {
  const VecX qdd_prescribed = VecX::Zero(model.num_prescribed());
  const Eigen::Index n = q.size();
  VecX y(2 * n);
  y << q, qd;
  const VecX y1 = rk_step(RungeKutta::Classic4, 0.0, dt, y, [&](double, const VecX& s) {
    VecX ds(2 * n);
    ds << s.tail(n), continuous_dynamics(model, data, s.head(n), s.tail(n), u, qdd_prescribed).qdd;
    return ds;
  });
  q = y1.head(n);
  qd = y1.tail(n);
}

namespace detail {

namespace {

// A generated constraint's rows from row on: h, Dh and, with weights, its share of
// h_qq_w = sum_c w_c d2h_c/dq2; the object's outputs go through work arrays on the stack.
void add_generated_constraint_terms(const GeneratedConstraint& g, int row, Data& data,
                                    const VecX& q, const VecX* weight) {
  constexpr int kMax = kGeneratedElementMaxCoords;
  std::array<double, kMax> q_c, w, h;
  std::array<double, kMax * kMax> Dh, h_qq_w;
  for (int a = 0; a < g.size; ++a) q_c[a] = q[g.coords[a]];
  if (weight)
    for (int i = 0; i < g.rows; ++i) w[i] = (*weight)[row + i];
  marsden::detail::check_status(g.evaluate(q_c.data(), weight ? w.data() : nullptr, h.data(),
                                           Dh.data(), weight ? h_qq_w.data() : nullptr),
                                g.library, "marsden_tree_constraint");
  for (int i = 0; i < g.rows; ++i) data.h[row + i] = h[i];
  for (int b = 0; b < g.size; ++b)
    for (int i = 0; i < g.rows; ++i) data.Dh(row + i, g.coords[b]) = Dh[i + g.rows * b];
  if (!weight) return;
  for (int b = 0; b < g.size; ++b)
    for (int a = 0; a < g.size; ++a)
      data.h_qq_w(g.coords[a], g.coords[b]) += h_qq_w[a + g.size * b];
}

}  // namespace

void constraints_at_current_kinematics(const Model& model, Data& data, const VecX& q,
                                       const VecX* weight) {
  data.Dh.setZero();
  if (weight) data.h_qq_w.setZero();
  for (const Constraint& c : model.constraints()) {
    const int row = c.first_row;
    if (c.kind == ConstraintKind::Generated) {
      add_generated_constraint_terms(model.generated_constraints()[c.generated], row, data, q,
                                     weight);
      continue;
    }
    if (c.kind == ConstraintKind::CoordinateCoupling) {  // linear: no second derivative
      data.h[row] = q[c.coord_a] - c.multiplier * q[c.coord_b] - c.offset;
      data.Dh(row, c.coord_a) = 1.0;
      data.Dh(row, c.coord_b) = -c.multiplier;
      continue;
    }
    const Vec3 p_a = frame_origin(model, data, c.frame_a);
    const Vec3 p_b = frame_origin(model, data, c.frame_b);
    switch (c.kind) {
      case ConstraintKind::Distance: {
        const bool hess = weight && (*weight)[row] != 0.0;
        const double d = distance_terms(model, data, c.frame_a, c.frame_b, data.grad_n,
                                        hess ? &data.hess_n : nullptr);
        const double target = c.distance_coord >= 0 ? q[c.distance_coord] : c.distance;
        data.h[row] = d - target;
        data.Dh.row(row) = data.grad_n.transpose();
        if (c.distance_coord >= 0) data.Dh(row, c.distance_coord) -= 1.0;
        if (hess) data.h_qq_w += (*weight)[row] * data.hess_n;
        break;
      }
      case ConstraintKind::PointOnPlane: {
        const Vec3 n = frame_rotation(model, data, c.frame_b) * c.normal;
        const Vec3 r = p_a - p_b;
        data.h[row] = n.dot(r);
        MatX& J_r = data.J3_a;
        MatX& J_n = data.J3_b;
        J_r.setZero();
        J_n.setZero();
        add_point_jacobian(model, data, c.frame_a, p_a, 1.0, J_r);
        add_point_jacobian(model, data, c.frame_b, p_b, -1.0, J_r);
        add_direction_jacobian(model, data, c.frame_b, n, J_n);
        data.Dh.row(row).noalias() = n.transpose() * J_r + r.transpose() * J_n;
        if (weight && (*weight)[row] != 0.0) {
          const double w = (*weight)[row];
          add_point_hessian(model, data, c.frame_a, p_a, w * n, 1.0, data.h_qq_w);
          add_point_hessian(model, data, c.frame_b, p_b, w * n, -1.0, data.h_qq_w);
          add_direction_hessian(model, data, c.frame_b, n, w * r, data.h_qq_w);
          // Two products, each added in place (their sum would be a temporary).
          data.h_qq_w.noalias() += (w * J_n.transpose()) * J_r;
          data.h_qq_w.noalias() += (w * J_r.transpose()) * J_n;
        }
        break;
      }
      case ConstraintKind::PointToPoint: {
        data.h.segment<3>(row) = p_a - p_b;
        MatX& J_r = data.J3_a;
        J_r.setZero();
        add_point_jacobian(model, data, c.frame_a, p_a, 1.0, J_r);
        add_point_jacobian(model, data, c.frame_b, p_b, -1.0, J_r);
        data.Dh.middleRows<3>(row) = J_r;
        if (weight) {
          const Vec3 w = weight->segment<3>(row);
          add_point_hessian(model, data, c.frame_a, p_a, w, 1.0, data.h_qq_w);
          add_point_hessian(model, data, c.frame_b, p_b, w, -1.0, data.h_qq_w);
        }
        break;
      }
      case ConstraintKind::CoordinateCoupling:
      case ConstraintKind::Generated: break;
    }
  }
}

}  // namespace detail

double max_constraint_violation(const Model& model, Data& data, const VecX& q) {
  if (model.num_constraint_rows() == 0) return 0.0;
  constraint_terms(model, data, q, nullptr);
  return data.h.lpNorm<Eigen::Infinity>();
}

// The largest |h_c(q)| and the name of that constraint.
std::pair<double, std::string> worst_constraint(const Model& model, Data& data, const VecX& q) {
  if (model.num_constraint_rows() == 0) return {0.0, ""};
  constraint_terms(model, data, q, nullptr);
  std::pair<double, std::string> worst{0.0, ""};
  for (const Constraint& c : model.constraints())
    for (int r = 0; r < c.rows(); ++r)
      if (std::abs(data.h[c.first_row + r]) >= worst.first)
        worst = {std::abs(data.h[c.first_row + r]), c.name};
  return worst;
}

void check_generated_constraints(const Model& model, Data& data, const VecX& q) {
  if (model.generated_constraints().empty()) return;
  constraint_terms(model, data, q, nullptr);
  constexpr int kMax = kGeneratedElementMaxCoords;
  for (const Constraint& c : model.constraints()) {
    if (c.kind != ConstraintKind::Generated) continue;
    const GeneratedConstraint& g = model.generated_constraints()[c.generated];
    const std::string what = "tree constraint '" + c.name + "' (" + g.library + ")";
    if (!data.h.segment(c.first_row, g.rows).allFinite() ||
        !data.Dh.middleRows(c.first_row, g.rows).allFinite())
      throw InputError(what + ": h or Dh is not finite at the initial configuration");
    // Dh over the coordinates the step solves for: the prescribed ones' columns are given.
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMax, kMax> Dh_dyn(g.rows, 0);
    for (int a = 0; a < g.size; ++a) {
      if (model.dynamic_index(g.coords[a]) < 0) continue;
      Dh_dyn.conservativeResize(g.rows, Dh_dyn.cols() + 1);
      for (int i = 0; i < g.rows; ++i)
        Dh_dyn(i, Dh_dyn.cols() - 1) = data.Dh(c.first_row + i, g.coords[a]);
    }
    // Singular values below 1e-9 of the largest count as zero: rows dependent up to
    // round-off make the Newton matrix numerically singular.
    Eigen::JacobiSVD<decltype(Dh_dyn)> svd(Dh_dyn);
    svd.setThreshold(1e-9);
    const int rank = Dh_dyn.cols() == 0 ? 0 : static_cast<int>(svd.rank());
    if (rank < g.rows)
      throw InputError(what + ": " +
                       (g.rows == 1 ? std::string("its row is degenerate")
                                    : "its " + std::to_string(g.rows) + " rows are dependent") +
                       " at the initial configuration (Dh over its " +
                       std::to_string(Dh_dyn.cols()) + " dynamic coordinates has rank " +
                       std::to_string(rank) + " of " + std::to_string(g.rows) +
                       "); drop a redundant row or start elsewhere");
  }
}

}  // namespace marsden::tree
