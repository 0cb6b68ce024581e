// Featherstone's articulated-body recursions in world axes (Rigid Body Dynamics
// Algorithms, §7.3), used to solve (M(q) + diag d) x = b in O(n) without forming M (M with
// the coordinates' armature on its diagonal, as lagrangian_terms adds it): the
// midpoint step's simplified Newton matrix is M / dt plus diagonal spring and damper terms
// (midpoint.cpp). Every joint has one coordinate; spatial inertias map twists
// (omega, v) to momenta (angular about the world origin, linear), as in spatial.cpp, so
// no transforms between joint frames are needed.
#include "tree/detail.hpp"

namespace marsden::tree::detail {

namespace {

// The spatial inertia of one joint's own bodies about the world origin, in world axes:
// [[Ibar, h^], [-h^, m]] with h the first moment (spatial.cpp writes the same triple).
Mat6 body_inertia(const Model::Joint& J, const SE3& G) {
  const Vec3 s = G.R * J.first_moment;
  const Vec3& x = G.x;
  const double m = J.mass;
  const Vec3 h = m * x + s;
  const Mat3 I_bar = G.R * J.inertia_origin * G.R.transpose() +
                     (m * x.squaredNorm() + 2.0 * x.dot(s)) * Mat3::Identity() -
                     m * x * x.transpose() - x * s.transpose() - s * x.transpose();
  Mat3 h_hat;
  h_hat << 0.0, -h.z(), h.y(), h.z(), 0.0, -h.x(), -h.y(), h.x(), 0.0;
  Mat6 I;
  I << I_bar, h_hat, -h_hat, m * Mat3::Identity();
  return I;
}

}  // namespace

void articulated_factor(const Model& model, Data& data) {
  const auto& joints = model.joints();
  const int nj = static_cast<int>(joints.size());
  for (int j = 0; j < nj; ++j) data.IA[j] = body_inertia(joints[j], data.g_joint[j]);
  // Leaves to root: a dynamic joint passes on its articulated inertia less what its own
  // coordinate absorbs; a prescribed (held) joint passes on all of it.
  for (int j = nj - 1; j >= 0; --j) {
    const Model::Joint& J = joints[j];
    const bool dynamic = model.dynamic_index(J.coord) >= 0;
    if (dynamic) {
      data.U_art[j].noalias() = data.IA[j] * data.S[j];
      data.D_art[j] = data.S[j].dot(data.U_art[j]) + model.coords()[J.coord].armature +
                      data.d_art[J.coord];
    }
    if (J.parent < 0) continue;
    data.IA[J.parent] += data.IA[j];
    if (dynamic) data.IA[J.parent].noalias() -= data.U_art[j] * (data.U_art[j].transpose() / data.D_art[j]);
  }
}

void articulated_solve(const Model& model, Data& data) {
  const auto& joints = model.joints();
  const int nj = static_cast<int>(joints.size());
  for (int j = 0; j < nj; ++j) data.p_art[j].setZero();
  for (int j = nj - 1; j >= 0; --j) {
    const Model::Joint& J = joints[j];
    const bool dynamic = model.dynamic_index(J.coord) >= 0;
    if (dynamic) data.u_art[j] = data.b_art[J.coord] - data.S[j].dot(data.p_art[j]);
    if (J.parent < 0) continue;
    data.p_art[J.parent] += data.p_art[j];
    if (dynamic) data.p_art[J.parent] += data.U_art[j] * (data.u_art[j] / data.D_art[j]);
  }
  for (int j = 0; j < nj; ++j) {
    const Model::Joint& J = joints[j];
    Vec6& a = data.a_art[j];
    if (J.parent < 0) {
      a.setZero();
    } else {
      a = data.a_art[J.parent];
    }
    if (model.dynamic_index(J.coord) < 0) {
      data.x_art[J.coord] = 0.0;
      continue;
    }
    const double x = (data.u_art[j] - data.U_art[j].dot(a)) / data.D_art[j];
    data.x_art[J.coord] = x;
    a += data.S[j] * x;
  }
}

}  // namespace marsden::tree::detail
