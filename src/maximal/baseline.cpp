#include "marsden/maximal/baseline.hpp"

#include <Eigen/Dense>

#include "marsden/error.hpp"
#include "marsden/maximal/joints.hpp"

namespace marsden::maximal {

namespace {

const BodyState& pose_at(const std::vector<BodyState>& poses, int b) {
  return b == kWorld ? world_state() : poses[b];
}

// Stacked constraint Jacobian at the given poses.
Eigen::MatrixXd constraint_jacobian(const Model& model, const std::vector<BodyState>& state) {
  int m = 0;
  for (const Joint& joint : model.joints()) m += constraint_rows(joint.type);
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m, 6 * model.num_bodies());
  int row = 0;
  for (const Joint& joint : model.joints()) {
    const int k = constraint_rows(joint.type);
    JointBlock G_a, G_b;
    joint_jacobians(joint, pose_at(state, joint.parent), state[joint.child], G_a, G_b);
    if (joint.parent != kWorld) G.block(row, 6 * joint.parent, k, 6) = G_a;
    G.block(row, 6 * joint.child, k, 6) = G_b;
    row += k;
  }
  return G;
}

std::vector<BodyState> drifted(const std::vector<BodyState>& state, double h) {
  std::vector<BodyState> out = state;
  for (BodyState& st : out) {
    st.x += h * st.v;
    st.q = st.q * Quat::exp(h * st.omega);
  }
  return out;
}

}  // namespace

void constrained_accelerations(const Model& model, const std::vector<BodyState>& state,
                               std::vector<Vec3>& a, std::vector<Vec3>& omega_dot) {
  if (!model.degenerate_rows().empty()) {
    const int b = model.degenerate_rows().front() / 6;
    throw InputError("maximal baseline: body '" + model.bodies()[b].name +
                     "' has no mass or a singular inertia; the explicit baseline inverts each "
                     "body's mass matrix (the variational integrator does not need it)");
  }
  for (const Joint& joint : model.joints()) {
    if (joint.prescribed) {
      throw InputError("maximal baseline: joint '" + joint.name + "' is prescribed; the "
                       "baseline has no prescribed coordinates (the variational integrator has)");
    }
  }
  const int nb = model.num_bodies();
  Eigen::VectorXd nu(6 * nb), f(6 * nb);
  std::vector<Mat3> J_inv(nb);
  for (int b = 0; b < nb; ++b) {
    const Body& body = model.bodies()[b];
    const BodyState& st = state[b];
    nu.segment<6>(6 * b) << st.v, st.omega;
    f.segment<6>(6 * b) << body.mass * model.gravity(), -st.omega.cross(body.inertia * st.omega);
    J_inv[b] = body.inertia.inverse();
  }
  const Eigen::MatrixXd G = constraint_jacobian(model, state);
  // gamma = (dG/dt) nu along the free motion, by a central difference.
  const double h = 1e-5;
  const Eigen::VectorXd gamma = (constraint_jacobian(model, drifted(state, h)) -
                                 constraint_jacobian(model, drifted(state, -h))) * nu / (2.0 * h);
  auto apply_M_inv = [&](Eigen::MatrixXd X) {
    for (int b = 0; b < nb; ++b) {
      X.middleRows<3>(6 * b) /= model.bodies()[b].mass;
      X.middleRows<3>(6 * b + 3) = J_inv[b] * X.middleRows<3>(6 * b + 3);
    }
    return X;
  };
  Eigen::VectorXd acc = apply_M_inv(f);
  if (G.rows() > 0) {
    const Eigen::MatrixXd M_inv_Gt = apply_M_inv(G.transpose());
    Eigen::MatrixXd A = G * M_inv_Gt;
    // A tiny shift for redundant constraints (planar loops closed by revolutes).
    A.diagonal().array() += 1e-12 * (1.0 + A.diagonal().maxCoeff());
    const Eigen::VectorXd lambda = A.ldlt().solve(-gamma - G * acc);
    acc += M_inv_Gt * lambda;
  }
  a.resize(nb);
  omega_dot.resize(nb);
  for (int b = 0; b < nb; ++b) {
    a[b] = acc.segment<3>(6 * b);
    omega_dot[b] = acc.segment<3>(6 * b + 3);
  }
}

void heun_step(const Model& model, std::vector<BodyState>& state, double dt) {
  std::vector<Vec3> a0, w0, a1, w1;
  constrained_accelerations(model, state, a0, w0);
  std::vector<BodyState> predicted = state;
  for (std::size_t b = 0; b < state.size(); ++b) {
    predicted[b].x += dt * state[b].v;
    predicted[b].q = state[b].q * Quat::exp(dt * state[b].omega);
    predicted[b].v += dt * a0[b];
    predicted[b].omega += dt * w0[b];
  }
  constrained_accelerations(model, predicted, a1, w1);
  for (std::size_t b = 0; b < state.size(); ++b) {
    BodyState& st = state[b];
    const Vec3 omega_mean = 0.5 * (st.omega + predicted[b].omega);
    st.x += 0.5 * dt * (st.v + predicted[b].v);
    st.q = st.q * Quat::exp(dt * omega_mean);
    st.q.q.normalize();
    st.v += 0.5 * dt * (a0[b] + a1[b]);
    st.omega += 0.5 * dt * (w0[b] + w1[b]);
  }
}

}  // namespace marsden::maximal
