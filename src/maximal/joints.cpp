#include "marsden/maximal/joints.hpp"

#include <cmath>
#include <type_traits>

namespace marsden::maximal {

namespace {

using Mat23 = Eigen::Matrix<double, 2, 3>;

// Two unit directions orthogonal to the unit vector u and to each other, without a
// square root (Duff et al., "Building an orthonormal basis, revisited", 2017).
Mat23 orthogonal_basis(const Vec3& u) {
  const double sign = std::copysign(1.0, u.z());
  const double a = -1.0 / (sign + u.z());
  const double b = u.x() * u.y() * a;
  Mat23 P;
  P << 1.0 + sign * u.x() * u.x() * a, sign * b, -sign * u.x(),
       b, sign + u.y() * u.y() * a, -u.y();
  return P;
}

// Delta = R_a^T (x_b + R_b p_b - x_a) - p_a and, with kDerivatives, its derivatives
// (columns dx, dphi).
struct AnchorGap {
  Vec3 Delta;
  Eigen::Matrix<double, 3, 6> D_a, D_b;
};

template <bool kDerivatives>
AnchorGap anchor_gap(const Joint& joint, const BodyState& a, const Mat3& R_a, const BodyState& b,
                     const Mat3& R_b) {
  const Vec3 w = R_a.transpose() * (b.x + R_b * joint.p_child - a.x);
  AnchorGap gap;
  gap.Delta = w - joint.p_parent;
  if constexpr (kDerivatives) {
    gap.D_a << -R_a.transpose(), Quat::hat(w);
    gap.D_b << R_a.transpose(), -R_a.transpose() * R_b * Quat::hat(joint.p_child);
  }
  return gap;
}

// q_rel = q_a^dagger q_b q_offset^dagger and, with kDerivatives, the rotational
// derivatives of its parts; a parent perturbation acts as exp(-dphi_a) q_rel, a child one
// as q_rel exp(R_offset dphi_b). (The translation columns are zero.)
struct RelativeRotation {
  Vec4 q_rel;
  Mat3 V_a, V_b;  // d vec(q_rel) / dphi
  Eigen::Matrix<double, 1, 3> W_a, W_b;  // d q_rel,w / dphi
};

template <bool kDerivatives>
RelativeRotation relative_rotation(const Joint& joint, const BodyState& a,
                                   const BodyState& b) {
  RelativeRotation rel;
  rel.q_rel = (a.q.inverse() * b.q * joint.q_offset.inverse()).q;
  if constexpr (kDerivatives) {
    const double w = rel.q_rel(0);
    const Vec3 v = rel.q_rel.tail<3>();
    const Mat3 R_off = joint.q_offset.matrix();
    rel.V_a = 0.5 * (-w * Mat3::Identity() + Quat::hat(v));
    rel.V_b = 0.5 * (w * Mat3::Identity() + Quat::hat(v)) * R_off;
    rel.W_a = 0.5 * v.transpose();
    rel.W_b = -0.5 * v.transpose() * R_off;
  }
  return rel;
}

}  // namespace

const BodyState& world_state() {
  static const BodyState world;
  return world;
}

namespace {

// The pair of directions orthogonal to the axis, where a joint slides or turns about it.
Mat23 axis_basis(const Joint& joint) {
  const JointKind& kind = joint_kind(joint.type);
  return kind.slide != Slide::None || kind.turn == Turn::Axis ? orthogonal_basis(joint.axis)
                                                              : Mat23::Zero();
}

// Evaluates g and, with kJacobians, both Jacobians (the residual-only path of Newton's
// line search skips every derivative).
template <bool kJacobians>
void evaluate(const Joint& joint, const BodyState& a, const Mat3& R_a, const BodyState& b,
              const Mat3& R_b, JointVec& g, JointBlock* G_a, JointBlock* G_b) {
  const int m = constraint_rows(joint.type);
  g.resize(m);
  if constexpr (kJacobians) {
    G_a->resize(m, 6);
    G_b->resize(m, 6);
  }
  const JointKind& kind = joint_kind(joint.type);
  const AnchorGap gap = anchor_gap<kJacobians>(joint, a, R_a, b, R_b);
  const Mat23 P = axis_basis(joint);
  int row = 0;
  // Rows of g and of the Jacobians; derivatives given for dphi only (3 columns) are
  // rotational rows, with zero translation columns.
  // The row counts are compile-time constants, so every write below has fixed size.
  auto put = [&](const auto& value, const auto& D_a, const auto& D_b) {
    constexpr int k = std::decay_t<decltype(value)>::RowsAtCompileTime;
    g.template segment<k>(row) = value;
    if constexpr (kJacobians) {
      if constexpr (std::decay_t<decltype(D_a)>::ColsAtCompileTime == 3) {
        G_a->template block<k, 3>(row, 0).setZero();
        G_b->template block<k, 3>(row, 0).setZero();
        G_a->template block<k, 3>(row, 3) = D_a;
        G_b->template block<k, 3>(row, 3) = D_b;
      } else {
        G_a->template middleRows<k>(row) = D_a;
        G_b->template middleRows<k>(row) = D_b;
      }
    }
    row += k;
  };
  // Anchor rows: the gap, across the axis, or along it.
  switch (kind.slide) {
    case Slide::None:
      put(gap.Delta, gap.D_a, gap.D_b);
      break;
    case Slide::Axis:
      put(P * gap.Delta, P * gap.D_a, P * gap.D_b);
      break;
    case Slide::Plane: {
      const Eigen::Matrix<double, 1, 3> n = joint.axis.transpose();
      put(n * gap.Delta, n * gap.D_a, n * gap.D_b);
      break;
    }
  }
  // Rotation rows: the vector part of the relative rotation, across the axis, or the
  // universal joint's one row.
  if (kind.turn == Turn::Ball) return;
  if (kind.turn == Turn::Universal) {
    const Vec3 u2_off = joint.q_offset.matrix().transpose() * joint.axis2;
    const Vec3 u2_a = R_a.transpose() * R_b * u2_off;
    const Eigen::Matrix<double, 1, 1> c(joint.axis.dot(u2_a));
    const Eigen::Matrix<double, 1, 3> C_a = joint.axis.cross(u2_a).transpose();
    const Eigen::Matrix<double, 1, 3> C_b =
        -joint.axis.transpose() * R_a.transpose() * R_b * Quat::hat(u2_off);
    put(c, C_a, C_b);
    return;
  }
  const RelativeRotation rel = relative_rotation<kJacobians>(joint, a, b);
  const Vec3 v = rel.q_rel.tail<3>();
  if (kind.turn == Turn::None) {
    put(v, rel.V_a, rel.V_b);
  } else {
    put(P * v, P * rel.V_a, P * rel.V_b);
  }
}

}  // namespace

JointVec joint_residual(const Joint& joint, const BodyState& parent, const BodyState& child) {
  return joint_residual(joint, parent, parent.q.matrix(), child, child.q.matrix());
}

void joint_jacobians(const Joint& joint, const BodyState& parent, const BodyState& child,
                     JointBlock& G_parent, JointBlock& G_child, JointVec* g) {
  joint_jacobians(joint, parent, parent.q.matrix(), child, child.q.matrix(), G_parent, G_child,
                  g);
}

JointVec joint_residual(const Joint& joint, const BodyState& parent, const Mat3& R_parent,
                        const BodyState& child, const Mat3& R_child) {
  JointVec g;
  evaluate<false>(joint, parent, R_parent, child, R_child, g, nullptr, nullptr);
  return g;
}

void joint_jacobians(const Joint& joint, const BodyState& parent, const Mat3& R_parent,
                     const BodyState& child, const Mat3& R_child, JointBlock& G_parent,
                     JointBlock& G_child, JointVec* g) {
  JointVec g_local;
  evaluate<true>(joint, parent, R_parent, child, R_child, g != nullptr ? *g : g_local,
                 &G_parent, &G_child);
}

namespace {

// The joint's relative rotation and anchor slide at the given coordinates.
void joint_motion(const Joint& joint, const JointCoords& coords, Quat& q_rel, Vec3& t) {
  const JointKind& kind = joint_kind(joint.type);
  const Vec3& u = joint.axis;
  q_rel = Quat();
  t = Vec3::Zero();
  switch (kind.slide) {
    case Slide::None: break;
    case Slide::Axis: t = coords(0) * u; break;
    case Slide::Plane: t = orthogonal_basis(u).transpose() * coords.head<2>(); break;
  }
  const int i = slide_dofs(kind.slide);  // the turn's first coordinate
  switch (kind.turn) {
    case Turn::None: break;
    case Turn::Axis: q_rel = Quat::exp(coords(i) * u); break;
    case Turn::Universal:
      q_rel = Quat::exp(coords(i) * u) * Quat::exp(coords(i + 1) * joint.axis2);
      break;
    case Turn::Ball: q_rel = Quat::exp(coords.segment<3>(i)); break;
  }
}

}  // namespace

// q_child = q_parent q_rel q_offset and x_child + R_child p_child = x_parent +
// R_parent (p_parent + t): solved for the child here, for the parent in place_parent.
BodyState place_child(const Joint& joint, const BodyState& parent, const BodyState& child,
                      const JointCoords& coords) {
  Quat q_rel;
  Vec3 t;
  joint_motion(joint, coords, q_rel, t);
  BodyState placed = child;
  placed.q = parent.q * q_rel * joint.q_offset;
  placed.x = parent.x + parent.q.matrix() * (joint.p_parent + t) -
             placed.q.matrix() * joint.p_child;
  return placed;
}

BodyState place_parent(const Joint& joint, const BodyState& parent, const BodyState& child,
                       const JointCoords& coords) {
  Quat q_rel;
  Vec3 t;
  joint_motion(joint, coords, q_rel, t);
  BodyState placed = parent;
  placed.q = child.q * joint.q_offset.inverse() * q_rel.inverse();
  placed.x = child.x + child.q.matrix() * joint.p_child -
             placed.q.matrix() * (joint.p_parent + t);
  return placed;
}

JointCoords joint_coordinates(const Joint& joint, const BodyState& parent,
                              const BodyState& child) {
  const Vec3& u = joint.axis;
  const Vec3 Delta = anchor_gap<false>(joint, parent, parent.q.matrix(), child, child.q.matrix()).Delta;  // the slide t
  const Quat q_rel{relative_rotation<false>(joint, parent, child).q_rel};
  // The angle of a rotation about u, 2 atan2(u . vec, w) (see joint_coordinate).
  const double angle = 2.0 * std::atan2(u.dot(q_rel.q.tail<3>()), q_rel.q(0));
  const JointKind& kind = joint_kind(joint.type);
  JointCoords c(joint_dofs(joint.type));
  switch (kind.slide) {
    case Slide::None: break;
    case Slide::Axis: c(0) = u.dot(Delta); break;
    case Slide::Plane: c.head<2>() = orthogonal_basis(u) * Delta; break;
  }
  const int i = slide_dofs(kind.slide);
  switch (kind.turn) {
    case Turn::None: break;
    case Turn::Axis: c(i) = angle; break;
    case Turn::Universal: {
      // R_rel = Rot(u, c0) Rot(u2, c1) with u orthogonal to u2: R_rel u2 = Rot(u, c0) u2 and
      // R_rel^T u = Rot(u2, -c1) u.
      const Vec3& u2 = joint.axis2;
      const Mat3 R_rel = q_rel.matrix();
      const Vec3 n = u.cross(u2);
      c(i) = std::atan2(n.dot(R_rel * u2), u2.dot(R_rel * u2));
      c(i + 1) = std::atan2(n.dot(R_rel.transpose() * u), u.dot(R_rel.transpose() * u));
      break;
    }
    case Turn::Ball: c.segment<3>(i) = Quat::log(q_rel); break;
  }
  return c;
}

namespace {

// Derivative of (D_a^T mu; D_b^T mu), the anchor-gap rows weighted by mu (a constant
// 3-vector in the parent frame), added into H. D_a^T mu = (-R_a mu, mu x w) and
// D_b^T mu = (R_a mu, p_b x (R_b^T R_a mu)); a right perturbation R -> R exp(dphi) moves
// R mu by -R hat(mu) dphi and R^T y by hat(R^T y) dphi.
void add_anchor_derivative(const Joint& joint, const BodyState& a, const BodyState& b,
                           const Vec3& mu, Mat12& H) {
  const Mat3 R_a = a.q.matrix();
  const Mat3 R_b = b.q.matrix();
  const AnchorGap gap = anchor_gap<true>(joint, a, R_a, b, R_b);
  const Mat3 mu_hat = Quat::hat(mu);
  const Mat3 R_ba = R_b.transpose() * R_a;
  const Mat3 p_hat = Quat::hat(joint.p_child);
  H.block<3, 3>(0, 3) += R_a * mu_hat;
  H.block<3, 6>(3, 0) += mu_hat * gap.D_a;
  H.block<3, 6>(3, 6) += mu_hat * gap.D_b;
  H.block<3, 3>(6, 3) -= R_a * mu_hat;
  H.block<3, 3>(9, 3) -= p_hat * R_ba * mu_hat;
  H.block<3, 3>(9, 9) += p_hat * Quat::hat(R_ba * mu);
}

// Derivative of (V_a^T nu; V_b^T nu), the rows of vec(q_rel) weighted by nu, added into
// H's rotational blocks: V_a^T nu = (-w nu + nu x v) / 2 and
// V_b^T nu = R_off^T (w nu + nu x v) / 2, with dw = W dphi and dv = V dphi.
void add_rotation_derivative(const Joint& joint, const RelativeRotation& rel, const Vec3& nu,
                             Mat12& H) {
  const Mat3 R_off_t = joint.q_offset.matrix().transpose();
  const Mat3 nu_hat = Quat::hat(nu);
  H.block<3, 3>(3, 3) += 0.5 * (-nu * rel.W_a + nu_hat * rel.V_a);
  H.block<3, 3>(3, 9) += 0.5 * (-nu * rel.W_b + nu_hat * rel.V_b);
  H.block<3, 3>(9, 3) += 0.5 * R_off_t * (nu * rel.W_a + nu_hat * rel.V_a);
  H.block<3, 3>(9, 9) += 0.5 * R_off_t * (nu * rel.W_b + nu_hat * rel.V_b);
}

// Derivative of the universal joint's row weighted by l: C_a^T l = l axis x u2_a and
// C_b^T l = l u2_off x (R_b^T R_a axis), with u2_a = R_a^T R_b u2_off.
void add_universal_derivative(const Joint& joint, const BodyState& a, const BodyState& b,
                              double l, Mat12& H) {
  const Mat3 R_ab = a.q.matrix().transpose() * b.q.matrix();
  const Vec3 u2_off = joint.q_offset.matrix().transpose() * joint.axis2;
  const Vec3 u2_a = R_ab * u2_off;
  const Vec3 y = R_ab.transpose() * joint.axis;
  const Mat3 axis_hat = Quat::hat(joint.axis);
  const Mat3 u2_off_hat = Quat::hat(u2_off);
  H.block<3, 3>(3, 3) += l * axis_hat * Quat::hat(u2_a);
  H.block<3, 3>(3, 9) -= l * axis_hat * R_ab * u2_off_hat;
  H.block<3, 3>(9, 3) -= l * u2_off_hat * R_ab.transpose() * axis_hat;
  H.block<3, 3>(9, 9) += l * u2_off_hat * Quat::hat(y);
}

}  // namespace

Mat12 joint_force_derivative(const Joint& joint, const BodyState& parent,
                             const BodyState& child, const JointVec& lambda) {
  Mat12 H = Mat12::Zero();
  const JointKind& kind = joint_kind(joint.type);
  const Mat23 P = axis_basis(joint);
  // The rows of evaluate(): anchor rows first (3, 2 or 1), then rotation rows.
  switch (kind.slide) {
    case Slide::None:
      add_anchor_derivative(joint, parent, child, lambda.segment<3>(0), H);
      break;
    case Slide::Axis:
      add_anchor_derivative(joint, parent, child, P.transpose() * lambda.segment<2>(0), H);
      break;
    case Slide::Plane:
      add_anchor_derivative(joint, parent, child, lambda(0) * joint.axis, H);
      break;
  }
  const int row = 3 - slide_dofs(kind.slide);
  if (kind.turn == Turn::Ball) return H;
  if (kind.turn == Turn::Universal) {
    add_universal_derivative(joint, parent, child, lambda(row), H);
    return H;
  }
  const RelativeRotation rel = relative_rotation<true>(joint, parent, child);
  const Vec3 nu = kind.turn == Turn::None ? Vec3(lambda.segment<3>(row))
                                          : Vec3(P.transpose() * lambda.segment<2>(row));
  add_rotation_derivative(joint, rel, nu, H);
  return H;
}

Mat12 joint_coordinate_derivative(const Joint& joint, const BodyState& parent,
                                  const BodyState& child) {
  Mat12 H = Mat12::Zero();
  if (joint_kind(joint.type).slide == Slide::Axis) {  // a slide: its length
    add_anchor_derivative(joint, parent, child, joint.axis, H);
    return H;
  }
  // Revolute: ds_x = scale t_x on the rotation columns, t_x = w V_x^T a - sn W_x^T, with
  // scale = 2 / (w^2 + sn^2) and sn = a . v (see joint_coordinate).
  const RelativeRotation rel = relative_rotation<true>(joint, parent, child);
  const Vec3& a = joint.axis;
  const double w = rel.q_rel(0);
  const double sn = a.dot(rel.q_rel.tail<3>());
  const double scale = 2.0 / (w * w + sn * sn);
  const Mat3 R_off_t = joint.q_offset.matrix().transpose();
  const Vec3 t_a = w * rel.V_a.transpose() * a - sn * rel.W_a.transpose();
  const Vec3 t_b = w * rel.V_b.transpose() * a - sn * rel.W_b.transpose();
  const Mat3 a_hat = Quat::hat(a);
  for (int y = 0; y < 2; ++y) {  // perturbed body: parent, then child
    const Mat3& V_y = y == 0 ? rel.V_a : rel.V_b;
    const Eigen::Matrix<double, 1, 3>& W_y = y == 0 ? rel.W_a : rel.W_b;
    const Eigen::Matrix<double, 1, 3> dsn = a.transpose() * V_y;
    const Eigen::Matrix<double, 1, 3> dscale = -scale * scale * (w * W_y + sn * dsn);
    // d(V_a^T a), d(V_b^T a), d(W_a^T) = V_y / 2 and d(W_b^T) = -R_off^T V_y / 2.
    const Mat3 dVa = 0.5 * (-a * W_y + a_hat * V_y);
    const Mat3 dVb = 0.5 * R_off_t * (a * W_y + a_hat * V_y);
    const Mat3 dt_a = rel.V_a.transpose() * a * W_y + w * dVa - rel.W_a.transpose() * dsn -
                      sn * 0.5 * V_y;
    const Mat3 dt_b = rel.V_b.transpose() * a * W_y + w * dVb - rel.W_b.transpose() * dsn +
                      sn * 0.5 * R_off_t * V_y;
    H.block<3, 3>(3, 6 * y + 3) = t_a * dscale + scale * dt_a;
    H.block<3, 3>(9, 6 * y + 3) = t_b * dscale + scale * dt_b;
  }
  return H;
}

double joint_coordinate(const Joint& joint, const BodyState& parent, const BodyState& child,
                        Vec6* ds_parent, Vec6* ds_child) {
  if (joint_kind(joint.type).slide == Slide::Axis) {  // a slide: its length
    const AnchorGap gap =
        anchor_gap<true>(joint, parent, parent.q.matrix(), child, child.q.matrix());
    if (ds_parent != nullptr) {
      *ds_parent = (joint.axis.transpose() * gap.D_a).transpose();
      *ds_child = (joint.axis.transpose() * gap.D_b).transpose();
    }
    return joint.axis.dot(gap.Delta);
  }
  // Revolute: q_rel = (cos(s/2), sin(s/2) axis), so s = 2 atan2(axis . vec, w).
  const RelativeRotation rel = relative_rotation<true>(joint, parent, child);
  const double w = rel.q_rel(0);
  const double sn = joint.axis.dot(rel.q_rel.tail<3>());
  if (ds_parent != nullptr) {
    const double scale = 2.0 / (w * w + sn * sn);
    ds_parent->head<3>().setZero();
    ds_child->head<3>().setZero();
    ds_parent->tail<3>() = scale * (w * joint.axis.transpose() * rel.V_a - sn * rel.W_a).transpose();
    ds_child->tail<3>() = scale * (w * joint.axis.transpose() * rel.V_b - sn * rel.W_b).transpose();
  }
  return 2.0 * std::atan2(sn, w);
}

}  // namespace marsden::maximal
