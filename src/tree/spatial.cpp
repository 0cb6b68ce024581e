// World-frame (spatial) recursions over the joints of a tree. With S_i the world twist of
// joint i, V_i the spatial velocity of its body, I_i the composite spatial inertia of its
// subtree and H_i the subtree's momentum, all in world axes:
//   dL/dqd_i = S_i . H_i,   dL/dq_i = H_i . ad_{V_parent(i)} S_i + S_i . W_i (gravity),
// because dS_j/dq_i = ad_{S_i} S_j for i above j and dI/dq_i = -(ad^T I + I ad). Writing
// c_i = ad_{V_parent(i)} S_i, F_i = I_i S_i and e_i = I_i c_i - ad_{S_i}^T H_i, the second
// derivatives for j at or above i collapse to 6-vector dot products:
//   M_ij = S_j . F_i,   d2L/dq_i dqd_j = S_j . e_i,   d2L/dq_j dqd_i = c_j . F_i,
//   d2L/dq_i dq_j = c_j . e_i + omega_j . gamma_i,  gamma_i = -g x (omega_i x h_i + m_i v_i),
// (the Jacobi identity cancels the rest), so the Newton matrix costs O(n d) dot products.
#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Geometry>

#include "tree/detail.hpp"
#include "support/shared_object.hpp"

namespace marsden::tree::detail {

namespace {

Mat3 rotation(int axis, double s) {
  const double c = std::cos(s), sn = std::sin(s);
  Mat3 R = Mat3::Identity();
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  R(a, a) = c;
  R(a, b) = -sn;
  R(b, a) = sn;
  R(b, b) = c;
  return R;
}

// ad_x y for twists x = (omega, v).
Vec6 ad(const Vec6& x, const Vec6& y) {
  Vec6 out;
  out.head<3>() = x.head<3>().cross(y.head<3>());
  out.tail<3>() = x.head<3>().cross(y.tail<3>()) + x.tail<3>().cross(y.head<3>());
  return out;
}

// Composite spatial inertia (m, h = sum m r, Ibar about the world origin) times a twist.
Vec6 inertia_times(double m, const Vec3& h, const Mat3& Ibar, const Vec6& x) {
  Vec6 out;
  out.head<3>() = Ibar * x.head<3>() + h.cross(x.tail<3>());
  out.tail<3>() = m * x.tail<3>() + x.head<3>().cross(h);
  return out;
}

Vec3 point_rate(const Vec6& S, const Vec3& p) { return S.head<3>().cross(p) + S.tail<3>(); }

}  // namespace

bool is_rotation(Transform t) {
  return t == Transform::Rx || t == Transform::Ry || t == Transform::Rz;
}

Vec6 primitive_axis(Transform t) {
  Vec6 xi = Vec6::Zero();
  switch (t) {
    case Transform::Tx: xi(3) = 1.0; break;
    case Transform::Ty: xi(4) = 1.0; break;
    case Transform::Tz: xi(5) = 1.0; break;
    case Transform::Rx: xi(0) = 1.0; break;
    case Transform::Ry: xi(1) = 1.0; break;
    case Transform::Rz: xi(2) = 1.0; break;
    case Transform::Const: break;
  }
  return xi;
}

SE3 primitive(Transform t, double s) {
  SE3 g;
  switch (t) {
    case Transform::Tx: g.x(0) = s; break;
    case Transform::Ty: g.x(1) = s; break;
    case Transform::Tz: g.x(2) = s; break;
    case Transform::Rx: g.R = rotation(0, s); break;
    case Transform::Ry: g.R = rotation(1, s); break;
    case Transform::Rz: g.R = rotation(2, s); break;
    case Transform::Const: break;
  }
  return g;
}

void joint_poses(const Model& model, Data& data, const VecX& q) {
  const auto& joints = model.joints();
  const auto& frames = model.frames();
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const Model::Joint& J = joints[j];
    const SE3 local = J.placement * primitive(frames[J.frame].type, q[J.coord]);
    data.g_joint[j] = J.parent < 0 ? local : data.g_joint[J.parent] * local;
    const SE3& g = data.g_joint[j];
    Vec6& S = data.S[j];
    if (J.revolute) {
      S.head<3>() = g.R * J.axis.head<3>();
      S.tail<3>() = g.x.cross(S.head<3>());
    } else {
      S.head<3>().setZero();
      S.tail<3>() = g.R * J.axis.tail<3>();
    }
  }
}

void joint_kinematics(const Model& model, Data& data, const VecX& q, const VecX& qd) {
  joint_poses(model, data, q);
  const auto& joints = model.joints();
  for (std::size_t j = 0; j < joints.size(); ++j) {
    data.V[j] = data.S[j] * qd[joints[j].coord];
    if (joints[j].parent >= 0) data.V[j] += data.V[joints[j].parent];
  }
}

Vec3 frame_origin(const Model& model, const Data& data, int frame) {
  const int j = model.frame_joint(frame);
  const Vec3& x = model.frame_offset(frame).x;
  return j < 0 ? x : data.g_joint[j].act(x);
}

Mat3 frame_rotation(const Model& model, const Data& data, int frame) {
  const int j = model.frame_joint(frame);
  const Mat3& R = model.frame_offset(frame).R;
  return j < 0 ? R : Mat3(data.g_joint[j].R * R);
}

void add_point_jacobian(const Model& model, const Data& data, int frame, const Vec3& p,
                        double sign, MatX& J) {
  const auto& joints = model.joints();
  for (int i = model.frame_joint(frame); i >= 0; i = joints[i].parent)
    J.col(joints[i].coord) += sign * point_rate(data.S[i], p);
}

void add_point_hessian(const Model& model, const Data& data, int frame, const Vec3& p,
                       const Vec3& w, double sign, MatX& H) {
  const auto& joints = model.joints();
  for (int i = model.frame_joint(frame); i >= 0; i = joints[i].parent) {
    const Vec3 wxp = sign * w.cross(point_rate(data.S[i], p));  // w x pdot_i
    for (int j = i; j >= 0; j = joints[j].parent) {
      // w . (omega_j x pdot_i) = omega_j . (pdot_i x w)
      const double value = -data.S[j].head<3>().dot(wxp);
      H(joints[i].coord, joints[j].coord) += value;
      if (j != i) H(joints[j].coord, joints[i].coord) += value;
    }
  }
}

void add_direction_jacobian(const Model& model, const Data& data, int frame, const Vec3& n,
                            MatX& J) {
  const auto& joints = model.joints();
  for (int i = model.frame_joint(frame); i >= 0; i = joints[i].parent)
    J.col(joints[i].coord) += data.S[i].head<3>().cross(n);
}

void add_direction_hessian(const Model& model, const Data& data, int frame, const Vec3& n,
                           const Vec3& w, MatX& H) {
  const auto& joints = model.joints();
  for (int i = model.frame_joint(frame); i >= 0; i = joints[i].parent) {
    const Vec3 wxn = w.cross(data.S[i].head<3>().cross(n));
    for (int j = i; j >= 0; j = joints[j].parent) {
      const double value = -data.S[j].head<3>().dot(wxn);
      H(joints[i].coord, joints[j].coord) += value;
      if (j != i) H(joints[j].coord, joints[i].coord) += value;
    }
  }
}

double distance_terms(const Model& model, Data& data, int frame_a, int frame_b, VecX& grad,
                      MatX* hess) {
  const Vec3 p_a = frame_origin(model, data, frame_a), p_b = frame_origin(model, data, frame_b);
  const Vec3 r = p_a - p_b;
  const double d = r.norm();
  MatX& J_r = data.J3_a;
  J_r.setZero();
  add_point_jacobian(model, data, frame_a, p_a, 1.0, J_r);
  add_point_jacobian(model, data, frame_b, p_b, -1.0, J_r);
  // At d = 0 the direction is undefined: the gradient is taken as zero there.
  const Vec3 u = d > 0.0 ? Vec3(r / d) : Vec3::Zero();
  grad.noalias() = J_r.transpose() * u;
  if (hess) {
    hess->setZero();
    if (d > 0.0) {
      add_point_hessian(model, data, frame_a, p_a, u, 1.0, *hess);
      add_point_hessian(model, data, frame_b, p_b, u, -1.0, *hess);
      MatX& P_J = data.J3_b;
      P_J.noalias() = (Mat3::Identity() - u * u.transpose()) * J_r;
      hess->noalias() += (J_r.transpose() * P_J) / d;
    }
  }
  return d;
}

void add_generated_potential_terms(const GeneratedPotential& p, Data& data, const VecX& q,
                                   bool second_order) {
  constexpr int kMax = kGeneratedElementMaxCoords;
  std::array<double, kMax> q_c, grad_V;
  std::array<double, kMax * kMax> hess_V;
  double V = 0.0;
  for (int a = 0; a < p.size; ++a) q_c[a] = q[p.coords[a]];
  marsden::detail::check_status(
      p.evaluate(q_c.data(), &V, grad_V.data(), second_order ? hess_V.data() : nullptr),
      p.library, "marsden_tree_potential");
  data.potential += V;
  for (int a = 0; a < p.size; ++a) data.L_q[p.coords[a]] -= grad_V[a];
  if (!second_order) return;
  for (int b = 0; b < p.size; ++b)
    for (int a = 0; a < p.size; ++a) data.L_qq(p.coords[a], p.coords[b]) -= hess_V[a + p.size * b];
}

void add_generated_force_terms(const GeneratedForce& f, Data& data, const VecX& q,
                               const VecX& qd, bool derivatives) {
  constexpr int kMax = kGeneratedElementMaxCoords;
  std::array<double, kMax> q_c, qd_c, Q_c;
  std::array<double, kMax * kMax> Q_q, Q_v;
  for (int a = 0; a < f.size; ++a) {
    q_c[a] = q[f.coords[a]];
    qd_c[a] = qd[f.coords[a]];
  }
  marsden::detail::check_status(
      f.evaluate(q_c.data(), qd_c.data(), Q_c.data(), derivatives ? Q_q.data() : nullptr,
                 derivatives ? Q_v.data() : nullptr),
      f.library, "marsden_tree_force");
  for (int a = 0; a < f.size; ++a) data.Q[f.coords[a]] += Q_c[a];
  if (!derivatives) return;
  for (int b = 0; b < f.size; ++b)
    for (int a = 0; a < f.size; ++a) {
      data.Q_q(f.coords[a], f.coords[b]) += Q_q[a + f.size * b];
      data.Q_v(f.coords[a], f.coords[b]) += Q_v[a + f.size * b];
    }
}

void add_spring_terms(const Model& model, Data& data, const VecX& q, bool second_order) {
  for (const GeneratedPotential& p : model.generated_potentials())
    add_generated_potential_terms(p, data, q, second_order);
  for (const CoordinateSpring& s : model.coordinate_springs()) {
    const double dq = q[s.coord] - s.rest;
    data.potential += 0.5 * s.stiffness * dq * dq;
    data.L_q[s.coord] -= s.stiffness * dq;
    if (second_order) data.L_qq(s.coord, s.coord) -= s.stiffness;
  }
  for (const FrameSpring& s : model.frame_springs()) {
    const double d = distance_terms(model, data, s.frame_a, s.frame_b, data.grad_n,
                                    second_order ? &data.hess_n : nullptr);
    const double stretch = d - s.rest_length;
    data.potential += 0.5 * s.stiffness * stretch * stretch;
    data.L_q -= s.stiffness * stretch * data.grad_n;
    if (second_order)
      data.L_qq -= s.stiffness * (data.grad_n * data.grad_n.transpose() + stretch * data.hess_n);
  }
}

void spatial_lagrangian(const Model& model, Data& data, bool second_order) {
  const auto& joints = model.joints();
  const int nj = static_cast<int>(joints.size());
  const Vec3& g = model.gravity();

  // Each joint's own bodies in world axes, their momenta and energies.
  for (int j = 0; j < nj; ++j) {
    const Model::Joint& J = joints[j];
    const SE3& G = data.g_joint[j];
    const Vec3 s = G.R * J.first_moment;
    const Vec3& x = G.x;
    const double m = J.mass;
    data.m_c[j] = m;
    data.h_c[j] = m * x + s;
    data.I_c[j] = G.R * J.inertia_origin * G.R.transpose() +
                  (m * x.squaredNorm() + 2.0 * x.dot(s)) * Mat3::Identity() -
                  m * x * x.transpose() - x * s.transpose() - s * x.transpose();
    data.H[j] = inertia_times(m, data.h_c[j], data.I_c[j], data.V[j]);
    data.kinetic += 0.5 * data.V[j].dot(data.H[j]);
    data.potential -= g.dot(data.h_c[j]);
  }
  // Composite inertias and subtree momenta, leaves to root.
  for (int j = nj - 1; j >= 0; --j) {
    const int p = joints[j].parent;
    if (p < 0) continue;
    data.m_c[p] += data.m_c[j];
    data.h_c[p] += data.h_c[j];
    data.I_c[p] += data.I_c[j];
    data.H[p] += data.H[j];
  }

  for (int i = 0; i < nj; ++i) {
    const int ci = joints[i].coord, p = joints[i].parent;
    const Vec6& S = data.S[i];
    const Vec6& H = data.H[i];
    const double m = data.m_c[i];
    const Vec3& h = data.h_c[i];
    data.L_v[ci] += S.dot(H);
    data.c[i] = p < 0 ? Vec6::Zero() : ad(data.V[p], S);
    Vec6 W;  // gravity wrench on the subtree about the world origin
    W.head<3>() = h.cross(g);
    W.tail<3>() = m * g;
    data.L_q[ci] += H.dot(data.c[i]) + S.dot(W);
    if (!second_order) continue;
    data.F[i] = inertia_times(m, h, data.I_c[i], S);
    Vec6 b;  // -ad_S^T H
    b.head<3>() = S.head<3>().cross(H.head<3>()) + S.tail<3>().cross(H.tail<3>());
    b.tail<3>() = S.head<3>().cross(H.tail<3>());
    data.e[i] = inertia_times(m, h, data.I_c[i], data.c[i]) + b;
    data.gamma[i] = -g.cross(S.head<3>().cross(h) + m * S.tail<3>());
  }
  if (!second_order) return;
  for (int i = 0; i < nj; ++i) {
    const int ci = joints[i].coord;
    const Vec6 &F = data.F[i], &e = data.e[i];
    const Vec3& gamma = data.gamma[i];
    for (int j = i; j >= 0; j = joints[j].parent) {
      const int cj = joints[j].coord;
      const Vec6 &Sj = data.S[j], &cj_vec = data.c[j];
      const double m_ij = Sj.dot(F);
      const double l_qq = cj_vec.dot(e) + Sj.head<3>().dot(gamma);
      data.M(ci, cj) = m_ij;
      data.M(cj, ci) = m_ij;
      data.L_qq(ci, cj) += l_qq;
      if (j != i) data.L_qq(cj, ci) += l_qq;
      data.L_qv(ci, cj) += Sj.dot(e);
      if (j != i) data.L_qv(cj, ci) += cj_vec.dot(F);
    }
  }
}

void forces_at_current_kinematics(const Model& model, Data& data, const VecX& q,
                                  const VecX& qd, const VecX& u, bool derivatives) {
  data.Q.setZero();
  if (derivatives) {
    data.Q_q.setZero();
    data.Q_v.setZero();
    data.Q_u.setZero();
  }
  for (const GeneratedForce& f : model.generated_forces())
    add_generated_force_terms(f, data, q, qd, derivatives);
  for (const CoordinateDamper& d : model.coordinate_dampers()) {
    data.Q[d.coord] -= d.damping * qd[d.coord];
    if (derivatives) data.Q_v(d.coord, d.coord) -= d.damping;
  }
  for (const FrameDamper& d : model.frame_dampers()) {
    distance_terms(model, data, d.frame_a, d.frame_b, data.grad_n,
                   derivatives ? &data.hess_n : nullptr);
    const double rate = data.grad_n.dot(qd);
    data.Q -= d.damping * rate * data.grad_n;
    if (derivatives) {
      data.Q_v.noalias() -= d.damping * data.grad_n * data.grad_n.transpose();
      data.Q_q -= d.damping * rate * data.hess_n;
      data.Q_q.noalias() -= d.damping * data.grad_n * (data.hess_n * qd).transpose();
    }
  }
  const auto& joints = model.joints();
  for (const Input& in : model.inputs()) {
    if (in.kind == InputKind::CoordinateForce) {
      // A motor: gear u, u clamped to its control range (no change with u outside it).
      const double u_i = u[in.first];
      data.Q[in.index] += in.gear * std::clamp(u_i, in.lower, in.upper);
      if (derivatives && u_i > in.lower && u_i < in.upper) data.Q_u(in.index, in.first) += in.gear;
      continue;
    }
    const bool body = in.kind == InputKind::BodyWrench;
    const Mat3 R = frame_rotation(model, data, in.index);
    const Vec3 p = frame_origin(model, data, in.index);
    const Vec3 tau = body ? Vec3(R * u.segment<3>(in.first)) : Vec3(u.segment<3>(in.first));
    const Vec3 f = body ? Vec3(R * u.segment<3>(in.first + 3)) : Vec3(u.segment<3>(in.first + 3));
    Vec6 w;  // about the world origin
    w.head<3>() = tau + p.cross(f);
    w.tail<3>() = f;
    for (int i = model.frame_joint(in.index); i >= 0; i = joints[i].parent) {
      const int ci = joints[i].coord;
      const Vec6& S = data.S[i];
      data.Q[ci] += S.dot(w);
      if (!derivatives) continue;
      const Vec3 omega = S.head<3>(), pdot = point_rate(S, p);
      const Vec3 du_tau = body ? Vec3(R.transpose() * omega) : omega;
      const Vec3 du_force = body ? Vec3(R.transpose() * pdot) : pdot;
      data.Q_u.block<1, 3>(ci, in.first) = du_tau.transpose();
      data.Q_u.block<1, 3>(ci, in.first + 3) = du_force.transpose();
      for (int j = joints[i].parent; j >= 0; j = joints[j].parent) {
        const int cj = joints[j].coord;
        if (body) {
          // A wrench fixed in the body: only d/dq_i of Q_j survives, (ad_{S_j} S_i) . w.
          data.Q_q(cj, ci) += ad(data.S[j], S).dot(w);
        } else {
          data.Q_q(ci, cj) += ad(data.S[j], S).dot(w);
        }
      }
      if (!body) {
        // The world force's point of application moves with every supporting joint.
        for (int j = model.frame_joint(in.index); j >= 0; j = joints[j].parent)
          data.Q_q(ci, joints[j].coord) += omega.dot(point_rate(data.S[j], p).cross(f));
      }
    }
  }
}

}  // namespace marsden::tree::detail
