#include "marsden/control/rdp_ocp.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <utility>

#include "marsden/control/pose_chart.hpp"
#include "marsden/error.hpp"
#include "marsden/vehicle/rdp_models.hpp"
#include "resimulation.hpp"

namespace marsden::control {

namespace {

using vehicle::CarModel;
using vehicle::ConnectionMat;
using vehicle::kRdpMaxShape;
using vehicle::rdp_advance;
using vehicle::rdp_initial_state;
using vehicle::rdp_residual;
using vehicle::rdp_residual_given_left;
using vehicle::rdp_segment_velocity;
using vehicle::RdpModel;
using vehicle::RdpOptions;
using vehicle::RdpResidual;
using vehicle::RdpState;
using vehicle::RdpVec;
using vehicle::ShapeVec;
using vehicle::SymBasisMat;

using Chart = PoseChart<SE2>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kCoordNames[3] = {"theta", "x", "y"};

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw InputError("RdpOcpSpec." + field + ": " + what);
}

template <class V>
void check_vector(const V& v, int size, const std::string& field) {
  if (v.size() != size)
    bad(field,
        "has " + std::to_string(v.size()) + " entries, the model needs " + std::to_string(size));
  if (!v.allFinite()) bad(field, "must be finite");
}

void check_interval(const Interval& b, const std::string& field) {
  if (std::isnan(b.lower) || std::isnan(b.upper) || !(b.lower <= b.upper) || b.lower == kInf ||
      b.upper == -kInf) {
    std::ostringstream msg;
    msg << "needs lower <= upper (got [" << b.lower << ", " << b.upper << "])";
    bad(field, msg.str());
  }
}

bool inside(const Interval& b, double v) { return b.lower <= v && v <= b.upper; }

// Checks every field and fills the optional per-dof vectors with their defaults.
RdpOcpSpec validated(RdpOcpSpec s) {
  if (!s.model) bad("model", "is missing");
  const int nr = s.model->num_shape(), nb = s.model->num_symmetry();
  if (!(s.dt > 0.0) || !std::isfinite(s.dt)) bad("dt", "must be positive and finite");
  if (s.steps < 1) bad("steps", "must be at least 1 (got " + std::to_string(s.steps) + ")");
  if (!(s.integrator.alpha >= 0.0 && s.integrator.alpha <= 1.0))
    bad("integrator.alpha", "must lie in [0, 1]");
  if (!s.g0.R.allFinite() || !s.g0.x.allFinite()) bad("g0", "must be finite");
  check_vector(s.r0, nr, "r0");
  check_vector(s.u0, nr, "u0");
  check_vector(s.w0, nb, "w0");

  auto per_dof = [nr](auto& v, const std::string& field, auto fill) {
    if (v.empty()) v.assign(static_cast<std::size_t>(nr), fill);
    if (static_cast<int>(v.size()) != nr)
      bad(field, "has " + std::to_string(v.size()) + " entries, the model has " +
                     std::to_string(nr) + " shape coordinates");
  };
  if (s.shape_names.empty())
    for (int i = 0; i < nr; ++i) s.shape_names.push_back("r" + std::to_string(i));
  per_dof(s.shape_names, "shape_names", std::string());
  per_dof(s.control_bounds, "control_bounds", Interval{});
  per_dof(s.shape_bounds, "shape_bounds", Interval{});
  per_dof(s.control_weights, "control_weights", 0.0);
  per_dof(s.shape_weights, "shape_weights", 0.0);
  per_dof(s.final_shape_fixed, "final_shape_fixed", true);
  for (int i = 0; i < nr; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    check_interval(s.control_bounds[i], "control_bounds" + at);
    check_interval(s.shape_bounds[i], "shape_bounds" + at);
    if (!(s.control_weights[i] >= 0.0) || !std::isfinite(s.control_weights[i]))
      bad("control_weights" + at, "must be finite and non-negative");
    if (!(s.shape_weights[i] >= 0.0) || !std::isfinite(s.shape_weights[i]))
      bad("shape_weights" + at, "must be finite and non-negative");
    if (!inside(s.shape_bounds[i], s.r0[i])) bad("r0" + at, "lies outside shape_bounds" + at);
  }
  check_interval(s.x_bounds, "x_bounds");
  check_interval(s.y_bounds, "y_bounds");
  if (!inside(s.x_bounds, s.g0.x.x()) || !inside(s.y_bounds, s.g0.x.y()))
    bad("g0", "lies outside x_bounds or y_bounds");
  if (s.final_coords) {
    if (!s.final_coords->allFinite()) bad("final_coords", "must be finite");
    if ((s.final_coords_fixed[1] && !inside(s.x_bounds, (*s.final_coords)[1])) ||
        (s.final_coords_fixed[2] && !inside(s.y_bounds, (*s.final_coords)[2])))
      bad("final_coords", "lies outside x_bounds or y_bounds");
  }
  if (s.final_shape) {
    check_vector(*s.final_shape, nr, "final_shape");
    for (int i = 0; i < nr; ++i)
      if (s.final_shape_fixed[i] && !inside(s.shape_bounds[i], (*s.final_shape)[i]))
        bad("final_shape[" + std::to_string(i) + "]",
            "lies outside shape_bounds[" + std::to_string(i) + "]");
  }
  if (s.final_shape_velocity) {
    check_vector(*s.final_shape_velocity, nr, "final_shape_velocity");
    if (s.final_at_rest) bad("final_shape_velocity", "conflicts with final_at_rest");
  }
  for (const Vec2& p : s.waypoints)
    if (!p.allFinite()) bad("waypoints", "must be finite");
  if (!(s.guess_speed >= 0.0) || !std::isfinite(s.guess_speed))
    bad("guess_speed", "must be finite and non-negative");
  if (s.free_final_time) {
    if (!(s.dt_min > 0.0) || !(s.dt_min <= s.dt) || !(s.dt <= s.dt_max)) {
      std::ostringstream msg;
      msg << "needs 0 < dt_min <= dt <= dt_max (got dt_min " << s.dt_min << ", dt " << s.dt
          << ", dt_max " << s.dt_max << ")";
      bad("dt_min", msg.str());
    }
    if (!(s.time_weight >= 0.0) || !std::isfinite(s.time_weight))
      bad("time_weight", "must be finite and non-negative");
    if (s.path.hazard_weight > 0.0)
      bad("path.hazard_weight",
          "must be 0 with a free final time (use the obstacles' margins)");
  }
  return s;
}

double wrap_angle(double a) { return std::remainder(a, 2.0 * std::numbers::pi); }

// A point and the heading at arc length s along the polyline P.
std::pair<Vec2, double> along(const std::vector<Vec2>& P, double s) {
  for (std::size_t i = 0; i + 1 < P.size(); ++i) {
    const Vec2 d = P[i + 1] - P[i];
    const double len = d.norm();
    if (len == 0.0) continue;
    if (s <= len || i + 2 == P.size())
      return {P[i] + std::min(s, len) / len * d, std::atan2(d.y(), d.x())};
    s -= len;
  }
  return {P.back(), 0.0};
}

}  // namespace

Vec3 rdp_segment_velocity_jacobians(const RdpModel<SE2>& model, const RdpOptions& opt, double dt,
                                    const ShapeVec& r_k, const RdpVec& x_k, SegmentJacobian& J_xi_r,
                                    SegmentJacobian& J_xi_x) {
  const int nr = model.num_shape(), nb = model.num_symmetry();
  const double s = opt.alpha * dt;  // d r_k+alpha / d u_k
  const ShapeVec u = x_k.head(nr);
  const RdpVec w = x_k.tail(nb);
  const ShapeVec rho = r_k + s * u;
  ConnectionMat<SE2> A;
  SymBasisMat<SE2> E;
  std::array<ConnectionMat<SE2>, kRdpMaxShape> dA;
  std::array<SymBasisMat<SE2>, kRdpMaxShape> dE;
  model.connection(rho, A, &dA);
  model.symmetry_basis(rho, E, &dE);
  Vec3 xi = E * w;
  xi.noalias() -= A * u;
  J_xi_r.resize(3, nr);
  J_xi_x.resize(3, nr + nb);
  for (int j = 0; j < nr; ++j) {
    Vec3 d = dE[j] * w;
    d.noalias() -= dA[j] * u;
    J_xi_r.col(j) = d;
    J_xi_x.col(j) = s * d - A.col(j);
  }
  J_xi_x.rightCols(nb) = E;
  return xi;
}

RdpOcp::RdpOcp(RdpOcpSpec spec)
    : spec_(validated(std::move(spec))),
      model_(spec_.model.get()),
      nr_(model_->num_shape()),
      nb_(model_->num_symmetry()),
      n_(nr_ + nb_),
      block_(3 + nr_ + n_ + nr_ + (spec_.free_final_time ? 1 : 0)),
      rows_(3 + nr_ + n_),
      path_row0_(spec_.steps * rows_ + (spec_.free_final_time ? spec_.steps - 1 : 0)),
      left0_(rdp_initial_state(*model_, spec_.r0, spec_.g0, spec_.u0, spec_.w0).left),
      path_(spec_.path, Chart::kPositionDim, spec_.steps, block_, Chart::kPositionOffset,
            spec_.dt) {}

int RdpOcp::num_variables() const { return spec_.steps * block_ + 3 + nr_; }

int RdpOcp::num_constraints() const { return path_row0_ + path_.num_constraints(); }

double RdpOcp::dt_at(const VecX& x, int k) const {
  return spec_.free_final_time ? x[dt_index(k)] : spec_.dt;
}

ShapeVec RdpOcp::shape_at(const VecX& x, int k) const { return x.segment(shape_index(k), nr_); }

RdpVec RdpOcp::unknowns_at(const VecX& x, int k) const { return x.segment(unknowns_index(k), n_); }

void RdpOcp::controls_at(const VecX& x, int k, ShapeVec& f, ShapeVec& u_prescribed) const {
  f.setZero(nr_);
  u_prescribed.setZero(nr_);
  for (int i = 0; i < nr_; ++i)
    (model_->prescribed(i) ? u_prescribed : f)[i] = x[controls_index(k) + i];
}

void RdpOcp::check_size(const VecX& x, const char* what) const {
  if (x.size() != num_variables())
    throw InputError(std::string("RdpOcp::") + what + ": the vector has " +
                     std::to_string(x.size()) + " entries, the problem " +
                     std::to_string(num_variables()));
}

void RdpOcp::bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const {
  const int N = spec_.steps;
  x_l.setConstant(num_variables(), -kInf);
  x_u.setConstant(num_variables(), kInf);
  auto limit = [&](int j, const Interval& b) {
    x_l[j] = b.lower;
    x_u[j] = b.upper;
  };
  auto fix = [&](int j, double v) { x_l[j] = x_u[j] = v; };
  for (int k = 0; k < N; ++k) {
    for (int i = 0; i < nr_; ++i) limit(controls_index(k) + i, spec_.control_bounds[i]);
    if (spec_.free_final_time) limit(dt_index(k), Interval{spec_.dt_min, spec_.dt_max});
  }
  for (int k = 1; k <= N; ++k) {
    for (int i = 0; i < nr_; ++i) limit(shape_index(k) + i, spec_.shape_bounds[i]);
    limit(coords_index(k) + 1, spec_.x_bounds);
    limit(coords_index(k) + 2, spec_.y_bounds);
  }
  // The initial knot is data; x_0 stays free (it solves step 0's residual).
  const Vec3 c0 = Chart::coords(spec_.g0);
  for (int i = 0; i < 3; ++i) fix(coords_index(0) + i, c0[i]);
  for (int i = 0; i < nr_; ++i) fix(shape_index(0) + i, spec_.r0[i]);
  if (spec_.final_coords)
    for (int i = 0; i < 3; ++i)
      if (spec_.final_coords_fixed[i]) fix(coords_index(N) + i, (*spec_.final_coords)[i]);
  if (spec_.final_shape)
    for (int i = 0; i < nr_; ++i)
      if (spec_.final_shape_fixed[i]) fix(shape_index(N) + i, (*spec_.final_shape)[i]);
  if (spec_.final_shape_velocity)
    for (int i = 0; i < nr_; ++i) fix(unknowns_index(N - 1) + i, (*spec_.final_shape_velocity)[i]);
  if (spec_.final_at_rest)
    for (int i = 0; i < n_; ++i) fix(unknowns_index(N - 1) + i, 0.0);

  g_l.setZero(num_constraints());
  g_u.setZero(num_constraints());
  path_.bounds(g_l.data() + path_row0_, g_u.data() + path_row0_);
}

void RdpOcp::initial_guess(VecX& x) const {
  const int N = spec_.steps;
  const double dt = spec_.dt;
  x.setZero(num_variables());

  // Knot positions and headings along the polyline.
  const Vec3 c0 = Chart::coords(spec_.g0);
  std::vector<Vec2> P{spec_.g0.x};
  P.insert(P.end(), spec_.waypoints.begin(), spec_.waypoints.end());
  if (spec_.final_coords && spec_.final_coords_fixed[1] && spec_.final_coords_fixed[2])
    P.push_back(spec_.final_coords->tail<2>());
  double length = 0.0;
  for (std::size_t i = 0; i + 1 < P.size(); ++i) length += (P[i + 1] - P[i]).norm();
  const double T = N * dt;
  auto arc = [&](double t) {
    if (spec_.guess_speed > 0.0) return spec_.guess_speed * t;
    const double phase = 2.0 * std::numbers::pi * t / T;
    return length * (t / T - std::sin(phase) / (2.0 * std::numbers::pi));
  };
  std::vector<Vec3> c(static_cast<std::size_t>(N) + 1, c0);
  for (int k = 1; k <= N; ++k) {
    const double s = arc(k * dt);
    // Without a polyline: straight ahead along the initial heading.
    const auto [p, heading] =
        length > 0.0
            ? along(P, std::min(s, length))
            : std::pair{Vec2(spec_.g0.x + s * Vec2(std::cos(c0[0]), std::sin(c0[0]))), c0[0]};
    c[k] << c[k - 1][0] + wrap_angle(heading - c[k - 1][0]), p;
  }
  if (spec_.final_coords)
    for (int i = 0; i < 3; ++i)
      if (spec_.final_coords_fixed[i]) c[N][i] = (*spec_.final_coords)[i];

  // Shape velocities fitted to the body velocity of each segment (least squares, least norm),
  // the shape integrated with them, forces zero.
  ShapeVec r = spec_.r0;
  ConnectionMat<SE2> A;
  SymBasisMat<SE2> E;
  Eigen::Matrix<double, 3, Eigen::Dynamic> M(3, n_);
  for (int k = 0; k < N; ++k) {
    const Vec2 dp = c[k + 1].tail<2>() - c[k].tail<2>();
    Vec3 xi;
    xi[0] = (c[k + 1][0] - c[k][0]) / dt;
    xi.tail<2>() = Chart::pose(c[k]).R.transpose() * dp / dt;
    model_->connection(r, A, nullptr);
    model_->symmetry_basis(r, E, nullptr);
    M.leftCols(nr_) = -A;
    M.rightCols(nb_) = E;
    const VecX xk = M.completeOrthogonalDecomposition().solve(xi);
    x.segment<3>(coords_index(k)) = c[k];
    x.segment(shape_index(k), nr_) = r;
    x.segment(unknowns_index(k), n_) = xk;
    if (spec_.free_final_time) x[dt_index(k)] = dt;
    for (int i = 0; i < nr_; ++i)
      if (model_->prescribed(i)) x[controls_index(k) + i] = xk[i];
    r += dt * xk.head(nr_);
  }
  x.segment<3>(coords_index(N)) = c[N];
  // Forces that zero each free shape row of the residual given the previous ones: the row is
  // affine in f_k+alpha with slope -(1 - alpha) dt (eq. (16)).
  const double slope = (1.0 - spec_.integrator.alpha) * dt;
  RdpResidual<SE2> res;
  ShapeVec f_k, u_prescribed_k, f_km1, u_prescribed_km1;
  for (int k = 0; k < N && slope > 0.0; ++k) {
    controls_at(x, k, f_k, u_prescribed_k);
    if (k == 0) {
      rdp_residual_given_left(*model_, spec_.integrator, dt, shape_at(x, k), left0_,
                              unknowns_at(x, k), f_k, u_prescribed_k, false, res);
    } else {
      controls_at(x, k - 1, f_km1, u_prescribed_km1);
      rdp_residual(*model_, spec_.integrator, dt, shape_at(x, k), unknowns_at(x, k - 1),
                   unknowns_at(x, k), f_km1, f_k, u_prescribed_k, false, res);
    }
    for (int i = 0; i < nr_; ++i)
      if (!model_->prescribed(i)) x[controls_index(k) + i] = res.r[i] / slope;
  }
  if (spec_.final_shape)
    for (int i = 0; i < nr_; ++i)
      if (spec_.final_shape_fixed[i]) r[i] = (*spec_.final_shape)[i];
  x.segment(shape_index(N), nr_) = r;
}

double RdpOcp::cost(const VecX& x, VecX* grad) {
  const int N = spec_.steps;
  if (grad) grad->setZero(num_variables());
  double c = 0.0;
  // Step k weighs its controls and the shape at knot k+1 by dt_k; rate is d cost / d dt_k.
  for (int k = 0; k < N; ++k) {
    const double dt = dt_at(x, k);
    double rate = spec_.free_final_time ? spec_.time_weight : 0.0;
    auto add = [&](int j, double w) {
      rate += w * x[j] * x[j];
      if (grad) (*grad)[j] += 2.0 * dt * w * x[j];
    };
    for (int i = 0; i < nr_; ++i) {
      add(controls_index(k) + i, spec_.control_weights[i]);
      add(shape_index(k + 1) + i, spec_.shape_weights[i]);
    }
    c += dt * rate;
    if (grad && spec_.free_final_time) (*grad)[dt_index(k)] += rate;
  }
  return c + path_.cost(x, grad);
}

void RdpOcp::constraints(const VecX& x, VecX& g) {
  const int N = spec_.steps;
  const RdpOptions& opt = spec_.integrator;
  g.resize(num_constraints());
  RdpResidual<SE2> res;
  ShapeVec f_k, u_prescribed_k, f_km1, u_prescribed_km1;
  for (int k = 0; k < N; ++k) {
    const int row = k * rows_;
    const double dt = dt_at(x, k);
    const ShapeVec r_k = shape_at(x, k);
    const RdpVec x_k = unknowns_at(x, k);
    controls_at(x, k, f_k, u_prescribed_k);
    // eq. (16), line 1: c_k+1 = coords of g_k tau(dt xi_k)
    const Vec3 xi_k = rdp_segment_velocity(*model_, opt, dt, r_k, x_k);
    g.segment<3>(row) =
        x.segment<3>(coords_index(k + 1)) -
        Chart::compose(x.segment<3>(coords_index(k)), opt.map, dt * xi_k, nullptr, nullptr);
    // eq. (16), line 2
    g.segment(row + 3, nr_) = shape_at(x, k + 1) - r_k - dt * x_k.head(nr_);
    // eqs. (16)-(17); step 0 starts from the continuous momenta of the initial state
    if (k == 0) {
      rdp_residual_given_left(*model_, opt, dt, r_k, left0_, x_k, f_k, u_prescribed_k, false, res);
    } else {
      controls_at(x, k - 1, f_km1, u_prescribed_km1);
      rdp_residual(*model_, opt, dt, r_k, unknowns_at(x, k - 1), x_k, f_km1, f_k, u_prescribed_k,
                   false, res);
    }
    g.segment(row + 3 + nr_, n_) = res.r;
    if (spec_.free_final_time && k > 0) g[N * rows_ + k - 1] = dt - dt_at(x, k - 1);
  }
  path_.constraints(x, g.data() + path_row0_);
}

void RdpOcp::jacobian(const VecX& x, BlockSink& sink) {
  const int N = spec_.steps;
  const RdpOptions& opt = spec_.integrator;
  RdpResidual<SE2> res;
  ShapeVec f_k, u_prescribed_k, f_km1, u_prescribed_km1;
  SegmentJacobian J_xi_r, J_xi_x;
  Chart::JacCC J_c;
  Chart::JacCT J_eta;
  for (int k = 0; k < N; ++k) {
    const int row = k * rows_;
    const double dt = dt_at(x, k);
    const ShapeVec r_k = shape_at(x, k);
    const RdpVec x_k = unknowns_at(x, k);
    controls_at(x, k, f_k, u_prescribed_k);

    // Reconstruction: c_k+1 - compose(c_k, dt xi(r_k, x_k)).
    const Vec3 xi_k = rdp_segment_velocity_jacobians(*model_, opt, dt, r_k, x_k, J_xi_r, J_xi_x);
    Chart::compose(x.segment<3>(coords_index(k)), opt.map, dt * xi_k, &J_c, &J_eta);
    sink.block(row, coords_index(k), -J_c);
    sink.block(row, shape_index(k), -dt * J_eta * J_xi_r);
    sink.block(row, unknowns_index(k), -dt * J_eta * J_xi_x);
    sink.block(row, coords_index(k + 1), Mat3::Identity());
    if (spec_.free_final_time) {
      // d (dt xi_k) / d(dt) = xi_k + dt alpha (d xi / d r) u_k: dt also moves r_k+alpha.
      const Vec3 J_dtxi_dt = xi_k + dt * opt.alpha * (J_xi_r * x_k.head(nr_));
      sink.block(row, dt_index(k), Vec3(-J_eta * J_dtxi_dt));
    }

    // Shape update: r_k+1 - r_k - dt u_k, diagonal blocks.
    for (int i = 0; i < nr_; ++i) {
      sink.entry(row + 3 + i, shape_index(k) + i, -1.0);
      sink.entry(row + 3 + i, unknowns_index(k) + i, -dt);
      sink.entry(row + 3 + i, shape_index(k + 1) + i, 1.0);
      if (spec_.free_final_time) sink.entry(row + 3 + i, dt_index(k), -x_k[i]);
    }

    // Dynamics: every block of the residual. Forces on prescribed dofs do not enter it.
    const int rd = row + 3 + nr_;
    if (k == 0) {
      rdp_residual_given_left(*model_, opt, dt, r_k, left0_, x_k, f_k, u_prescribed_k, true, res);
    } else {
      controls_at(x, k - 1, f_km1, u_prescribed_km1);
      rdp_residual(*model_, opt, dt, r_k, unknowns_at(x, k - 1), x_k, f_km1, f_k, u_prescribed_k,
                   true, res);
      sink.block(rd, unknowns_index(k - 1), res.J_r_x_km1);
      for (int i = 0; i < nr_; ++i)
        if (!model_->prescribed(i))
          sink.block(rd, controls_index(k - 1) + i, res.J_r_f_km1a.col(i));
    }
    sink.block(rd, shape_index(k), res.J_r_r_k);
    sink.block(rd, unknowns_index(k), res.J_r_x_k);
    for (int i = 0; i < nr_; ++i) {
      if (model_->prescribed(i))
        sink.block(rd, controls_index(k) + i, res.J_r_u_prescribed.col(i));
      else
        sink.block(rd, controls_index(k) + i, res.J_r_f_ka.col(i));
    }
    if (spec_.free_final_time) {
      sink.block(rd, dt_index(k), res.J_r_dt);
      if (k > 0) {
        sink.entry(N * rows_ + k - 1, dt_index(k), 1.0);
        sink.entry(N * rows_ + k - 1, dt_index(k - 1), -1.0);
      }
    }
  }
  path_.jacobian(x, path_row0_, sink);
}

std::string RdpOcp::control_name(int i) const {
  const std::string& name = spec_.shape_names[i];
  return model_->prescribed(i) ? "u_" + name + "_in" : "f_" + name;
}

std::string RdpOcp::unknown_name(int i) const {
  if (i < nr_) return "u_" + spec_.shape_names[i];
  std::string name = "w";  // appended, not "w" + ...: GCC 12 warns falsely (-Wrestrict) on that
  return name += std::to_string(i - nr_);
}

std::string RdpOcp::constraint_name(int i) const {
  const int N = spec_.steps;
  if (i >= path_row0_) return path_.constraint_name(i - path_row0_);
  if (i >= N * rows_)
    return "equal steps h_" + std::to_string(i - N * rows_ + 1) + " = h_" +
           std::to_string(i - N * rows_);
  const int k = i / rows_, local = i % rows_;
  const std::string step = " step " + std::to_string(k);
  if (local < 3) return "reconstruction" + step + " (" + kCoordNames[local] + ")";
  if (local < 3 + nr_) return "shape update" + step + " (" + spec_.shape_names[local - 3] + ")";
  return "dynamics" + step + " row " + std::to_string(local - 3 - nr_);
}

std::string RdpOcp::variable_name(int j) const {
  const int k = j / block_, local = j % block_;
  const std::string knot = " at knot " + std::to_string(k);
  if (local < 3) return std::string(kCoordNames[local]) + knot;
  if (local < 3 + nr_) return spec_.shape_names[local - 3] + knot;
  const std::string step = " step " + std::to_string(k);
  if (local < 3 + nr_ + n_) return unknown_name(local - 3 - nr_) + step;
  if (local < 3 + nr_ + n_ + nr_) return control_name(local - 3 - nr_ - n_) + step;
  return "h" + step;
}

void RdpOcp::tables(const VecX& x, Table& states, Table& controls) const {
  check_size(x, "tables");
  const int N = spec_.steps;
  states.columns = {"t", "theta", "x", "y"};
  states.columns.insert(states.columns.end(), spec_.shape_names.begin(), spec_.shape_names.end());
  states.rows.resize(N + 1, 4 + nr_);
  double t = 0.0;
  for (int k = 0; k <= N; ++k) {
    states.rows(k, 0) = t;
    if (k < N) t += dt_at(x, k);
    states.rows.row(k).segment(1, 3) = x.segment<3>(coords_index(k)).transpose();
    states.rows.row(k).tail(nr_) = shape_at(x, k).transpose();
  }
  controls.columns = {"t"};
  for (int i = 0; i < nr_; ++i) controls.columns.push_back(control_name(i));
  for (int i = 0; i < n_; ++i) controls.columns.push_back(unknown_name(i));
  controls.rows.resize(N, 1 + nr_ + n_);
  for (int k = 0; k < N; ++k) {
    controls.rows(k, 0) = states.rows(k, 0);
    controls.rows.row(k).segment(1, nr_) = x.segment(controls_index(k), nr_).transpose();
    controls.rows.row(k).tail(n_) = unknowns_at(x, k).transpose();
  }
}

double RdpOcp::resimulation_error(const VecX& x) const {
  check_size(x, "resimulation_error");
  const int N = spec_.steps;
  RdpState<SE2> state = rdp_initial_state(*model_, spec_.r0, spec_.g0, spec_.u0, spec_.w0);
  ShapeVec f, u_prescribed;
  std::vector<std::string> names(kCoordNames, kCoordNames + 3);
  names.insert(names.end(), spec_.shape_names.begin(), spec_.shape_names.end());
  VecX simulated(3 + state.r.size()), previous(3 + state.r.size());
  simulated << Chart::coords(state.g, 0.0), state.r;
  double err = 0.0, t = 0.0;
  for (int k = 0; k < N; ++k) {
    controls_at(x, k, f, u_prescribed);
    const double dt = dt_at(x, k);
    rdp_advance(*model_, spec_.integrator, dt, f, u_prescribed, state, k);
    const Vec3 c_kp1 = x.segment<3>(coords_index(k + 1));
    const Vec3 c_sim = Chart::coords(state.g, c_kp1[0]);
    previous = simulated;
    simulated << c_sim, state.r;
    detail::check_resimulated(simulated, previous, names, k, t + dt, t);
    VecX solution(simulated.size());
    solution << c_kp1, shape_at(x, k + 1);
    err = std::max(err, detail::resimulation_difference(simulated, solution, names, k, t + dt));
    t += dt;
  }
  return err;
}

double RdpOcp::min_clearance(const VecX& x) const {
  check_size(x, "min_clearance");
  return path_.min_clearance(x);
}

RdpOcpSpec car_tunnel_problem(int steps) {
  if (steps < 1) bad("steps", "must be at least 1 (got " + std::to_string(steps) + ")");
  const double horizon = 10.0;  // s
  const double max_steer = std::tan(35.0 * std::numbers::pi / 180.0);
  RdpOcpSpec s;
  s.model = std::make_shared<CarModel>(CarParams{});
  s.steps = steps;
  s.dt = horizon / steps;
  s.g0 = SE2::identity();
  s.r0 = ShapeVec::Zero(2);
  s.u0 = ShapeVec::Zero(2);
  s.w0 = RdpVec::Zero(0);
  s.shape_names = {"psi", "sigma"};
  s.final_coords = Vec3(0.0, 15.0, 0.0);
  s.final_shape = ShapeVec::Zero(2);
  s.final_shape_fixed = {false, true};  // wheels straight; the wheel angle psi is free
  s.final_at_rest = true;
  s.control_bounds = {{-2.0, 2.0}, {-1.0, 1.0}};  // f_psi [N m], u_sigma [1/s]
  s.shape_bounds = {Interval{}, {-max_steer, max_steer}};
  s.x_bounds = {-1.0, 16.0};
  s.y_bounds = {-2.0, 2.0};  // the tunnel walls
  // Least steering: its rate and its angle; a little torque keeps the speed profile unique.
  s.control_weights = {0.1, 1.0};
  s.shape_weights = {0.0, 1.0};
  auto pillar = [](const char* name, double x, double y) {
    Obstacle o;
    o.kind = Obstacle::Kind::Cylinder;
    o.name = name;
    o.center = Vec3(x, y, 0.0);
    o.radius = 0.5;
    o.margin = 0.3;  // half the car's width
    return o;
  };
  s.path.obstacles = {pillar("pillar 1", 4.0, 0.3), pillar("pillar 2", 7.5, -0.3),
                      pillar("pillar 3", 11.0, 0.3)};
  // Weave below, above, below the pillars.
  s.waypoints = {Vec2(4.0, -0.9), Vec2(7.5, 0.9), Vec2(11.0, -0.9)};
  return s;
}

}  // namespace marsden::control
