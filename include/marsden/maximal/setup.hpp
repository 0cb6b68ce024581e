// Initial states: from joint (minimal) coordinates, projection of inconsistent states
// onto the constraints, and builders of the mechanisms of the paper's experiments.
#pragma once

#include <string>
#include <vector>

#include "marsden/description/car.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/model.hpp"

namespace marsden::maximal {

// Places every body reached from the world (or from a root body) through tree joints,
// given each joint's coordinates and rates (size joint_dofs, indexed by joint; loop
// joints are ignored). The velocities are the discrete ones of the interval ending now:
// the pose at coordinates q - dt q_dot is the previous one, so both poses satisfy the
// tree constraints exactly. Root bodies keep their pose and velocity from `reference`; a
// joint the spanning tree reaches from its child places its parent (place_parent).
std::vector<BodyState> state_from_joint_coordinates(const Model& model,
                                                    const std::vector<BodyState>& reference,
                                                    const std::vector<JointCoords>& coords,
                                                    const std::vector<JointCoords>& rates,
                                                    double dt);

// The joints' current coordinates (joint_coordinates of each joint; loop joints included)
// and zero rates, indexed by joint: the starting point of set_joint_state.
std::vector<JointCoords> current_joint_coordinates(const Model& model,
                                                   const std::vector<BodyState>& state);

// The state at the given joint coordinates and rates (indexed by joint, each of size
// joint_dofs; start from current_joint_coordinates to change only some), through
// state_from_joint_coordinates; a mechanism with loops is then projected onto its loop
// constraints (mass-weighted least change), so rates that do not fit the loops are
// adjusted. A coupled joint's coordinate and rate follow its leader's (Model::couplings).
// Throws InputError when the coordinates cannot close the loops.
std::vector<BodyState> set_joint_state(const Model& model, const std::vector<BodyState>& state,
                                       const std::vector<JointCoords>& q,
                                       const std::vector<JointCoords>& qd, double dt);

struct ProjectionReport {
  int iterations = 0;
  double violation = 0.0;  // max |g| after the projection
  bool converged = false;
};

// Moves the poses to satisfy every joint constraint (mass-weighted least change,
// Gauss-Newton, slightly damped so redundant constraints are fine), then
// removes the velocity components that violate the differentiated constraints.
ProjectionReport project_state(const Model& model, std::vector<BodyState>& state,
                               double tolerance = 1e-12, int max_iterations = 50);

struct Mechanism {
  Model model;
  std::vector<BodyState> state;
};

struct ChainOptions {
  JointType joint = JointType::Revolute;  // Revolute (hinge about world y) or Spherical
  double link_length = 1.0;
  double link_mass = 1.0;
  // Radius of the cylindrical links; a small radius gives point-mass-like links.
  double link_radius = 0.05;
  double initial_angle = 0.5;  // first joint's angle (spherical: about y, and 0.2 x)
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
};

// n links hanging from the world, each joined to the previous one at its ends.
Mechanism pendulum_chain(int n, const ChainOptions& options = {});
// n links forming, with a ground segment of the same length, a regular (n + 1)-gon
// hanging from the world; the last link closes the loop to the world (a planar loop
// closed by a revolute joint has redundant constraints).
Mechanism closed_chain(int n, const ChainOptions& options = {});
// k parallelogram four-bar segments stacked below the world, links tilted by
// `tilt` from the vertical; with tilt > pi / 2 the motion passes the singular
// configuration where links and bars are collinear. Each segment closes one loop with
// a revolute joint (redundant constraints).
Mechanism four_bar_chain(int k, double tilt = 0.3, const Vec3& gravity = Vec3(0.0, 0.0, -9.81));
// Nonholonomic vehicles assembled from bodies (docs/maximal.md, Nonholonomic constraints),
// at rest at the origin; set_joint_state or a scene's initial_state gives their rates.
// The Chaplygin sleigh (papers/NOTES.md): one body of the given mass (kg) and inertia
// (kg m^2, about every axis) on the ground plane z = 0 through the planar joint "plane"
// (coordinates x, y, heading), with the skate "skate" at skate_offset (m) along its body x
// axis, unable to slide along body y: v2 + a omega = 0.
Mechanism chaplygin_sleigh(double mass, double inertia, double skate_offset);
// The vertical rolling disk: a uniform disk "disk" of the given mass and radius, axle along
// its body y, held upright by a massless fork (planar joint "plane" to the world at height
// radius, revolute "axle" to the disk), rolling without slip on z = 0 ("rolling").
Mechanism rolling_disk(double mass, double radius);
// A tractor pulling `trailers` trailers (issue 40's scaling case): bodies 1 m long on the
// ground, the tractor on the planar joint "plane", trailer i on a vertical hinge "hitch<i>"
// to the body ahead; each body's axle ("tractor_rear", "axle<i>") cannot slide sideways,
// and the tractor's front axle skate ("tractor_front") rides on the 0.1 kg body
// "steered_axle" (the last body), 0.3 m ahead of the tractor's centre on the prescribed hinge
// "steering" at `steering` (rad; held unless Data::joint_target moves it). Every other skate
// is eliminated at its body, the front one is a loop row, so a step costs O(trailers). At
// rest in a line along -x.
Mechanism trailer_train(int trailers, double steering = 0.0);
// The car of Kelly and Murray (vehicles §5.2.1; nonholonomic::NhCar), at rest with the rear
// axle at the origin, heading along world x: the chassis "chassis" (mass m, yaw inertia K,
// centre of mass at the rear axle) on the planar joint "plane" at height rho; the rear wheel
// "wheel" on the hinge "axle" (body y; its input is NhCar's drive torque f_psi), rolling
// without slip on z = 0 ("rear"); the front wheel set "front" at l ahead, turned by
// `steering` (rad, |steering| < pi/2; sigma = tan(steering)) on the joint "steering", with
// the skate "front" (no lateral slip). "steering" is a hinge about z: with
// steering_inertia = 0 prescribed (held at `steering` unless Data::joint_target moves it);
// with steering_inertia > 0 (kg m^2, below K) free, its input a steering torque, and the
// front set carries that yaw inertia, taken off the chassis's.
// The wheel and the front set carry no mass: the Lagrangian is NhCar's (setup.cpp).
Mechanism car(const CarParams& p, double steering, double steering_inertia = 0.0);
// The snakeboard (vehicles §5.2.2; nonholonomic::Snakeboard), at rest at the origin, board
// along world x: the board "board" (mass m) on the planar joint "plane"; the rotor "rotor"
// (yaw inertia I) on the hinge "rotor" at the centre; the wheel sets "back" at -l and
// "front" at +l along the board (yaw inertia J each) on the hinges "steering" (turned by
// phi) and "steering_front" (coupled to -phi, the coupling "mirror"), each with a skate.
// The hinges "rotor" and "steering" take the torques of Snakeboard's controls. Needs
// m l^2 > I + 2 J: the board's own yaw inertia is what remains of m l^2 (setup.cpp).
Mechanism snakeboard(double mass, double half_length, double rotor_inertia,
                     double wheel_inertia);
// Uniform solids for free bodies (contact scenes, tests and the contact experiment): a box of
// the given half extents (m) and a solid sphere, mass in kg, inertia about the centre.
Body solid_box(const std::string& name, double mass, const Vec3& half_extents);
Body solid_sphere(const std::string& name, double mass, double radius);

// A Minitaur-like leg: two coaxial hip motors (joints 0 and 1, world-fixed hip), upper and
// lower links joined at the foot: a closed five-bar loop.
Mechanism minitaur_leg(double hip_half_angle = 0.5);

}  // namespace marsden::maximal
