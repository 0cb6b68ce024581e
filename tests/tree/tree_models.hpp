// Models the generic tree suites run over: random trees mixing every primitive transform,
// with full inertias, springs, dampers, inputs and each kind of constraint.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::tree::test {

struct TreeCase {
  std::string name;
  std::function<Model()> make;
  // A configuration satisfying the constraints, and a consistent velocity (zero if there
  // are constraints), around which the checks run.
  std::function<void(const Model&, std::mt19937&, Eigen::VectorXd&, Eigen::VectorXd&)> state;
};

// The chain of bench/peers: n links of 1 m with 1 kg balls (inertia 1e-3 kg m^2), released
// from rest with the first joint at 0.3 rad (peers_chain_q0).
inline Model peers_chain(int n) {
  PendulumParams p;
  p.link_inertia = 1e-3 * Mat3::Identity();
  return n_link_pendulum(n, p);
}

inline Eigen::VectorXd peers_chain_q0(int n) {
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(n);
  q0[0] = 0.3;
  return q0;
}

inline Mat3 random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mat3 A;
  for (int i = 0; i < 9; ++i) A(i) = u(rng);
  return 0.05 * (A * A.transpose() + 0.2 * Mat3::Identity());
}

// A random tree of `joints` driven frames mixing translations and rotations about every
// axis, fixed primitives and constant transforms, with branches and armature.
inline Model random_tree(unsigned seed, int joints, bool extras) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> prim(0, 5);
  ModelBuilder b;
  std::vector<int> attach{kWorld};
  for (int k = 0; k < joints; ++k) {
    const int parent = attach[std::uniform_int_distribution<int>(0, int(attach.size()) - 1)(rng)];
    SE3 c;
    c.R = SO3::exp(Vec3(u(rng), u(rng), u(rng))).R;
    c.x = 0.5 * Vec3(u(rng), u(rng), u(rng));
    // Appended: GCC 12's -Wrestrict misfires on "c" + std::to_string(k).
    const auto name = [k](const char* prefix) {
      return std::string(prefix).append(std::to_string(k));
    };
    const int offset = b.add_const_frame(name("c"), parent, c);
    const int fixed = b.add_fixed_frame(name("f"), offset,
                                        static_cast<Transform>(prim(rng)), 0.3 * u(rng));
    const int driven =
        b.add_joint_frame(name("j"), fixed, static_cast<Transform>(k % 6), name("q"));
    b.add_mass(driven, 0.5 + 0.5 * (u(rng) + 1.0), 0.2 * Vec3(u(rng), u(rng), u(rng)),
               random_inertia(rng));
    // Rotor inertia (MJCF armature) on every other coordinate, so that each check of the
    // Lagrangian, its Jacobians and the articulated solve covers it.
    if (k % 2 == 1) b.set_armature(k, 0.03 * (k + 1));
    attach.push_back(driven);
  }
  b.set_gravity(Vec3(0.3, -0.2, -9.81));
  if (extras) {
    b.add_coordinate_spring(0, 3.0, 0.2);
    b.add_frame_spring(attach[1], attach.back(), 5.0, 0.4);
    b.add_coordinate_damper(1, 0.3);
    b.add_frame_damper(attach[2], attach.back(), 0.2);
    b.add_coordinate_force_input(0);
    b.add_wrench_input(attach.back(), true);
    b.add_wrench_input(attach[2], false);
  }
  return b.build();
}

// A branched tree turning about the world z axis (the gravity axis): coordinate 0, "yaw",
// is cyclic, so a variational integrator conserves its momentum (discrete Noether); springs
// couple the branches; the state moves every coordinate.
struct CyclicTree {
  Model model;
  Eigen::VectorXd q0, qd0;
};

inline CyclicTree cyclic_yaw_tree() {
  ModelBuilder b;
  std::mt19937 rng(5);
  const int yaw = b.add_joint_frame("yaw", kWorld, Transform::Rz, "yaw");
  const int arm = b.add_const_frame("arm", yaw, SE3{SO3::exp(Vec3(0.3, 0.1, 0.2)).R, Vec3(0.4, 0, 0)});
  const int a1 = b.add_joint_frame("a1", arm, Transform::Ry, "a1");
  b.add_mass(a1, 1.0, Vec3(0.1, 0.0, -0.5), random_inertia(rng));
  const int a2 = b.add_joint_frame("a2", a1, Transform::Tz, "a2");
  b.add_mass(a2, 0.5, Vec3(0.0, 0.2, 0.0), random_inertia(rng));
  const int a3 = b.add_joint_frame("a3", yaw, Transform::Rx, "a3");
  b.add_mass(a3, 0.7, Vec3(0.0, 0.3, -0.2), random_inertia(rng));
  b.add_coordinate_spring(b.coord_index("a2"), 20.0, 0.1);
  b.add_frame_spring(a2, a3, 3.0, 0.2);
  CyclicTree tree{b.build(), Eigen::VectorXd(4), Eigen::VectorXd(4)};
  tree.q0 << 0.0, 0.4, 0.1, -0.3;
  tree.qd0 << 1.0, 0.5, -0.2, 0.8;
  return tree;
}

// A double pendulum in the y-z plane (1 m links, 1 kg point masses), optionally with a
// damper on the first joint and a torque input on the second.
inline Model double_pendulum_model(double damping = 0.0, bool input = false) {
  ModelBuilder b;
  const int j1 = b.add_joint_frame("j1", kWorld, Transform::Rx, "q1");
  const int e1 = b.add_fixed_frame("e1", j1, Transform::Tz, -1.0);
  b.add_mass(e1, 1.0, Vec3::Zero(), Mat3::Zero());
  const int j2 = b.add_joint_frame("j2", e1, Transform::Rx, "q2");
  const int e2 = b.add_fixed_frame("e2", j2, Transform::Tz, -1.0);
  b.add_mass(e2, 1.0, Vec3::Zero(), Mat3::Zero());
  if (damping > 0.0) b.add_coordinate_damper(0, damping);
  if (input) b.add_coordinate_force_input(1);
  return b.build();
}

}  // namespace marsden::tree::test
