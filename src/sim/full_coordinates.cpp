#include "sim/full_coordinates.hpp"

#include <string>

#include "marsden/error.hpp"

namespace marsden::sim::detail {

namespace {

using nonholonomic::gni_residual;
using nonholonomic::gni_step;
using nonholonomic::NhJacobian;
using nonholonomic::NhMat;
using nonholonomic::NhUnknown;
using nonholonomic::NhVec;
using nonholonomic::NonholonomicModel;
using nonholonomic::rattle_residual;
using nonholonomic::rattle_step;

}  // namespace

double full_control_time(NonholonomicMethod method, double t_k, double dt) {
  return method == NonholonomicMethod::Rattle ? t_k + 0.5 * dt : t_k;
}

namespace {

NhVec gni_impulse(const FullCoordinateState& state, double dt, const NhVec& u) {
  return u * ((state.dt_prev + dt) / (2.0 * dt));
}

}  // namespace

NewtonStatus full_coordinate_step(const NonholonomicModel& model, NonholonomicMethod method,
                                  const NewtonOptions& newton, double dt, const NhVec& u,
                                  const NhVec* q_prescribed_kp1, NhVec q_kp1,
                                  FullCoordinateState& state) {
  NhVec p_kp1;
  const NewtonStatus st =
      method == NonholonomicMethod::Gni
          ? gni_step(model, dt, state.q, state.p, gni_impulse(state, dt, u), q_kp1, p_kp1,
                     nullptr, newton, q_prescribed_kp1)
          : rattle_step(model, dt, state.q, state.p, u, q_kp1, p_kp1, newton, q_prescribed_kp1);
  if (!st.converged) return st;
  state.q = q_kp1;
  state.p = p_kp1;
  state.dt_prev = dt;
  return st;
}

void full_coordinate_residual(const NonholonomicModel& model, NonholonomicMethod method,
                              const FullCoordinateState& state, double dt, const NhVec& u,
                              const NhVec* q_prescribed_kp1, const ResidualPoint& at,
                              ResidualBlocks& out, bool jacobians, const char* who) {
  const Eigen::Index n = state.q.size(),
                     m = method == NonholonomicMethod::Rattle ? model.num_constraints() : 0;
  if (at.z.size() != n + m || at.delta.size() != 0)
    throw InputError(std::string(who) + " residual: z must have " + std::to_string(n + m) +
                     " entries and delta none (GNI and RATTLE take no state perturbation)");
  if (method == NonholonomicMethod::Gni) {
    NhVec r;
    NhMat J;
    gni_residual(model, dt, state.q, state.p, gni_impulse(state, dt, u), NhVec(at.z), r,
                 jacobians ? &J : nullptr, q_prescribed_kp1);
    out.r = r;
    if (jacobians) out.J_r_z = J;
    return;
  }
  NhUnknown r;
  NhJacobian J;
  rattle_residual(model, dt, state.q, state.p, u, NhUnknown(at.z), r, jacobians ? &J : nullptr,
                  q_prescribed_kp1);
  out.r = r;
  if (jacobians) out.J_r_z = J;
}

}  // namespace marsden::sim::detail
