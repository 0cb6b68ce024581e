// Joint constraints g(x_a, q_a, x_b, q_b) = 0 (paper eq. (17) and its siblings) and their
// Jacobians with respect to each body's world translation and body-frame rotation
// vector: a body perturbed by (dx, dphi) moves to (x + dx, q * exp(dphi)). These are
// 2x the paper's rotational gradient, eq. (49), whose perturbation is (1, dphi / 2).
//
// With Delta = R_a^T (x_b + R_b p_b - x_a) - p_a (child anchor in the parent frame) and
// q_rel = q_a^dagger q_b q_offset^dagger (the joint rotation, identity at zero):
//   fixed        Delta, vec(q_rel)                      6 rows
//   revolute     Delta, P vec(q_rel)                    5 rows (P: the two directions
//   prismatic    P Delta, vec(q_rel)                    5 rows  orthogonal to axis)
//   spherical    Delta                                  3 rows
//   cylindrical  P Delta, P vec(q_rel)                  4 rows
//   planar       axis . Delta, P vec(q_rel)             3 rows
//   universal    Delta, axis . R_rel axis2              4 rows
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "marsden/maximal/model.hpp"

namespace marsden::maximal {

using JointVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
// Rows: constraints; columns: (dx, dphi) of one body.
using JointBlock = Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 6, 6>;
using JointCoords = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1>;
// Rows and columns: (dx, dphi) of the parent, then of the child.
using Mat12 = Eigen::Matrix<double, 12, 12>;
using Vec12 = Eigen::Matrix<double, 12, 1>;

// The world as a body: at the origin, identity orientation, at rest.
const BodyState& world_state();

// g for the joint; `parent` is world_state() for kWorld.
JointVec joint_residual(const Joint& joint, const BodyState& parent, const BodyState& child);

// dg/d(dx, dphi) of the parent and of the child; also g itself when `g` is not null
// (one evaluation shares the rotations).
void joint_jacobians(const Joint& joint, const BodyState& parent, const BodyState& child,
                     JointBlock& G_parent, JointBlock& G_child, JointVec* g = nullptr);

// The same with the bodies' rotation matrices given (R = q.matrix()), for a caller that
// evaluates every joint at one set of poses and so computes each body's matrix once.
JointVec joint_residual(const Joint& joint, const BodyState& parent, const Mat3& R_parent,
                        const BodyState& child, const Mat3& R_child);
void joint_jacobians(const Joint& joint, const BodyState& parent, const Mat3& R_parent,
                     const BodyState& child, const Mat3& R_child, JointBlock& G_parent,
                     JointBlock& G_child, JointVec* g = nullptr);

// d/d(dx, dphi of both bodies) of (G_parent^T lambda; G_child^T lambda): column c is the
// derivative of the constraint force rows when the poses move along perturbation c, i.e.
// the Jacobians of joint_jacobians differentiated once more in the same right-trivialised
// charts (not symmetric). Used for the step residual's Jacobian with respect to the
// previous poses, where G is evaluated.
Mat12 joint_force_derivative(const Joint& joint, const BodyState& parent,
                             const BodyState& child, const JointVec& lambda);

// Child pose that realises the given joint coordinates (forward kinematics); velocities
// are copied from `child`.
BodyState place_child(const Joint& joint, const BodyState& parent, const BodyState& child,
                      const JointCoords& coords);
// Parent pose that realises them with the child where it is (a joint traversed from its
// child); velocities are copied from `parent`.
BodyState place_parent(const Joint& joint, const BodyState& parent, const BodyState& child,
                       const JointCoords& coords);

// The joint coordinates of a child pose that satisfies the joint's constraint: the inverse
// of place_child (angles in (-2 pi, 2 pi], a spherical rotation vector of norm <= 2 pi).
JointCoords joint_coordinates(const Joint& joint, const BodyState& parent,
                              const BodyState& child);

// Coordinate s of a one-degree-of-freedom joint (revolute angle in (-2 pi, 2 pi],
// prismatic slide) and ds/d(dx, dphi) of each body; used by springs, dampers and inputs.
double joint_coordinate(const Joint& joint, const BodyState& parent, const BodyState& child,
                        Vec6* ds_parent, Vec6* ds_child);

// d(ds_parent; ds_child)/d(dx, dphi of both bodies) for a one-degree-of-freedom joint, in
// the charts of joint_force_derivative: what a spring, damper or input force f ds adds to
// the residual's Jacobian with respect to the previous poses.
Mat12 joint_coordinate_derivative(const Joint& joint, const BodyState& parent,
                                  const BodyState& child);

}  // namespace marsden::maximal
