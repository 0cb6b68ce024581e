#include "marsden/control/holonomic_ocp.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <type_traits>

#include <Eigen/Geometry>

#include "marsden/error.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/lie/tangent.hpp"
#include "marsden/vehicle/holonomic.hpp"
#include "resimulation.hpp"

namespace marsden::control {

namespace {

using vehicle::holonomic_residual;
using vehicle::holonomic_step;
using vehicle::HolonomicModel;
using vehicle::initial_xi_km1;
using vehicle::initial_xi_km1_ddt;
using vehicle::InputVec;
using vehicle::StepInputs;
using vehicle::vehicle_energy;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Fills an empty vector with a default, or checks the size.
void sized(InputVec& v, int n, double fill, const char* field) {
  if (v.size() == 0) {
    v = InputVec::Constant(n, fill);
    return;
  }
  if (v.size() != n)
    throw InputError(std::string(field) + ": needs " + std::to_string(n) + " entries, got " +
                     std::to_string(v.size()));
}

void check_bounds(const auto& lo, const auto& hi, const char* field) {
  for (int i = 0; i < lo.size(); ++i)
    if (std::isnan(lo[i]) || std::isnan(hi[i]) || lo[i] > hi[i])
      throw InputError(std::string(field) + ": lower bound " + std::to_string(lo[i]) +
                       " above upper bound " + std::to_string(hi[i]) + " at entry " +
                       std::to_string(i));
}

void check_within(double value, double lo, double hi, const std::string& what) {
  if (value < lo || value > hi)
    throw InputError(what + " = " + std::to_string(value) + " lies outside its bounds [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// Orientation part of the guess at fraction s of the path.
SE2 orientation_at(const SE2& from, const SE2& to, double s) {
  double d = to.angle() - from.angle();
  d = std::remainder(d, 2.0 * std::numbers::pi);
  return SE2::from_angle(from.angle() + s * d, Vec2::Zero());
}

SE3 orientation_at(const SE3& from, const SE3& to, double s) {
  Quat q0 = Quat::from_rotation(from.R), q1 = Quat::from_rotation(to.R);
  if (q0.q.dot(q1.q) < 0.0) q1.q = -q1.q;
  const Quat q = q0 * Quat::exp(s * Quat::log(q0.inverse() * q1));
  return SE3{q.matrix(), Vec3::Zero()};
}

template <class G>
G with_position(const G& rotation, const Vec3& p) {
  G g = rotation;
  if constexpr (std::is_same_v<G, SE2>)
    g.x = p.head<2>();
  else
    g.x = p;
  return g;
}

template <class G>
Vec3 position_of(const G& g) {
  if constexpr (std::is_same_v<G, SE2>)
    return Vec3(g.x.x(), g.x.y(), 0.0);
  else
    return g.x;
}

Vec3 point_on_polyline(const std::vector<Vec3>& pts, double s) {
  std::vector<double> len(pts.size(), 0.0);
  for (std::size_t i = 1; i < pts.size(); ++i) len[i] = len[i - 1] + (pts[i] - pts[i - 1]).norm();
  if (len.back() <= 0.0) return pts.front();
  const double target = s * len.back();
  for (std::size_t i = 1; i < pts.size(); ++i)
    if (target <= len[i] || i + 1 == pts.size()) {
      const double seg = len[i] - len[i - 1];
      const double a = seg > 0.0 ? (target - len[i - 1]) / seg : 0.0;
      return pts[i - 1] + a * (pts[i] - pts[i - 1]);
    }
  return pts.back();
}

}  // namespace

template <class G>
HolonomicOcp<G>::HolonomicOcp(HolonomicOcpSpec<G> spec)
    : spec_(std::move(spec)),
      path_(spec_.path, Chart::kPositionDim, std::max(spec_.steps, 1),
            kNc + kNt + (spec_.model ? spec_.model->num_controls() : 0) +
                (spec_.model ? spec_.model->num_shape() : 0) + (spec_.free_final_time ? 1 : 0),
            Chart::kPositionOffset, spec_.dt) {
  if (!spec_.model) throw InputError("optimal control: no vehicle model");
  if (!(spec_.dt > 0.0) || !std::isfinite(spec_.dt))
    throw InputError("dt: must be positive and finite, got " + std::to_string(spec_.dt));
  if (spec_.steps < 1) throw InputError("steps: must be at least 1");
  nu_ = spec_.model->num_controls();
  ns_ = spec_.model->num_shape();
  sized(spec_.u_lower, nu_, -kInf, "control_lower");
  sized(spec_.u_upper, nu_, kInf, "control_upper");
  sized(spec_.gamma_lower, ns_, -kInf, "shape_lower");
  sized(spec_.gamma_upper, ns_, kInf, "shape_upper");
  sized(spec_.u_weights, nu_, 1.0, "control_weights");
  sized(spec_.u_reference, nu_, 0.0, "control_reference");
  sized(spec_.gamma_weights, ns_, 0.0, "shape_weights");
  sized(spec_.u_guess, nu_, 0.0, "control_guess");
  sized(spec_.gamma_guess, ns_, 0.0, "shape_guess");
  check_bounds(spec_.u_lower, spec_.u_upper, "control bounds");
  check_bounds(spec_.gamma_lower, spec_.gamma_upper, "shape bounds");
  check_bounds(spec_.position_lower, spec_.position_upper, "position bounds");
  check_bounds(spec_.xi_lower, spec_.xi_upper, "velocity bounds");
  if (!spec_.g0.matrix().allFinite() || !spec_.xi0.allFinite())
    throw InputError("initial pose or velocity: not finite");
  if (!spec_.final_position.allFinite()) throw InputError("final position: not finite");
  if (spec_.final_heading && (std::is_same_v<G, SE2> || !std::isfinite(*spec_.final_heading)))
    throw InputError("final heading: only for SE(3) vehicles, and finite");
  for (const auto& w : spec_.waypoints)
    if (!w.allFinite()) throw InputError("waypoints: not finite");
  if (!spec_.u_weights.allFinite() || spec_.u_weights.minCoeff() < 0.0 ||
      (ns_ > 0 && (!spec_.gamma_weights.allFinite() || spec_.gamma_weights.minCoeff() < 0.0)))
    throw InputError("cost weights: must be finite and non-negative");
  for (int i = 0; i < 3; ++i)
    if (spec_.final_position_fixed[i])
      check_within(spec_.final_position[i], spec_.position_lower[i], spec_.position_upper[i],
                   "final position component " + std::to_string(i));
  if (spec_.final_velocity) {
    if (!spec_.final_velocity->allFinite()) throw InputError("final velocity: not finite");
    for (int i = 0; i < kNt; ++i)
      check_within((*spec_.final_velocity)[i], spec_.xi_lower[i], spec_.xi_upper[i],
                   "final velocity component " + std::to_string(i));
  }

  if (spec_.free_final_time) {
    if (!(spec_.dt_min > 0.0) || !(spec_.dt_min <= spec_.dt) || !(spec_.dt <= spec_.dt_max))
      throw InputError("final time: needs 0 < dt_min <= dt <= dt_max (got dt_min " +
                       std::to_string(spec_.dt_min) + ", dt " + std::to_string(spec_.dt) +
                       ", dt_max " + std::to_string(spec_.dt_max) + ")");
    if (!(spec_.time_weight >= 0.0) || !std::isfinite(spec_.time_weight))
      throw InputError("final time: the weight must be finite and non-negative");
    if (spec_.path.hazard_weight > 0.0)
      throw InputError("final time: a free final time takes no hazard cost (use the "
                       "obstacles' margins)");
    if (spec_.model->wrench_depends_on_time())
      throw InputError("final time: the vehicle's external wrench depends on time; a free "
                       "final time needs a time-invariant one");
  }
  xi_m1_ = initial_xi_km1<G>(*spec_.model, spec_.integrator, spec_.dt, spec_.xi0);
  c0_ = Chart::coords(spec_.g0);
  c_final_ = c0_;
  if (spec_.final_orientation) {
    if constexpr (std::is_same_v<G, SE2>)
      c_final_ = Chart::coords(*spec_.final_orientation, c0_[0]);
    else
      c_final_ = Chart::coords(*spec_.final_orientation, c0_.template tail<4>());
  }
  block_ = kNc + kNt + nu_ + ns_ + (spec_.free_final_time ? 1 : 0);
  num_vars_ = spec_.steps * block_ + kNc;
  step_rows_ = kNc + kNt;
  equal_row0_ = spec_.steps * step_rows_;
  path_row0_ = equal_row0_ + (spec_.free_final_time ? spec_.steps - 1 : 0);
  num_cons_ = path_row0_ + path_.num_constraints();
  if (spec_.final_heading) heading_row_ = num_cons_++;
}

template <class G>
typename HolonomicOcp<G>::Chart::Coords HolonomicOcp<G>::coords_at(const VecX& x, int k) const {
  return x.template segment<kNc>(coords_index(k));
}

template <class G>
double HolonomicOcp<G>::dt_at(const VecX& x, int k) const {
  return spec_.free_final_time ? x[dt_index(k)] : spec_.dt;
}

template <class G>
typename HolonomicOcp<G>::Tangent HolonomicOcp<G>::xi_at(const VecX& x, int k) const {
  if (k >= 0) return x.template segment<kNt>(xi_index(k));
  if (!spec_.free_final_time) return xi_m1_;
  return initial_xi_km1<G>(*spec_.model, spec_.integrator, dt_at(x, 0), spec_.xi0);
}

template <class G>
StepInputs HolonomicOcp<G>::inputs_at(const VecX& x, int k) const {
  StepInputs in;
  in.u = x.segment(u_index(k), nu_);
  in.gamma = x.segment(gamma_index(k), ns_);
  return in;
}

template <class G>
void HolonomicOcp<G>::bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const {
  const int N = spec_.steps;
  x_l = VecX::Constant(num_vars_, -kInf);
  x_u = VecX::Constant(num_vars_, kInf);
  x_l.template segment<kNc>(0) = c0_;
  x_u.template segment<kNc>(0) = c0_;
  for (int k = 0; k < N; ++k) {
    x_l.template segment<kNt>(xi_index(k)) = spec_.xi_lower;
    x_u.template segment<kNt>(xi_index(k)) = spec_.xi_upper;
    x_l.segment(u_index(k), nu_) = spec_.u_lower;
    x_u.segment(u_index(k), nu_) = spec_.u_upper;
    x_l.segment(gamma_index(k), ns_) = spec_.gamma_lower;
    x_u.segment(gamma_index(k), ns_) = spec_.gamma_upper;
    if (spec_.free_final_time) {
      x_l[dt_index(k)] = spec_.dt_min;
      x_u[dt_index(k)] = spec_.dt_max;
    }
  }
  for (int k = 1; k <= N; ++k)
    for (int i = 0; i < Chart::kPositionDim; ++i) {
      x_l[coords_index(k) + Chart::kPositionOffset + i] = spec_.position_lower[i];
      x_u[coords_index(k) + Chart::kPositionOffset + i] = spec_.position_upper[i];
    }
  const int cN = coords_index(N);
  for (int i = 0; i < Chart::kPositionDim; ++i)
    if (spec_.final_position_fixed[i])
      x_l[cN + Chart::kPositionOffset + i] = x_u[cN + Chart::kPositionOffset + i] =
          spec_.final_position[i];
  if (spec_.final_orientation) {
    if constexpr (std::is_same_v<G, SE2>) {
      x_l[cN] = x_u[cN] = c_final_[0];
    } else {
      x_l.template segment<4>(cN + 3) = c_final_.template tail<4>();
      x_u.template segment<4>(cN + 3) = c_final_.template tail<4>();
    }
  }
  if (spec_.final_velocity) {
    x_l.template segment<kNt>(xi_index(N - 1)) = *spec_.final_velocity;
    x_u.template segment<kNt>(xi_index(N - 1)) = *spec_.final_velocity;
  }
  g_l = VecX::Zero(num_cons_);
  g_u = VecX::Zero(num_cons_);
  path_.bounds(g_l.data() + path_row0_, g_u.data() + path_row0_);
}

template <class G>
void HolonomicOcp<G>::initial_guess(VecX& x) const {
  const int N = spec_.steps;
  const double dt = spec_.dt;
  const HolonomicModel<G>& model = *spec_.model;
  x = VecX::Zero(num_vars_);
  std::vector<G> poses(N + 1);
  std::vector<Tangent> xis(N);
  if (spec_.simulate_guess) {
    StepInputs in{spec_.gamma_guess, spec_.u_guess};
    poses[0] = spec_.g0;
    Tangent xi_prev = xi_m1_;
    for (int k = 0; k < N; ++k) {
      Tangent xi = xi_prev;
      const NewtonStatus st = holonomic_step<G>(model, spec_.integrator, dt, k * dt, poses[k],
                                                xi_prev, in, xi, poses[k + 1]);
      if (!st.converged)
        throw SolverError("initial guess: simulating the guessed controls failed at step " +
                          std::to_string(k) + " (residual " + std::to_string(st.residual_norm) + ")");
      xis[k] = xi_prev = xi;
    }
  } else {
    std::vector<Vec3> pts{position_of(spec_.g0)};
    for (const auto& w : spec_.waypoints) pts.push_back(w);
    Vec3 end = pts.back();
    for (int i = 0; i < 3; ++i)
      if (spec_.final_position_fixed[i]) end[i] = spec_.final_position[i];
    pts.push_back(end);
    G target = spec_.g0;
    if (spec_.final_orientation) target = *spec_.final_orientation;
    if constexpr (std::is_same_v<G, SE3>)
      if (spec_.final_heading)
        target.R = Eigen::AngleAxisd(*spec_.final_heading, Vec3::UnitZ()).toRotationMatrix();
    for (int k = 0; k <= N; ++k) {
      const double s = static_cast<double>(k) / N;
      poses[k] = with_position(orientation_at(spec_.g0, target, s), point_on_polyline(pts, s));
    }
    for (int k = 0; k < N; ++k)
      xis[k] = tau_inv<G>(spec_.integrator.map, poses[k].inverse() * poses[k + 1]) / dt;
  }
  // Coordinates by the reconstruction itself, so the guess meets eq. (9) exactly.
  typename Chart::Coords c = c0_;
  for (int k = 0; k < N; ++k) {
    x.template segment<kNc>(coords_index(k)) = c;
    x.template segment<kNt>(xi_index(k)) = xis[k];
    x.segment(u_index(k), nu_) = spec_.u_guess;
    x.segment(gamma_index(k), ns_) = spec_.gamma_guess;
    if (spec_.free_final_time) x[dt_index(k)] = dt;
    c = Chart::compose(c, spec_.integrator.map, dt * xis[k], nullptr, nullptr);
  }
  x.template segment<kNc>(coords_index(N)) = c;
}

template <class G>
double HolonomicOcp<G>::cost(const VecX& x, VecX* grad) {
  if (grad) grad->setZero(num_vars_);
  double c = 0.0;
  for (int k = 0; k < spec_.steps; ++k) {
    const double dt = dt_at(x, k);
    double rate = 0.0;  // the integrand, d cost / d dt_k
    for (int i = 0; i < nu_; ++i) {
      const double d = x[u_index(k) + i] - spec_.u_reference[i];
      rate += spec_.u_weights[i] * d * d;
      if (grad) (*grad)[u_index(k) + i] += 2.0 * dt * spec_.u_weights[i] * d;
    }
    for (int i = 0; i < ns_; ++i) {
      const double gi = x[gamma_index(k) + i];
      rate += spec_.gamma_weights[i] * gi * gi;
      if (grad) (*grad)[gamma_index(k) + i] += 2.0 * dt * spec_.gamma_weights[i] * gi;
    }
    if (spec_.free_final_time) {
      rate += spec_.time_weight;
      if (grad) (*grad)[dt_index(k)] += rate;
    }
    c += dt * rate;
  }
  return c + path_.cost(x, grad);
}

template <class G>
double HolonomicOcp<G>::heading_residual(const VecX& x, Eigen::Matrix<double, 1, 4>* grad) const {
  if constexpr (std::is_same_v<G, SE2>) {
    (void)x;
    (void)grad;
    return 0.0;
  } else {
    const auto c = coords_at(x, spec_.steps);
    const Mat3 R = Chart::pose(c).R;
    const double psi = *spec_.final_heading;
    const Vec3 n(-std::sin(psi), std::cos(psi), 0.0);
    // R exp(d) e_x = R e_x - R e_x^ d.
    if (grad)
      *grad = -n.transpose() * R * Quat::hat(Vec3::UnitX()) *
              Chart::right_from_coords(c).template topRightCorner<3, 4>();
    return n.dot(R.col(0));
  }
}

template <class G>
void HolonomicOcp<G>::constraints(const VecX& x, VecX& g) {
  g.resize(num_cons_);
  for (int k = 0; k < spec_.steps; ++k) {
    const double dt = dt_at(x, k);
    const auto c_k = coords_at(x, k);
    const Tangent xi_k = xi_at(x, k);
    const int row = k * step_rows_;
    g.template segment<kNc>(row) =
        coords_at(x, k + 1) -
        Chart::compose(c_k, spec_.integrator.map, dt * xi_k, nullptr, nullptr);
    holonomic_residual<G>(*spec_.model, spec_.integrator, dt, k * dt, Chart::pose(c_k),
                          xi_at(x, k - 1), xi_k, inputs_at(x, k), false, res_);
    g.template segment<kNt>(row + kNc) = res_.r;
    if (spec_.free_final_time && k > 0) g[equal_row0_ + k - 1] = dt - dt_at(x, k - 1);
  }
  path_.constraints(x, g.data() + path_row0_);
  if (heading_row_ >= 0) g[heading_row_] = heading_residual(x, nullptr);
}

template <class G>
void HolonomicOcp<G>::jacobian(const VecX& x, BlockSink& sink) {
  using JacCC = typename Chart::JacCC;
  using JacCT = typename Chart::JacCT;
  JacCC J_c;
  JacCT J_eta;
  for (int k = 0; k < spec_.steps; ++k) {
    const double dt = dt_at(x, k);
    const auto c_k = coords_at(x, k);
    const Tangent xi_k = xi_at(x, k);
    const int row = k * step_rows_;
    Chart::compose(c_k, spec_.integrator.map, dt * xi_k, &J_c, &J_eta);
    sink.block(row, coords_index(k + 1), JacCC::Identity());
    sink.block(row, coords_index(k), -J_c);
    sink.block(row, xi_index(k), -dt * J_eta);
    if (spec_.free_final_time)
      sink.block(row, dt_index(k), typename Chart::Coords(-J_eta * xi_k));

    const Tangent xi_km1 = xi_at(x, k - 1);
    holonomic_residual<G>(*spec_.model, spec_.integrator, dt, k * dt, Chart::pose(c_k), xi_km1,
                          xi_k, inputs_at(x, k), true, res_);
    const int drow = row + kNc;
    sink.block(drow, coords_index(k), res_.J_r_g_k * Chart::right_from_coords(c_k));
    sink.block(drow, xi_index(k), res_.J_r_xi_k);
    if (k > 0) sink.block(drow, xi_index(k - 1), res_.J_r_xi_km1);
    if (nu_ > 0) sink.block(drow, u_index(k), res_.J_r_u_k.leftCols(nu_));
    if (ns_ > 0) sink.block(drow, gamma_index(k), res_.J_r_gamma_k.leftCols(ns_));
    if (spec_.free_final_time) {
      // Step 0's xi_-1 moves with dt_0 (the Legendre transform at t_0).
      const Tangent J_r_dt =
          k > 0 ? res_.J_r_dt
                : Tangent(res_.J_r_dt + res_.J_r_xi_km1 * initial_xi_km1_ddt<G>(
                                                            *spec_.model, spec_.integrator, dt,
                                                            xi_km1));
      sink.block(drow, dt_index(k), J_r_dt);
      if (k > 0) {
        sink.entry(equal_row0_ + k - 1, dt_index(k), 1.0);
        sink.entry(equal_row0_ + k - 1, dt_index(k - 1), -1.0);
      }
    }
  }
  path_.jacobian(x, path_row0_, sink);
  if (heading_row_ >= 0) {
    Eigen::Matrix<double, 1, 4> grad;
    heading_residual(x, &grad);
    sink.block(heading_row_, coords_index(spec_.steps) + 3, grad);
  }
}

template <class G>
std::string HolonomicOcp<G>::constraint_name(int i) const {
  if (i >= equal_row0_ && i < path_row0_)
    return "equal steps h_" + std::to_string(i - equal_row0_ + 1) + " = h_" +
           std::to_string(i - equal_row0_);
  if (i < path_row0_) {
    const int k = i / step_rows_, r = i % step_rows_;
    return r < kNc ? "reconstruction (vehicles eq. (9)) step " + std::to_string(k) + " row " +
                         std::to_string(r)
                   : "dynamics (vehicles eq. (10)) step " + std::to_string(k) + " row " +
                         std::to_string(r - kNc);
  }
  if (i == heading_row_) return "final heading";
  return path_.constraint_name(i - path_row0_);
}

template <class G>
std::string HolonomicOcp<G>::variable_name(int j) const {
  static const char* se2[] = {"theta", "x", "y"};
  static const char* se3[] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
  const int k = j / block_, off = j % block_;
  const std::string knot = std::to_string(k);
  if (off < kNc)
    return std::string(std::is_same_v<G, SE2> ? se2[off] : se3[off]) + " at knot " + knot;
  if (off < kNc + kNt) return "xi[" + std::to_string(off - kNc) + "] of step " + knot;
  if (off < kNc + kNt + nu_) return "u[" + std::to_string(off - kNc - kNt) + "] of step " + knot;
  if (off < kNc + kNt + nu_ + ns_)
    return "gamma[" + std::to_string(off - kNc - kNt - nu_) + "] of step " + knot;
  return "h of step " + knot;
}

template <class G>
void HolonomicOcp<G>::tables(const VecX& x, Table& states, Table& controls) const {
  const int N = spec_.steps;
  const HolonomicModel<G>& model = *spec_.model;
  if constexpr (std::is_same_v<G, SE2>)
    states.columns = {"t", "theta", "x", "y", "wz", "vx", "vy", "energy"};
  else
    states.columns = {"t",  "x",  "y",  "z",  "qw", "qx", "qy", "qz",
                      "wx", "wy", "wz", "vx", "vy", "vz", "energy"};
  states.rows.resize(N + 1, states.columns.size());
  double t = 0.0;
  for (int k = 0; k <= N; ++k) {
    // The velocity at a knot is that of the segment that reached it (as simulate writes).
    const Tangent xi = k == 0 ? spec_.xi0 : xi_at(x, k - 1);
    const auto c = coords_at(x, k);
    states.rows(k, 0) = t;
    if (k < N) t += dt_at(x, k);
    states.rows.row(k).template segment<kNc>(1) = c.transpose();
    states.rows.row(k).template segment<kNt>(1 + kNc) = xi.transpose();
    states.rows(k, 1 + kNc + kNt) = vehicle_energy<G>(model, Chart::pose(c), xi);
  }
  controls.columns = {"t"};
  for (int i = 0; i < nu_; ++i) controls.columns.push_back("u" + std::to_string(i));
  for (int i = 0; i < ns_; ++i) controls.columns.push_back("gamma" + std::to_string(i));
  controls.rows.resize(N, controls.columns.size());
  for (int k = 0; k < N; ++k) {
    controls.rows(k, 0) = states.rows(k, 0);
    controls.rows.row(k).segment(1, nu_) = x.segment(u_index(k), nu_).transpose();
    controls.rows.row(k).segment(1 + nu_, ns_) = x.segment(gamma_index(k), ns_).transpose();
  }
}

template <class G>
double HolonomicOcp<G>::resimulation_error(const VecX& x) const {
  // One step length, dt_0 (the others equal it at a solution, to the constraint tolerance).
  const double dt = dt_at(x, 0);
  G g = spec_.g0;
  Tangent xi_prev = xi_at(x, -1);
  double err = 0.0;
  Table names, unused;
  tables(x, names, unused);
  names.columns.erase(names.columns.begin());  // "t": the rest name coordinates, velocity
  VecX simulated(kNc + kNt), previous(kNc + kNt);
  simulated << coords_at(x, 0), xi_prev;
  for (int k = 0; k < spec_.steps; ++k) {
    Tangent xi = xi_prev;
    G g_next;
    const NewtonStatus st = holonomic_step<G>(*spec_.model, spec_.integrator, dt, k * dt, g,
                                              xi_prev, inputs_at(x, k), xi, g_next);
    if (!st.converged)
      throw SolverError("re-simulation: step " + std::to_string(k) + " did not converge (residual " +
                        std::to_string(st.residual_norm) + ")");
    const auto c_opt = coords_at(x, k + 1);
    typename Chart::Coords c_sim;
    if constexpr (std::is_same_v<G, SE2>)
      c_sim = Chart::coords(g_next, c_opt[0]);
    else
      c_sim = Chart::coords(g_next, c_opt.template tail<4>());
    previous = simulated;
    simulated << c_sim, xi;
    detail::check_resimulated(simulated, previous, names.columns, k, (k + 1) * dt, k * dt);
    VecX solution(kNc + kNt);
    solution << c_opt, xi_at(x, k);
    err = std::max(err, detail::resimulation_difference(simulated, solution, names.columns, k,
                                                        (k + 1) * dt));
    g = g_next;
    xi_prev = xi;
  }
  return err;
}

template <class G>
double HolonomicOcp<G>::min_clearance(const VecX& x) const {
  return path_.min_clearance(x);
}

template class HolonomicOcp<SE2>;
template class HolonomicOcp<SE3>;

}  // namespace marsden::control
