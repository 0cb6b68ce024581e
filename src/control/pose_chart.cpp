#include "marsden/control/pose_chart.hpp"

#include <cmath>
#include <numbers>

#include "marsden/lie/quaternion.hpp"
#include "marsden/lie/tangent.hpp"

namespace marsden::control {

namespace {

// Right-perturbation derivative of tau: tau(eta + d) = tau(eta) exp(J d + O(d^2)). The
// library's d tau is right-trivialised (a left perturbation), so J = Ad_tau^-1 d tau(eta),
// which equals d tau(-eta).
template <class G>
typename G::Jacobian tau_right_jacobian(DiffMap map, const typename G::Tangent& eta) {
  return dtau<G>(map, -eta);
}

Mat2 planar_rotation(double theta) {
  Mat2 R;
  R << std::cos(theta), -std::sin(theta), std::sin(theta), std::cos(theta);
  return R;
}

}  // namespace

SE2 PoseChart<SE2>::pose(const Coords& c) { return SE2::from_angle(c[0], Vec2(c[1], c[2])); }

PoseChart<SE2>::Coords PoseChart<SE2>::coords(const SE2& g, double theta_near) {
  double theta = g.angle();
  theta += 2.0 * std::numbers::pi * std::round((theta_near - theta) / (2.0 * std::numbers::pi));
  return Coords(theta, g.x.x(), g.x.y());
}

PoseChart<SE2>::JacTC PoseChart<SE2>::right_from_coords(const Coords& c) {
  JacTC B = JacTC::Zero();
  B(0, 0) = 1.0;
  B.bottomRightCorner<2, 2>() = planar_rotation(c[0]).transpose();
  return B;
}

PoseChart<SE2>::Coords PoseChart<SE2>::compose(const Coords& c, DiffMap map, const Vec3& eta,
                                               JacCC* J_c, JacCT* J_eta) {
  const SE2 step = tau<SE2>(map, eta);
  const Mat2 R = planar_rotation(c[0]);
  Coords out;
  out[0] = c[0] + step.angle();
  out.tail<2>() = c.tail<2>() + R * step.x;
  if (J_c) {
    Mat2 S;
    S << 0.0, -1.0, 1.0, 0.0;
    J_c->setIdentity();
    J_c->block<2, 1>(1, 0) = R * S * step.x;
  }
  if (J_eta) {
    const Mat3 J = tau_right_jacobian<SE2>(map, eta);
    J_eta->row(0) = J.row(0);
    J_eta->bottomRows<2>() = R * step.R * J.bottomRows<2>();
  }
  return out;
}

SE3 PoseChart<SE3>::pose(const Coords& c) {
  Quat q;
  q.q = c.tail<4>().normalized();
  return SE3{q.matrix(), c.head<3>()};
}

PoseChart<SE3>::Coords PoseChart<SE3>::coords(const SE3& g, const Vec4& q_near) {
  Vec4 q = Quat::from_rotation(g.R).q;
  if (q.dot(q_near) < 0.0) q = -q;
  Coords c;
  c << g.x, q;
  return c;
}

// delta_omega = 2 Im(q* (x) dq) / |q|^2 (exact for any |q|: the radial part of dq only
// scales q), delta_v = R^T dx.
PoseChart<SE3>::JacTC PoseChart<SE3>::right_from_coords(const Coords& c) {
  const Vec4 q = c.tail<4>();
  JacTC B = JacTC::Zero();
  B.topRightCorner<3, 4>() = (2.0 / q.squaredNorm()) * quat::V() * quat::L(quat::T() * q);
  B.bottomLeftCorner<3, 3>() = pose(c).R.transpose();
  return B;
}

PoseChart<SE3>::Coords PoseChart<SE3>::compose(const Coords& c, DiffMap map, const Vec6& eta,
                                               JacCC* J_c, JacCT* J_eta) {
  const SE3 step = tau<SE3>(map, eta);
  const Vec4 q_step = Quat::from_rotation(step.R).q;  // q_w >= 0: continuous for |angle| < pi
  const Mat3 R = pose(c).R;
  Coords out;
  out.head<3>() = c.head<3>() + R * step.x;
  out.tail<4>() = quat::R(q_step) * c.tail<4>();
  if (J_c) {
    J_c->setZero();
    J_c->topLeftCorner<3, 3>().setIdentity();
    // R exp(d) t = R t - R t^ d.
    J_c->topRightCorner<3, 4>() =
        -R * Quat::hat(step.x) * right_from_coords(c).topRightCorner<3, 4>();
    J_c->bottomRightCorner<4, 4>() = quat::R(q_step);
  }
  if (J_eta) {
    const Mat6 J = tau_right_jacobian<SE3>(map, eta);
    J_eta->topRows<3>() = R * step.R * J.bottomRows<3>();
    J_eta->bottomRows<4>() = 0.5 * quat::L(out.tail<4>()) * quat::V().transpose() * J.topRows<3>();
  }
  return out;
}

}  // namespace marsden::control
