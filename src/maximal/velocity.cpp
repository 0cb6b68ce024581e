#include "marsden/maximal/velocity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>
#include <unsupported/Eigen/AutoDiff>

namespace marsden::maximal {

namespace {

// Below this |u| (u: the ground normal's part across a wheel's axle) the wheel lies flat.
constexpr double kFlatWheel = 1e-9;

template <typename T>
using V3 = Eigen::Matrix<T, 3, 1>;
template <typename T>
using M3 = Eigen::Matrix<T, 3, 3>;

// A(R) for any scalar (double, or a dual number for the derivatives): the directions t and
// the offset o of model.hpp's kinds.
template <typename T>
bool rows_of(const VelocityConstraint& c, const M3<T>& R, Eigen::Matrix<T, 2, 6>& A) {
  using std::sqrt;
  const V3<T> nu = c.ground_normal.cast<T>();
  const V3<T> centre = R * c.point.cast<T>();
  V3<T> t[2], o;
  switch (c.type) {
    case VelocityConstraintType::Skate:
      t[0] = R * c.axis.cast<T>();
      o = centre;
      break;
    case VelocityConstraintType::RollingWheel: {
      // The lowest point of the rim is radius along -d, d the ground normal's part in the
      // wheel's plane; t0 is the rolling direction, t1 the other direction of the ground.
      const V3<T> a = R * c.axis.cast<T>();
      const V3<T> u = nu - nu.dot(a) * a;
      const T norm = sqrt(u.squaredNorm());
      if (!(norm > T(kFlatWheel))) return false;
      const V3<T> d = u / norm;
      o = centre - T(c.radius) * d;
      t[0] = a.cross(d);
      t[0] /= sqrt(t[0].squaredNorm());
      t[1] = nu.cross(t[0]);
      break;
    }
    case VelocityConstraintType::RollingBall: {
      o = centre - T(c.radius) * nu;
      const Vec3 any = std::abs(c.ground_normal.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
      const Vec3 t0 = c.ground_normal.cross(any).normalized();
      t[0] = t0.cast<T>();
      t[1] = c.ground_normal.cross(t0).cast<T>();
      break;
    }
  }
  for (int i = 0; i < velocity_rows(c.type); ++i) {
    A.row(i).template head<3>() = t[i].transpose();
    A.row(i).template tail<3>() = (R.transpose() * o.cross(t[i])).transpose();
  }
  return true;
}

}  // namespace

bool velocity_constraint_rows(const VelocityConstraint& c, const Mat3& R, VelocityRows& A) {
  Eigen::Matrix<double, 2, 6> full;
  if (!rows_of<double>(c, R, full)) return false;
  A = full.topRows(velocity_rows(c.type));
  return true;
}

bool velocity_constraint_derivatives(const VelocityConstraint& c, const Mat3& R, const Vec6& w,
                                     const Eigen::Vector2d& mu,
                                     Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3>& dAw_dphi,
                                     Eigen::Matrix<double, 6, 3>& dAtmu_dphi) {
  // First derivatives at phi = 0 need only exp(phi) = I + hat(phi) + O(phi^2).
  using Dual = Eigen::AutoDiffScalar<Vec3>;
  M3<Dual> hat = M3<Dual>::Zero();
  const Dual p0(0.0, 3, 0), p1(0.0, 3, 1), p2(0.0, 3, 2);
  hat(0, 1) = -p2;
  hat(0, 2) = p1;
  hat(1, 0) = p2;
  hat(1, 2) = -p0;
  hat(2, 0) = -p1;
  hat(2, 1) = p0;
  const M3<Dual> R_phi = R.cast<Dual>() * (M3<Dual>::Identity() + hat);
  Eigen::Matrix<Dual, 2, 6> A;
  if (!rows_of<Dual>(c, R_phi, A)) return false;
  const int m = velocity_rows(c.type);
  dAw_dphi.resize(m, 3);
  for (int i = 0; i < m; ++i) dAw_dphi.row(i) = (A.row(i) * w.cast<Dual>())(0).derivatives();
  for (int k = 0; k < 6; ++k) {
    Dual f(0.0);
    for (int i = 0; i < m; ++i) f += A(i, k) * mu[i];
    dAtmu_dphi.row(k) = f.derivatives().transpose();
  }
  return true;
}

double max_velocity_violation(const Model& model, const std::vector<BodyState>& before,
                              const std::vector<BodyState>& after) {
  double worst = 0.0;
  for (const VelocityConstraint& c : model.velocity_constraints()) {
    VelocityRows A_k, A_kp1;
    if (!velocity_constraint_rows(c, before[std::size_t(c.body)].q.matrix(), A_k) ||
        !velocity_constraint_rows(c, after[std::size_t(c.body)].q.matrix(), A_kp1))
      return std::numeric_limits<double>::quiet_NaN();
    Vec6 w;
    w << after[std::size_t(c.body)].v, after[std::size_t(c.body)].omega;
    worst = std::max(worst, (0.5 * (A_k + A_kp1) * w).lpNorm<Eigen::Infinity>());
  }
  return worst;
}

}  // namespace marsden::maximal
