// Velocity (nonholonomic) constraints of one body, A(q) (v, omega) = 0 (model.hpp,
// VelocityConstraint): v the world velocity of the centre of mass, omega the body-frame
// angular velocity. Each row is (a_v, a_omega) with a_v in the world frame and a_omega in
// the body frame, for a direction t (world) and the offset o (world) from the centre of
// mass to the constrained material point: a_v = t, a_omega = R^T (o x t), so the row reads
// t . (v + (R omega) x o). The same columns carry the constraint's force: A^T mu is a
// world force and a body-frame torque, as the step's residual takes them.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "marsden/maximal/model.hpp"

namespace marsden::maximal {

using VelocityRows = Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 2, 6>;

// A(R) for the constraint at the body orientation R. False (rows left unset) where a
// rolling wheel's axle is along the ground normal: lying flat, it has no lowest point.
bool velocity_constraint_rows(const VelocityConstraint& c, const Mat3& R, VelocityRows& A);

// Derivatives with respect to a body-frame rotation vector phi (R exp(phi)), at phi = 0,
// of A w (rows x 3) and of A^T mu (6 x 3), for a velocity w = (v, omega) and multipliers mu
// (one per row). False where velocity_constraint_rows is.
bool velocity_constraint_derivatives(const VelocityConstraint& c, const Mat3& R, const Vec6& w,
                                     const Eigen::Vector2d& mu,
                                     Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 2, 3>& dAw_dphi,
                                     Eigen::Matrix<double, 6, 3>& dAtmu_dphi);

// The largest violation of the model's velocity constraints over one step from `before` to
// `after`: max over rows of |(A(q_k) + A(q_k+1)) / 2 . (v, omega)_k+1| (m/s), the rows the
// step imposes (docs/maximal.md, Nonholonomic constraints); 0 without constraints, NaN where
// a row is undefined at either pose (a wheel lying flat).
double max_velocity_violation(const Model& model, const std::vector<BodyState>& before,
                              const std::vector<BodyState>& after);

}  // namespace marsden::maximal
