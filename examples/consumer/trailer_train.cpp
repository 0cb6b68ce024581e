// A tractor pulls ten trailers round a circle and each settles on its closed-form
// off-tracking radius. Nonholonomic constraints in maximal coordinates (docs/maximal.md):
// every body rides on an axle that cannot slide sideways, each trailer hangs on a hinge
// from the body ahead, and the tractor's front axle is steered at 0.2 rad, so its rear axle
// runs on a circle of radius R0 = 0.5 / tan(0.2) m; trailer i's axle settles on
// sqrt(R0^2 - 0.4 i) (its hitch 0.3 m behind the axle ahead, 0.7 m ahead of its own). Twin
// of examples/python/trailer_train.py. Exits 1 unless every radius is within 1e-4 m.
// Usage: trailer_train
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <marsden/maximal/integrator.hpp>
#include <marsden/maximal/setup.hpp>

int main() {
  using namespace marsden;
  const int trailers = 10;
  const double steering = 0.2, R0 = 0.5 / std::tan(steering), dt = 0.01;
  maximal::Mechanism train = maximal::trailer_train(trailers, steering);
  // Rolling at 1 m/s onto the circle: the tractor's planar joint's rates (x, y, heading).
  std::vector<maximal::JointCoords> q = maximal::current_joint_coordinates(train.model, train.state);
  std::vector<maximal::JointCoords> qd = q;
  for (maximal::JointCoords& r : qd) r.setZero();
  qd[0] = Vec3(1.0, 0.0, 1.0 / R0);
  maximal::Data data(train.model, maximal::set_joint_state(train.model, train.state, q, qd, dt));
  maximal::StepOptions options;
  options.dt = dt;
  for (int k = 0; k < 4000; ++k) {
    const maximal::StepStatus status = maximal::step(train.model, data, options);
    if (!status.ok()) {
      std::printf("step %d failed: %s\n", k, maximal::describe(status.failure));
      return 1;
    }
  }
  const Mat3 R = data.state[0].q.matrix();
  const Vec3 centre = data.state[0].x + R * Vec3(-0.2, R0, 0.0);
  double worst = 0.0;
  for (int i = 1; i <= trailers; ++i) {
    const maximal::BodyState& b = data.state[std::size_t(i)];
    const double radius = (b.x + b.q.matrix() * Vec3(-0.2, 0.0, 0.0) - centre).head<2>().norm();
    const double exact = std::sqrt(R0 * R0 - 0.4 * i);
    std::printf("trailer %2d: axle on radius %.6f m (closed form %.6f)\n", i, radius, exact);
    worst = std::max(worst, std::abs(radius - exact));
  }
  return worst < 1e-4 ? 0 : 1;
}
