// Private helpers of the tree engine shared by its .cpp files.
#pragma once

#include "marsden/tree/data.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree::detail {

bool is_rotation(Transform t);
// Unit twist (omega, v) of a primitive in its own frame; zero for Const.
Vec6 primitive_axis(Transform t);
// The primitive transform by an amount s (m or rad): exp(axis s).
SE3 primitive(Transform t, double s);

// World poses and joint twists S of every joint at q (what constraints and points need).
void joint_poses(const Model& model, Data& data, const VecX& q);
// The same and the spatial velocities V of every joint, at (q, qd).
void joint_kinematics(const Model& model, Data& data, const VecX& q, const VecX& qd);

// World position of a frame's origin (after joint_kinematics).
Vec3 frame_origin(const Model& model, const Data& data, int frame);
Mat3 frame_rotation(const Model& model, const Data& data, int frame);

// Columns of J (3 x n) for the velocity of a point p riding on the frame's joint:
// J.col(coord_i) += sign * (omega_i x p + v_i) for every supporting joint i.
void add_point_jacobian(const Model& model, const Data& data, int frame, const Vec3& p,
                        double sign, MatX& J);
// H += sign * sum_c w_c d2p_c/dq2 for such a point; for joints j before i on its path,
// d2p/dq_j dq_i = omega_j x (omega_i x p + v_i).
void add_point_hessian(const Model& model, const Data& data, int frame, const Vec3& p,
                       const Vec3& w, double sign, MatX& H);
// The same for a direction n (a free vector) fixed in the frame: d n/dq_i = omega_i x n.
void add_direction_jacobian(const Model& model, const Data& data, int frame, const Vec3& n,
                            MatX& J);
void add_direction_hessian(const Model& model, const Data& data, int frame, const Vec3& n,
                           const Vec3& w, MatX& H);

// A generated potential's V, -dV/dq into L_q and, if second_order, -d2V/dq2 into L_qq.
// SolverError naming the library when the object reports a failure.
void add_generated_potential_terms(const GeneratedPotential& p, Data& data, const VecX& q,
                                   bool second_order);

// A generated force's Q and, if derivatives, dQ/dq and dQ/dqd into data.Q, Q_q, Q_v.
void add_generated_force_terms(const GeneratedForce& f, Data& data, const VecX& q,
                               const VecX& qd, bool derivatives);

// Spring potentials (coordinate, frame and generated springs): adds V to data.potential and -V's
// derivatives to L_q and, if second_order, L_qq.
void add_spring_terms(const Model& model, Data& data, const VecX& q, bool second_order);

// Distance between two frame origins with its gradient and, if hessian, its Hessian
// (into the Data's scratch): returns d; grad (n), hess (n x n) overwritten.
double distance_terms(const Model& model, Data& data, int frame_a, int frame_b, VecX& grad,
                      MatX* hess);

// The spatial recursion (after joint_kinematics): adds T, V and the derivatives of the
// kinetic and gravity terms into data (zeroed by the caller).
void spatial_lagrangian(const Model& model, Data& data, bool second_order);

// The paper's recursion, eqs. (15)-(18), from the cache of frame_kinematics (cached) or by
// plain recursion (uncached); same contract as spatial_lagrangian.
void paper_lagrangian(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      bool second_order, bool cached);

// Builds the ancestor lists and allocates the paper's caches up to `order` (0: the lists
// only) on first use, after checking data.memory_limit (InputError beyond it).
void ensure_paper_cache(const Model& model, Data& data, int order);

// Generalized forces with the kinematics of joint_kinematics already at q.
void forces_at_current_kinematics(const Model& model, Data& data, const VecX& q,
                                  const VecX& qd, const VecX& u, bool derivatives);

// The articulated-body factorisation of M(q) + diag(d) (d over all coordinates, in
// data.d_art) with the joint poses already at q: prescribed coordinates are held (their
// joints weld their subtrees to the parent). articulated_solve then gives x = (M + diag
// d)^-1 b over the dynamic coordinates (b and x in data.b_art, data.x_art, indexed by
// coordinate; prescribed entries of x are zero), both O(n) (Featherstone's articulated-body
// recursions in world axes, with zero velocity and gravity).
void articulated_factor(const Model& model, Data& data);
void articulated_solve(const Model& model, Data& data);

// Constraint terms with the joint poses already at q (joint_poses).
void constraints_at_current_kinematics(const Model& model, Data& data, const VecX& q,
                                       const VecX* weight);

}  // namespace marsden::tree::detail
