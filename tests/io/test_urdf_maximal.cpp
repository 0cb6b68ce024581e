// URDF descriptions in maximal coordinates (marsden/urdf.hpp maximal::mechanism_from_urdf), against the
// tree engine's reading of the same file.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/joints.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/tree/midpoint.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::io {
namespace {

const std::filesystem::path kExamples =
    std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf";
const Vec3 kGravity(0.0, 0.0, -9.81);

std::string robot(const std::string& body) { return "<robot name=\"r\">" + body + "</robot>"; }

TEST(UrdfMaximal, DoublePendulumIsConsistentAtSetUp) {
  const maximal::Mechanism m =
      maximal::mechanism_from_urdf(read_urdf(kExamples / "double_pendulum.urdf"), kGravity);
  ASSERT_EQ(m.model.num_bodies(), 2);  // the massless base is the world
  ASSERT_EQ(m.model.num_joints(), 2);
  EXPECT_EQ(m.model.bodies()[0].name, "upper");
  EXPECT_EQ(m.model.joints()[1].name, "elbow");
  EXPECT_EQ(m.model.joints()[0].parent, maximal::kWorld);
  EXPECT_LT(maximal::max_constraint_violation(m.model, m.state), 1e-15);
  // Centres of mass straight below the shoulder, at rest.
  EXPECT_TRUE(m.state[0].x.isApprox(Vec3(0, 0, -0.5)));
  EXPECT_TRUE(m.state[1].x.isApprox(Vec3(0, 0, -1.4)));
  EXPECT_DOUBLE_EQ(m.model.bodies()[1].inertia(0, 0), 0.027);
}

// Every revolute joint reads 0 at the URDF's zero configuration, whatever the signs of the
// bodies' quaternions would have been (a coordinate of 2 pi would start springs and
// <mimic> couplings far from their zero): a chain of 24 links with large origin rotations.
TEST(UrdfMaximal, RevoluteCoordinatesReadZeroAtTheZeroConfiguration) {
  std::string body = R"(<link name="l0"/>)";
  const std::string inertial = R"(<inertial><origin xyz="0.1 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.03"/></inertial>)";
  for (int i = 1; i <= 24; ++i) {
    const double a = 2.9 * std::sin(1.7 * i), b = 2.9 * std::cos(2.3 * i), c = 3.0 * std::sin(0.9 * i);
    body += "<link name=\"l" + std::to_string(i) + "\">" + inertial + "</link>";
    body += "<joint name=\"j" + std::to_string(i) + "\" type=\"continuous\"><parent link=\"l" +
            std::to_string(i - 1) + "\"/><child link=\"l" + std::to_string(i) +
            "\"/><origin xyz=\"0.2 0 0\" rpy=\"" + std::to_string(a) + " " + std::to_string(b) + " " +
            std::to_string(c) + "\"/><axis xyz=\"0 0 1\"/></joint>";
  }
  const maximal::Mechanism m = maximal::mechanism_from_urdf(parse_urdf(robot(body), "chain.urdf"), kGravity);
  for (const maximal::Joint& j : m.model.joints()) {
    const maximal::BodyState parent = j.parent == maximal::kWorld ? maximal::BodyState() : m.state[j.parent];
    EXPECT_NEAR(maximal::joint_coordinate(j, parent, m.state[j.child], nullptr, nullptr), 0.0, 1e-12) << j.name;
  }
}

// Angle of the shoulder after `duration` from (shoulder, elbow) = (q1, 0) at rest.
double maximal_shoulder_angle(double q1, double dt, double duration) {
  maximal::Mechanism m = maximal::mechanism_from_urdf(read_urdf(kExamples / "double_pendulum.urdf"), kGravity);
  std::vector<maximal::JointCoords> q(2, maximal::JointCoords::Zero(1)), qd = q;
  q[0](0) = q1;
  maximal::Data data(m.model,
                     maximal::state_from_joint_coordinates(m.model, m.state, q, qd, dt));
  maximal::StepOptions options;
  options.dt = dt;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    const maximal::StepStatus st = maximal::step(m.model, data, options);
    EXPECT_TRUE(st.ok()) << maximal::describe(st.failure);
    if (!st.ok()) break;
  }
  EXPECT_LT(maximal::max_constraint_violation(m.model, data.state), 1e-9);
  return maximal::joint_coordinate(m.model.joints()[0], maximal::world_state(), data.state[0],
                                   nullptr, nullptr);
}

double tree_shoulder_angle(double q1, double dt, double duration) {
  const tree::Model model = tree::model_from_urdf(read_urdf(kExamples / "double_pendulum.urdf"));
  tree::Data data(model);
  tree::VecX q0 = tree::VecX::Zero(2);
  q0[model.coord_index("shoulder")] = q1;
  tree::TreeState x = tree::midpoint_initial_state(model, data, 0.0, q0, tree::VecX::Zero(2));
  tree::TreeState next;
  const tree::VecX none(0);
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    const NewtonStatus st = tree::midpoint_step(model, data, {}, dt, x, none, none, next);
    EXPECT_TRUE(st.converged);
    x = next;
  }
  return x.q[model.coord_index("shoulder")];
}

// The maximal VI is first order, the tree midpoint second order: their difference after
// 0.5 s shrinks like dt.
TEST(UrdfMaximal, DoublePendulumAgreesWithTheTreeEngineToFirstOrder) {
  const double q1 = 0.5, duration = 0.5;
  const double reference = tree_shoulder_angle(q1, 1e-4, duration);
  const double e2 = std::abs(maximal_shoulder_angle(q1, 2e-3, duration) - reference);
  const double e1 = std::abs(maximal_shoulder_angle(q1, 1e-3, duration) - reference);
  EXPECT_NEAR(tree_shoulder_angle(q1, 1e-3, duration), reference, 1e-4);
  EXPECT_LT(e1, 2e-3);  // 5.5e-4 rad when written
  EXPECT_GT(e2 / e1, 1.6);
  EXPECT_LT(e2 / e1, 2.5);
}

// Off-axis joint origins, rotated inertials and a prismatic joint: the joints hold at the
// zero configuration, and a massless tool frame welded to a link merges into its body.
TEST(UrdfMaximal, SkewJointsAndMergedFramesAreConsistentAtSetUp) {
  const UrdfModel urdf = parse_urdf(robot(R"(<link name="base"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.5 1.1"/><axis xyz="0.2 -0.7 0.4"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <link name="a"><inertial><origin xyz="0.4 0.1 -0.2" rpy="-0.6 0.2 0.9"/>
        <mass value="1.7"/><inertia ixx="0.5" ixy="0.05" ixz="-0.03" iyy="0.4" iyz="0.02" izz="0.3"/>
      </inertial></link>
      <joint name="tool_fix" type="fixed"><parent link="a"/><child link="tool"/>
        <origin xyz="0 0 -0.7" rpy="0.1 0.2 0.3"/></joint>
      <link name="tool"/>
      <joint name="j2" type="prismatic"><parent link="tool"/><child link="b"/>
        <origin xyz="0.2 0 0" rpy="0 0.4 0"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <link name="b"><inertial><origin xyz="0 0.1 0"/><mass value="0.3"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>)"),
                                    "skew.urdf");
  const maximal::Mechanism m = maximal::mechanism_from_urdf(urdf, kGravity);
  ASSERT_EQ(m.model.num_bodies(), 2);
  ASSERT_EQ(m.model.num_joints(), 2);
  EXPECT_EQ(m.model.joints()[1].parent, 0);
  EXPECT_LT(maximal::max_constraint_violation(m.model, m.state), 1e-14);

  // A few steps keep the joints: axes and anchors are where the constraints expect them.
  maximal::Data data(m.model, m.state);
  maximal::StepOptions options;
  options.dt = 0.01;
  for (int k = 0; k < 20; ++k) ASSERT_TRUE(maximal::step(m.model, data, options).ok());
  EXPECT_LT(maximal::max_constraint_violation(m.model, data.state), 1e-9);
  EXPECT_GT((data.state[0].x - m.state[0].x).norm(), 1e-4);  // it moved
}

TEST(UrdfMaximal, MassiveRootIsTheWorldOrAFreeBody) {
  const UrdfModel urdf = parse_urdf(robot(R"(<link name="base"><inertial><mass value="2"/>
        <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="arm"/>
        <origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint>
      <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
        <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>)"),
                                    "root.urdf");
  const maximal::Mechanism fixed = maximal::mechanism_from_urdf(urdf, kGravity);
  ASSERT_EQ(fixed.model.num_bodies(), 1);
  ASSERT_EQ(fixed.model.num_joints(), 1);
  EXPECT_EQ(fixed.model.joints()[0].parent, maximal::kWorld);
  EXPECT_LT(maximal::max_constraint_violation(fixed.model, fixed.state), 1e-15);
  const maximal::Mechanism floating = maximal::mechanism_from_urdf(urdf, kGravity, true);
  ASSERT_EQ(floating.model.num_bodies(), 2);
  ASSERT_EQ(floating.model.num_joints(), 1);
  EXPECT_EQ(floating.model.joints()[0].parent, 0);
  EXPECT_EQ(floating.model.bodies()[0].mass, 2.0);
  EXPECT_LT(maximal::max_constraint_violation(floating.model, floating.state), 1e-15);
}

// A joint that moves only massless links has no determined acceleration in either engine:
// an InputError naming it, unless such joints are welded, which leaves the rest as a file
// with those joints fixed describes it.
TEST(UrdfMaximal, JointThatMovesNoMassIsAnInputErrorOrWelded) {
  const std::string links = R"(<link name="base"/>
      <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.01"/></inertial></link>
      <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/>
        <axis xyz="0 1 0"/></joint>
      <link name="finger"/><link name="tip"/>
      <joint name="tip_fixed" type="fixed"><parent link="finger"/><child link="tip"/></joint>)";
  const UrdfModel urdf = parse_urdf(robot(links + R"(
      <joint name="hand" type="continuous"><parent link="arm"/><child link="finger"/>
        <origin xyz="0 0 -1"/><axis xyz="1 0 0"/></joint>)"), "hand.urdf");
  auto message = [](auto convert) {
    try {
      convert();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const std::string& msg :
       {message([&] { maximal::mechanism_from_urdf(urdf, kGravity); }),
        message([&] { tree::model_from_urdf(urdf); })}) {
    EXPECT_NE(msg.find("joint \"hand\" moves no mass"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"massless_joints\": \"weld\""), std::string::npos) << msg;
  }
  std::vector<std::string> welded;
  const UrdfModel fixed = weld_joints_moving_no_mass(urdf, &welded);
  EXPECT_EQ(welded, std::vector<std::string>{"hand"});
  const UrdfModel by_hand = parse_urdf(robot(links + R"(
      <joint name="hand" type="fixed"><parent link="arm"/><child link="finger"/>
        <origin xyz="0 0 -1"/></joint>)"), "fixed.urdf");
  const maximal::Mechanism a = maximal::mechanism_from_urdf(fixed, kGravity);
  const maximal::Mechanism b = maximal::mechanism_from_urdf(by_hand, kGravity);
  ASSERT_EQ(a.model.num_bodies(), 1);
  ASSERT_EQ(b.model.num_bodies(), 1);
  EXPECT_EQ(a.model.bodies()[0].mass, b.model.bodies()[0].mass);
  EXPECT_TRUE(a.model.bodies()[0].inertia.isApprox(b.model.bodies()[0].inertia, 1e-15));
  EXPECT_EQ(tree::model_from_urdf(fixed).num_coords(), 1);

  // A <mimic> group moves no mass only when none of its joints does: a massless finger
  // following the massless hand is welded with it; one following the arm is determined.
  const std::string finger = R"(<link name="finger2"/>
      <joint name="finger2" type="continuous"><parent link="finger"/><child link="finger2"/>
        <axis xyz="1 0 0"/><mimic joint="LEADER" multiplier="2"/></joint>)";
  auto with_leader = [&](const std::string& leader) {
    std::string text = finger;
    text.replace(text.find("LEADER"), 6, leader);
    return parse_urdf(robot(links + text + R"(
        <joint name="hand" type="continuous"><parent link="arm"/><child link="finger"/>
          <origin xyz="0 0 -1"/><axis xyz="1 0 0"/></joint>)"), "mimic.urdf");
  };
  std::vector<std::string> names;
  for (const int j : joints_moving_no_mass(with_leader("hand"))) names.push_back(with_leader("hand").joints[j].name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"finger2", "hand"}));
  EXPECT_EQ(tree::model_from_urdf(weld_joints_moving_no_mass(with_leader("hand"))).num_coords(), 1);
  const UrdfModel follows_arm = with_leader("shoulder");
  std::vector<std::string> alone;
  for (const int j : joints_moving_no_mass(follows_arm)) alone.push_back(follows_arm.joints[j].name);
  EXPECT_EQ(alone, std::vector<std::string>{"hand"});
}

// Joint coordinates after `duration` from q0 at rest, in each engine.
std::vector<double> maximal_coordinates(const UrdfModel& urdf, const std::vector<double>& q0,
                                        double dt, double duration) {
  maximal::Mechanism m = maximal::mechanism_from_urdf(urdf, kGravity);
  const int nj = m.model.num_joints();
  std::vector<maximal::JointCoords> q(nj, maximal::JointCoords::Zero(1)), qd = q;
  for (int j = 0; j < nj; ++j) q[j](0) = q0[j];
  maximal::Data data(m.model, maximal::state_from_joint_coordinates(m.model, m.state, q, qd, dt));
  maximal::StepOptions options;
  options.dt = dt;
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    const maximal::StepStatus st = maximal::step(m.model, data, options);
    EXPECT_TRUE(st.ok()) << "step " << k << ": " << maximal::describe(st.failure);
    if (!st.ok()) break;
  }
  EXPECT_LT(maximal::max_constraint_violation(m.model, data.state), 1e-9);
  std::vector<double> out;
  for (const maximal::Joint& j : m.model.joints()) {
    const maximal::BodyState parent = j.parent == maximal::kWorld ? maximal::world_state() : data.state[j.parent];
    out.push_back(maximal::joint_coordinate(j, parent, data.state[j.child], nullptr, nullptr));
  }
  return out;
}

std::vector<double> tree_coordinates(const UrdfModel& urdf, const std::vector<std::string>& names,
                                     const std::vector<double>& q0, double dt, double duration) {
  const tree::Model model = tree::model_from_urdf(urdf);
  tree::Data data(model);
  tree::VecX q = tree::VecX::Zero(model.num_coords());
  for (std::size_t j = 0; j < names.size(); ++j) q[model.coord_index(names[j])] = q0[j];
  tree::TreeState x = tree::midpoint_initial_state(model, data, 0.0, q, tree::VecX::Zero(q.size()));
  tree::TreeState next;
  const tree::VecX none(0);
  const int steps = static_cast<int>(std::lround(duration / dt));
  for (int k = 0; k < steps; ++k) {
    EXPECT_TRUE(tree::midpoint_step(model, data, {}, dt, x, none, none, next).converged);
    x = next;
  }
  std::vector<double> out;
  for (const std::string& name : names) out.push_back(x.q[model.coord_index(name)]);
  return out;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// Degenerate maximal bodies (docs/maximal.md), as in the human and iCub files: a hip of
// three revolute joints about one centre through two massless links and a thigh that is a
// point mass off its joint's axis (the foot, off the thigh's line, keeps the leg's inertia
// about that line away from zero). Their blocks of the Newton system are singular; the step treats them exactly and agrees with the tree engine (no
// such limitation) to first order.
TEST(UrdfMaximal, MasslessLinksAndPointMassesAgreeWithTheTreeEngineToFirstOrder) {
  const UrdfModel urdf = parse_urdf(robot(R"(<link name="pelvis"/>
      <link name="virtual_1"/><link name="virtual_2"/>
      <link name="thigh"><inertial><origin xyz="0.1 0 -0.4"/><mass value="3"/>
        <inertia ixx="0" iyy="0" izz="0"/></inertial></link>
      <link name="foot"><inertial><origin xyz="0 0.2 -0.05"/><mass value="1"/>
        <inertia ixx="0.002" iyy="0.001" izz="0.002"/></inertial></link>
      <joint name="hip_z" type="continuous"><parent link="pelvis"/><child link="virtual_1"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="hip_x" type="continuous"><parent link="virtual_1"/><child link="virtual_2"/>
        <axis xyz="1 0 0"/></joint>
      <joint name="hip_y" type="continuous"><parent link="virtual_2"/><child link="thigh"/>
        <axis xyz="0 -1 0"/></joint>
      <joint name="ankle" type="continuous"><parent link="thigh"/><child link="foot"/>
        <origin xyz="0 0 -0.8"/><axis xyz="1 0 0"/></joint>)"), "leg.urdf");
  const maximal::Mechanism m = maximal::mechanism_from_urdf(urdf, kGravity);
  ASSERT_EQ(m.model.num_bodies(), 4);
  EXPECT_EQ(m.model.degenerate_rows().size(), 15u);  // 6 + 6 + 3
  const std::vector<std::string> names = {"hip_z", "hip_x", "hip_y", "ankle"};
  const std::vector<double> q0 = {0.3, 0.4, 0.6, -0.5};
  const double duration = 0.5;
  const std::vector<double> reference = tree_coordinates(urdf, names, q0, 1e-4, duration);
  const double e2 = max_difference(maximal_coordinates(urdf, q0, 2e-3, duration), reference);
  const double e1 = max_difference(maximal_coordinates(urdf, q0, 1e-3, duration), reference);
  // The second-order reference is 100 times closer to the solution than the maximal runs.
  EXPECT_LT(max_difference(tree_coordinates(urdf, names, q0, 1e-3, duration), reference), 0.1 * e1);
  EXPECT_LT(e1, 1e-2);
  EXPECT_GT(e2 / e1, 1.6);
  EXPECT_LT(e2 / e1, 2.5);
}

}  // namespace
}  // namespace marsden::io
