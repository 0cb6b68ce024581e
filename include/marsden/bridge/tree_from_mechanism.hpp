// A maximal-coordinates mechanism in minimal coordinates: the tree model of the same
// bodies and joints, so that both engines run one description (the maximal paper's
// comparisons, Figs. 5, 6 and 8).
#pragma once

#include "marsden/maximal/setup.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree {

struct MinimalCounterpart {
  Model model;
  VecX q0, qd0;  // the mechanism's state in the tree's coordinates
};

// Each body becomes a Mass (its mass and inertia, centre of mass at its frame) on a frame
// placed by a spanning tree (the joints in their order, each that reaches a new child from a
// placed parent or the world), each of its joints J of parent P as
//   "J_anchor"  Const (p_parent) on P's frame (the world for kWorld),
//   revolute: "J" a rotation about the joint axis (a primitive Rx, Ry or Rz when the axis
//             is a coordinate axis, else one between "J_align" Const frames), coordinate "J";
//   spherical: "J_z", "J_y", "J_x", rotations Rz Ry Rx (Z-Y-X Euler angles, singular at a
//             middle angle of +-pi/2), coordinates "J_z", "J_y", "J_x";
//   the child body's frame, Const (q_offset, -q_offset p_child), named after the body (with
//   "_body" appended when a joint has that name).
// Revolute springs and dampers carry over. A loop joint becomes constraints between its
// two anchors: spherical, a point-to-point constraint; revolute, two point-on-plane
// constraints in the plane normal to its axis, only in a planar mechanism (every revolute
// axis parallel to the loop joint's in the world, every spherical joint absent), where the
// other four rows hold identically and would make the step's Newton matrix singular.
// The state must be at rest (the coordinates are read by maximal::current_joint_coordinates);
// qd0 is zero. Throws InputError for other joint types, couplings, a joint the spanning
// tree could reach only from its child, a non-planar revolute loop or a moving state.
MinimalCounterpart minimal_counterpart(const maximal::Mechanism& mechanism);

}  // namespace marsden::tree
