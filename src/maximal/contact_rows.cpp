#include "contact_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>
#include <Eigen/LU>

#include "marsden/lie/quaternion.hpp"
#include "marsden/maximal/integrator.hpp"

namespace marsden::maximal::contact_rows {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The largest alpha with x + alpha d in the closed cone {x0 >= |x1|}, x inside it;
// infinity when the ray never leaves.
double cone_step(double x0, const Vec2& x1, double d0, const Vec2& d1) {
  double alpha = d0 < 0.0 ? -x0 / d0 : kInfinity;
  // (x0 + a d0)^2 - |x1 + a d1|^2 = qa a^2 + 2 qb a + qc, positive at a = 0.
  const double qa = d0 * d0 - d1.squaredNorm();
  const double qb = x0 * d0 - x1.dot(d1);
  const double qc = x0 * x0 - x1.squaredNorm();
  if (qa == 0.0) {
    if (qb < 0.0) alpha = std::min(alpha, -qc / (2.0 * qb));
    return alpha;
  }
  const double disc = qb * qb - qa * qc;
  if (disc < 0.0) return alpha;
  const double root = std::sqrt(disc);
  for (const double a : {(-qb - root) / qa, (-qb + root) / qa}) {
    if (a > 0.0) alpha = std::min(alpha, a);
  }
  return alpha;
}

double scalar_step(double x, double d) { return d < 0.0 ? -x / d : kInfinity; }

// The cone pair of a contact: z = (mu gamma, b), y = (psi, eta).
Vec3 cone_z(const Row& row, const Unknowns& u) {
  return Vec3(row.mu * u.gamma, u.b[0], u.b[1]);
}
Vec3 cone_y(const Unknowns& u) { return Vec3(u.psi, u.eta[0], u.eta[1]); }

// The Jordan product of the second-order cone, x o y = (x . y, x0 y1 + y0 x1).
Vec3 jordan(const Vec3& x, const Vec3& y) {
  Vec3 out;
  out[0] = x.dot(y);
  out.tail<2>() = x[0] * y.tail<2>() + y[0] * x.tail<2>();
  return out;
}

// Whether x is strictly inside the cone, x0 > |x1|, as the stored numbers say.
bool inside(const Vec3& x) { return x[0] > x.tail<2>().norm(); }

// v with x o v = r, x inside the cone (the arrow matrix's inverse in closed form).
Vec3 arrow_solve(const Vec3& x, const Vec3& r) {
  const double t = x.tail<2>().norm();
  const double det = (x[0] - t) * (x[0] + t);
  Vec3 v;
  v[0] = (x[0] * r[0] - x.tail<2>().dot(r.tail<2>())) / det;
  v.tail<2>() = (r.tail<2>() - v[0] * x.tail<2>()) / x[0];
  return v;
}

// sqrt(x0^2 - |x1|^2), as (x0 - |x1|)(x0 + |x1|) to keep its digits near the boundary.
double j_norm(const Vec3& x) {
  const double t = x.tail<2>().norm();
  return std::sqrt((x[0] - t) * (x[0] + t));
}

// The Nesterov-Todd scaling of a cone pair (as in ECOS, Domahidi, Chu and Boyd 2013): the
// symmetric W with W^-1 z = W y = lambda, W = beta [a q^T; q, I + q q^T / (1 + a)] at the
// scaling point (a, q), and W^-1 = J (W / beta^2) J, J = diag(1, -1, -1).
void nesterov_todd(const Vec3& z, const Vec3& y, Row& row) {
  const double nz = j_norm(z), ny = j_norm(y);
  const Vec3 zb = z / nz, yb = y / ny;
  const double g = std::sqrt(0.5 * (1.0 + zb.dot(yb)));
  const double a = (zb[0] + yb[0]) / (2.0 * g);
  const Vec2 q = (zb.tail<2>() - yb.tail<2>()) / (2.0 * g);
  const double beta = std::sqrt(nz / ny);
  Mat3 Wb;
  Wb(0, 0) = a;
  Wb.block<1, 2>(0, 1) = q.transpose();
  Wb.block<2, 1>(1, 0) = q;
  Wb.block<2, 2>(1, 1) = Eigen::Matrix2d::Identity() + q * q.transpose() / (1.0 + a);
  row.W = beta * Wb;
  Wb.block<1, 2>(0, 1) *= -1.0;
  Wb.block<2, 1>(1, 0) *= -1.0;
  row.W_inv = Wb / beta;
  row.lambda = row.W * y;
}

}  // namespace

double distance(const ContactPoint& c, const Vec3& x, const Mat3& R) {
  return c.n.dot(x + R * c.c_b) - c.radius - c.offset;
}

void force_columns(const ContactPoint& c, const Mat3& R_k, Row& row) {
  // The force acts at the point's lowest point along -n: arm a from the centre of mass.
  const Vec3 a = R_k * c.c_b - c.radius * c.n;
  row.N << c.n, R_k.transpose() * a.cross(c.n);
  row.D.topRows<3>() = c.T;
  row.D.bottomRows<3>() = R_k.transpose() * Quat::hat(a) * c.T;
}

void kinematics(const ContactPoint& c, const Vec3& x_kp1, const Mat3& R_kp1, const Vec3& v,
                const Vec3& omega, double dt, Row& row) {
  // x_kp1 = x_k + dt v, and R_kp1 turns by dt M domega (rotation_update_map).
  const Mat3 M = rotation_update_map(omega, dt);
  const Mat3 Rc_hat = R_kp1 * Quat::hat(c.c_b);
  row.dt = dt;
  row.phi = distance(c, x_kp1, R_kp1);
  row.P << c.n, -(c.n.transpose() * Rc_hat * M).transpose();
  // The velocity of the body's material point at the contact, with the step's world angular
  // velocity R_kp1 omega: u = v - R_kp1 c^ omega + r n^ R_kp1 omega.
  const Mat3 n_hat = Quat::hat(c.n);
  const Vec3 u = v - Rc_hat * omega + c.radius * n_hat * (R_kp1 * omega);
  row.w = c.T.transpose() * u;
  const Mat3 du_domega = -Rc_hat + c.radius * n_hat * R_kp1 +
                         (-R_kp1 * Quat::hat(omega.cross(c.c_b)) -
                          c.radius * n_hat * R_kp1 * Quat::hat(omega)) *
                             (dt * M);
  row.Q.leftCols<3>() = c.T.transpose();
  row.Q.rightCols<3>() = c.T.transpose() * du_domega;
}

Residuals residuals(const Row& row, double kappa, bool corrector) {
  Residuals res;
  res.kappa = kappa;
  res.corrector = corrector;
  const Unknowns& x = row.x;
  res.e1 = x.sigma - row.phi / row.dt - row.compliance * x.gamma;
  res.c1 = x.gamma * x.sigma - kappa;
  if (corrector) res.c1 += row.d_aff.gamma * row.d_aff.sigma;
  if (!row.friction) return res;
  res.e2 = x.eta - row.w;
  res.c2 = jordan(cone_z(row, x), cone_y(x));
  res.c2[0] -= kappa;
  return res;
}

Mat6 eliminate(Row& row) {
  const Unknowns& x = row.x;
  // C1 linearised: sigma dgamma + gamma dsigma = -c1, with dsigma = P . ds - e1 +
  // eps dgamma.
  row.g1 = -(x.gamma / (x.sigma + row.compliance * x.gamma)) * row.P;
  Mat6 block = -row.scale * row.N * row.g1.transpose();
  if (!row.friction) return block;
  const double mu = row.mu;
  // (db, dpsi) from M (db, dpsi) = r - C_gamma dgamma - C_eta deta, with dgamma = g0 +
  // g1 . ds and deta = Q ds - e2.
  // W^-1 dz + W dy = lambda \ r, dz = (mu dgamma, db), dy = (dpsi, deta).
  nesterov_todd(cone_z(row, x), cone_y(x), row);
  Mat3 M;
  M << row.W_inv.rightCols<2>(), row.W.col(0);
  row.C_gamma = mu * row.W_inv.col(0);
  row.C_eta = row.W.rightCols<2>();
  row.A_inv = M.inverse();
  row.H = -row.C_gamma * row.g1.transpose() - row.C_eta * row.Q;
  row.B1 = (row.A_inv * row.H).topRows<2>();
  block.noalias() -= row.scale * row.D * row.B1;
  return block;
}

Vec6 eliminate_rhs(Row& row, const Residuals& res) {
  const Unknowns& x = row.x;
  row.g0 = (-res.c1 + x.gamma * res.e1) / (x.sigma + row.compliance * x.gamma);
  Vec6 correction = row.scale * row.g0 * row.N;
  if (!row.friction) return correction;
  // lambda o v = kappa e - lambda o lambda (- (W^-1 dz_aff) o (W dy_aff) in the corrector).
  Vec3 rhs = -jordan(row.lambda, row.lambda);
  rhs[0] += res.kappa;
  if (res.corrector)
    rhs -= jordan(row.W_inv * cone_z(row, row.d_aff), row.W * cone_y(row.d_aff));
  const Vec3 r = arrow_solve(row.lambda, rhs);
  row.h0 = r - row.C_gamma * row.g0 + row.C_eta * res.e2;
  row.b0 = (row.A_inv * row.h0).head<2>();
  correction.noalias() += row.scale * row.D * row.b0;
  return correction;
}

void recover(const Row& row, const Residuals& res, const Vec6& ds, Unknowns& out) {
  out.gamma = row.g0 + row.g1.dot(ds);
  out.sigma = row.P.dot(ds) - res.e1 + row.compliance * out.gamma;
  if (!row.friction) return;
  const Vec3 bpsi = row.A_inv * (row.h0 + row.H * ds);
  out.b = bpsi.head<2>();
  out.psi = bpsi[2];
  out.eta = row.Q * ds - res.e2;
}

double step_to_boundary(const Row& row, const Unknowns& d, double fraction) {
  const Unknowns& x = row.x;
  double alpha = std::min(scalar_step(x.gamma, d.gamma), scalar_step(x.sigma, d.sigma));
  if (row.friction) {
    alpha = std::min(alpha, cone_step(row.mu * x.gamma, x.b, row.mu * d.gamma, d.b));
    alpha = std::min(alpha, cone_step(x.psi, x.eta, d.psi, d.eta));
  }
  alpha = std::min(1.0, fraction * alpha);
  // Near the boundary the roots above carry round-off: shrink until the point is inside
  // as it will be stored.
  for (int halvings = 0; halvings < 60; ++halvings) {
    Unknowns t;
    t.gamma = x.gamma + alpha * d.gamma;
    t.sigma = x.sigma + alpha * d.sigma;
    t.psi = x.psi + alpha * d.psi;
    t.b = x.b + alpha * d.b;
    t.eta = x.eta + alpha * d.eta;
    if (t.gamma > 0.0 && t.sigma > 0.0 &&
        (!row.friction || (inside(cone_z(row, t)) && inside(cone_y(t))))) {
      return alpha;
    }
    alpha *= 0.5;
  }
  return 0.0;
}

double complementarity(const Row& row, const Unknowns& d, double alpha) {
  const Unknowns& x = row.x;
  double sum = (x.gamma + alpha * d.gamma) * (x.sigma + alpha * d.sigma);
  if (row.friction) {
    sum += row.mu * (x.gamma + alpha * d.gamma) * (x.psi + alpha * d.psi) +
           (x.b + alpha * d.b).dot(x.eta + alpha * d.eta);
  }
  return sum;
}

int pairs(const Row& row) { return row.friction ? 2 : 1; }

double least_product(const Row& row, const Unknowns& d, double alpha) {
  const Unknowns& x = row.x;
  const double normal = (x.gamma + alpha * d.gamma) * (x.sigma + alpha * d.sigma);
  if (!row.friction) return normal;
  Unknowns t;
  t.gamma = x.gamma + alpha * d.gamma;
  t.psi = x.psi + alpha * d.psi;
  t.b = x.b + alpha * d.b;
  t.eta = x.eta + alpha * d.eta;
  auto det = [](const Vec3& v) {
    const double r = v.tail<2>().norm();
    return (v[0] - r) * (v[0] + r);
  };
  return std::min(normal, std::sqrt(std::max(det(cone_z(row, t)) * det(cone_y(t)), 0.0)));
}

double feasibility(const Residuals& res) {
  return std::max(std::abs(res.e1), res.e2.cwiseAbs().maxCoeff());
}

double gap(const Row& row, const Residuals& res, double angle_tolerance) {
  const double worst = std::max(std::abs(res.c1), std::abs(res.c2[0]));
  if (!row.friction) return worst;
  const double allowed = angle_tolerance * row.mu * row.x.gamma * row.x.psi;
  return std::max(worst, res.c2.tail<2>().norm() - allowed);
}

}  // namespace marsden::maximal::contact_rows
