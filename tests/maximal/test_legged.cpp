// Legged robots of example-robot-data standing on the ground in the maximal engine with
// hard contact (docs/contact.md, Legged robots): Unitree's A1 and Go1 and ANYbotics'
// ANYmal C, their collision geometry read from the URDF, held in a stance by joint springs
// and dampers (PD control), dropped 5 mm and pushed. Each checks what standing means: every
// step converges, the feet alone touch the ground, the contact forces close the robot's
// linear momentum balance at every step (joint forces are internal), no contact sinks
// deeper than the compliance allows, and the base comes back to rest, upright, at its height
// after the push.
#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "maximal/contact_checks.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/urdf.hpp"

namespace marsden::maximal {
namespace {

struct Robot {
  std::string file;      // under example-robot-data's robots/
  double kp, kd;         // joint stiffness (N m/rad) and damping (N m s/rad)
  double push;           // N along x on the base for 0.1 s
  int left_out;          // cylinders the contact does not take yet
};

// The stance: A1 and Go1 with thighs at 0.8 rad and calves at -1.5 rad, ANYmal with its
// hips' flexion at +-0.4 rad and knees at -+0.8 rad (front, hind).
double stance(const std::string& joint) {
  if (joint.find("thigh") != std::string::npos) return 0.8;
  if (joint.find("calf") != std::string::npos) return -1.5;
  const bool front = joint.size() > 1 && joint[1] == 'F';
  if (joint.find("HFE") != std::string::npos) return front ? 0.4 : -0.4;
  if (joint.find("KFE") != std::string::npos) return front ? -0.8 : 0.8;
  return 0.0;
}

void stands(const Robot& robot) {
  const std::filesystem::path path = std::filesystem::path(MARSDEN_ROBOTS_DIR) / robot.file;
  const UrdfModel urdf = io::read_urdf(path);
  const Mechanism mech = mechanism_from_urdf(urdf, Vec3(0.0, 0.0, -9.81), true);
  std::vector<std::string> left_out;
  Contacts contacts;
  contacts.shapes = collision_shapes_from_urdf(urdf, true, 0.8, &left_out);
  EXPECT_EQ(int(left_out.size()), robot.left_out);
  contacts.surfaces.push_back({"ground", geometry::HalfSpace(Vec3::UnitZ(), 0.0), 0.0});
  std::vector<Joint> joints = mech.model.joints();
  std::vector<JointCoords> q = current_joint_coordinates(mech.model, mech.state), qd;
  for (std::size_t j = 0; j < joints.size(); ++j) {
    joints[j].rest = stance(joints[j].name);
    joints[j].stiffness = robot.kp;
    joints[j].damping = robot.kd;
    q[j](0) = joints[j].rest;
    qd.push_back(JointCoords::Zero(1));
  }
  const Model model(mech.model.bodies(), joints, mech.model.gravity(), {}, contacts);
  StepOptions options;
  options.dt = 0.01;
  std::vector<BodyState> state = set_joint_state(model, mech.state, q, qd, options.dt);
  const Data placed(model, state);
  double lowest = 1e9;
  for (const ContactState& c : placed.contact) lowest = std::min(lowest, c.phi);
  for (BodyState& b : state) b.x.z() += 0.005 - lowest;
  Data data(model, state);
  double weight = 0.0;
  for (const Body& b : model.bodies()) weight += b.mass * 9.81;
  auto momentum = [&] {
    Vec3 p = Vec3::Zero();
    for (int b = 0; b < model.num_bodies(); ++b) p += model.bodies()[b].mass * data.state[b].v;
    return p;
  };

  double z_before_push = 0.0, worst_sink = -1.0;
  for (int k = 0; k < 1000; ++k) {
    const double t = k * options.dt;
    data.body_force[0] = t >= 5.0 && t < 5.1 ? Vec3(robot.push, 0.0, 0.0) : Vec3::Zero();
    const Vec3 p_k = momentum();
    const StepStatus status = step(model, data, options);
    ASSERT_TRUE(status.ok()) << robot.file << " at t = " << t << ": " << describe(status.failure);
    // The discrete momentum balance: (p_kp1 - p_k) / dt = weight + push + contact forces.
    Vec3 contact = Vec3::Zero();
    for (const ContactState& c : data.contact) contact += c.force;
    const Vec3 balance = (momentum() - p_k) / options.dt - Vec3(0.0, 0.0, -weight) -
                         data.body_force[0] - contact;
    ASSERT_LT(balance.norm(), 1e-6 * weight) << robot.file << " at t = " << t;
    worst_sink = std::max(worst_sink, test::excess_penetration(model, data, options));
    for (std::size_t i = 0; i < data.contact.size(); ++i) {
      const ContactState& c = data.contact[i];
      // Only the feet (spheres) touch the ground.
      if (c.normal_force > 1e-6) {
        std::string link = model.contacts().shapes[model.contact_points()[i].shape].name;
        for (char& ch : link) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        EXPECT_NE(link.find("foot"), std::string::npos) << robot.file << ": " << link;
      }
    }
    if (k == 499) z_before_push = data.state[0].x.z();
  }
  EXPECT_LE(worst_sink, 0.0) << robot.file;
  // Upright and back at its height after the push.
  const Vec3 up = data.state[0].q.matrix() * Vec3::UnitZ();
  EXPECT_GT(up.z(), 0.99) << robot.file;
  EXPECT_NEAR(data.state[0].x.z(), z_before_push, 5e-3) << robot.file;
  EXPECT_LT(data.state[0].v.norm(), 1e-3) << robot.file;
}

TEST(Legged, A1Stands) { stands({"a1_description/urdf/a1.urdf", 80.0, 2.0, 50.0, 8}); }
TEST(Legged, Go1Stands) { stands({"go1_description/urdf/go1.urdf", 80.0, 2.0, 50.0, 16}); }
TEST(Legged, AnymalCStands) {
  stands({"anymal_c_simple_description/urdf/anymal.urdf", 400.0, 10.0, 300.0, 29});
}

}  // namespace
}  // namespace marsden::maximal
