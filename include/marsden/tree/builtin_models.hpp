// Ready-made tree models: the n-link pendulum of the tree paper's Fig. 3 (the benchmark
// system), a four-bar linkage closed by constraints, and the marionette of §VIII. Every
// builder validates its parameters and throws InputError naming the offending one.
// SI units throughout; the world's z axis points up.
#pragma once

#include "marsden/tree/data.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree {

struct PendulumParams {
  double length = 1.0;                // m, every link
  double mass = 1.0;                  // kg, at each link's end
  Mat3 link_inertia = Mat3::Zero();   // kg m^2 about the mass; zero: point masses
  double damping = 0.0;               // N m s/rad on every joint coordinate
};

// A planar chain in the world y-z plane hanging along -z: link i turns about x by
// coordinate "q<i>" (i = 1..n, frame "link<i>") and carries its mass on the fixed frame
// "mass<i>" = Tz(-length). Gravity (0, 0, -9.81).
Model n_link_pendulum(int n, const PendulumParams& p = {});
Model double_pendulum(const PendulumParams& p = {});

struct FourBarParams {
  // Link lengths, m. The defaults form a crank-rocker (Grashof: crank + coupler <=
  // rocker + ground), so the crank turns fully.
  double crank = 1.0, coupler = 2.0, rocker = 1.5, ground = 2.0;
  double density = 1.0;      // kg/m, every link is a uniform rod
  double rod_radius = 0.01;  // m, for the rods' inertia about their own axes
  double damping = 0.0;      // N m s/rad on every joint coordinate
};

// A four-bar linkage in the world y-z plane: ground pivots A = (0, 0, 0) and
// B = (0, ground, 0); coordinates "crank" (about x at A), "coupler" (relative to the
// crank, at its end) and "rocker" (about x at B). Each link lies along its frame's +y
// axis. The loop closes where the coupler's end ("coupler_end") meets the rocker's end
// ("rocker_end"), imposed by two point-on-plane constraints ("closure_y", "closure_z",
// normals along rocker_end's y and z axes): a point-to-point constraint would add an x row
// that vanishes identically in the plane and make the step's Newton matrix singular.
Model four_bar(const FourBarParams& p = {});

// An assembled state of four_bar(p) from the crank angle (rad, from +y towards +z) and
// rate (rad/s): q, qd ordered as the model's coordinates (crank, coupler, rocker). branch
// (+1 or -1) picks one of the two assemblies: the side of the line from the crank's end to
// B on which the rocker's end lies. Throws InputError when the linkage cannot be assembled
// at that crank angle, or when it sits at a singular (locked) configuration where the
// velocities are undetermined.
struct FourBarState {
  VecX q, qd;
};
FourBarState four_bar_state(const FourBarParams& p, double crank_angle, double crank_rate,
                            int branch = 1);

struct MarionetteParams {
  double total_mass = 2.0;      // kg, shared between the segments in fixed proportions
  double height = 0.6;          // m, standing height; segment sizes scale with it
  double string_length = 0.5;   // m, every string
  double damping = 0.1;         // N m s/rad (N s/m on the torso translations), all joints
};

// The marionette of the tree paper §VIII (after trep's example): a human figure whose
// pelvis ("torso") floats in space. Dynamic coordinates (36):
//   torso: torso_tx, torso_ty, torso_tz, torso_rz, torso_ry, torso_rx        6
//   waist: waist_rz, waist_ry, waist_rx; neck: neck_rz, neck_ry, neck_rx     6
//   per arm (left_, right_): shoulder_rz/ry/rx, elbow, wrist_ry, wrist_rx     2 x 6
//   per leg (left_, right_): hip_rz/ry/rx, knee, ankle_ry, ankle_rx           2 x 6
// Prescribed coordinates (15): the puppeteer's end of each of the 5 strings (head,
// left_hand, right_hand, left_knee, right_knee) as <string>_x, _y, _z translations from
// the world. Each string is a distance constraint "<string>" of length string_length
// between frame "<string>_end" and the attachment frame "<string>_attach" on the body.
// 51 coordinates in all. The figure faces +x with its left on +y; at q = 0 it stands
// upright with the pelvis at the world origin and the arms hanging.
Model marionette(const MarionetteParams& p = {});

// A consistent configuration of a model made by marionette(): the body posed by the
// dynamic coordinates of q and each string end straight above its attachment point at the
// string's length, so that every constraint holds. Throws InputError for another model.
VecX marionette_configuration(const Model& model, const VecX& q);
// The same with the body at q = 0: upright, pelvis at the origin.
VecX marionette_rest_configuration(const Model& model);

}  // namespace marsden::tree
