// A tractor with five trailers changes lane: its front axle's hinge "steering" is a
// prescribed joint (docs/maximal.md, Prescribed joints), turned through one period of
// 0.08 sin(2 pi t / 6) rad while the train rolls at 2 m/s, then held straight. Each step
// imposes the angle at its end (Data::joint_target) and reports the torque that turned the
// axle (Data::drive_force). Prints the tractor's sideways shift, the largest steering
// torque and, 14 s after the stroke, how far each trailer is from the line of the tractor's
// rear axle. Twin of examples/python/lane_change.py. Exits 1 unless the train moved over
// 3 m sideways and every trailer is back in line to 1e-6 m.
// Usage: lane_change
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include <marsden/maximal/integrator.hpp>
#include <marsden/maximal/setup.hpp>

int main() {
  using namespace marsden;
  const int trailers = 5;
  const double dt = 0.01, stroke = 6.0;
  maximal::Mechanism train = maximal::trailer_train(trailers, 0.0);
  // Rolling at 2 m/s: the tractor's planar joint's rates (x, y, heading), the rest at rest.
  std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(train.model, train.state);
  std::vector<maximal::JointCoords> qd = q;
  for (maximal::JointCoords& r : qd) r.setZero();
  qd[0] = Vec3(2.0, 0.0, 0.0);
  maximal::Data data(train.model, maximal::set_joint_state(train.model, train.state, q, qd, dt));
  const int steering = train.model.num_joints() - 1;  // the hinge "steering", last
  maximal::StepOptions options;
  options.dt = dt;
  double torque = 0.0;
  for (int k = 0; k < 2000; ++k) {
    const double t = (k + 1) * dt;
    data.joint_target[steering] =
        t < stroke ? 0.08 * std::sin(2.0 * std::numbers::pi * t / stroke) : 0.0;
    const maximal::StepStatus status = maximal::step(train.model, data, options);
    if (!status.ok()) {
      std::printf("step %d failed: %s\n", k, maximal::describe(status.failure));
      return 1;
    }
    torque = std::max(torque, std::abs(data.drive_force[steering]));
  }
  const maximal::BodyState& tractor = data.state[0];
  const Mat3 R = tractor.q.matrix();
  const Vec3 rear = tractor.x + R * Vec3(-0.2, 0.0, 0.0), side = R * Vec3::UnitY();
  std::printf("tractor moved %.4f m sideways; largest steering torque %.3e N m\n", tractor.x.y(),
              torque);
  double worst = 0.0;
  for (int i = 1; i <= trailers; ++i) {
    const maximal::BodyState& b = data.state[std::size_t(i)];
    const double off = (b.x + b.q.matrix() * Vec3(-0.2, 0.0, 0.0) - rear).dot(side);
    std::printf("trailer %d: axle %.2e m off the tractor's line\n", i, off);
    worst = std::max(worst, std::abs(off));
  }
  return tractor.x.y() > 3.0 && worst < 1e-6 ? 0 : 1;
}
