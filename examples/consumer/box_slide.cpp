// A box slides on the ground with Coulomb friction and stops where the closed form says.
// Hard contact in maximal coordinates (docs/contact.md): a 0.5 m, 1 kg box resting on a
// face against the ground with mu = 0.25 starts at v = (4, 0.8, 0) m/s; friction
// decelerates it at mu g along its heading, so it stops after |v|^2 / (2 mu g) = 3.392457 m
// on the heading atan(0.8 / 4); the step's error is first order in dt. Twin of
// examples/python/box_slide.py. Exits 1 unless it stops within 1 % of the closed form.
// Usage: box_slide
#include <cmath>
#include <cstdio>
#include <numbers>

#include <marsden/maximal/integrator.hpp>
#include <marsden/maximal/setup.hpp>

int main() {
  using namespace marsden;
  const double mu = 0.25, g = 9.81;
  const Vec3 half(0.25, 0.25, 0.25), v0(4.0, 0.8, 0.0);
  maximal::Contacts contacts;
  contacts.shapes.push_back({"box", 0, geometry::Box(half), mu});
  contacts.surfaces.push_back({"ground", geometry::HalfSpace(Vec3::UnitZ(), 0.0), 0.0});
  const maximal::Model model({maximal::solid_box("box", 1.0, half)}, {}, Vec3(0.0, 0.0, -g), {},
                             contacts);
  maximal::BodyState start;
  start.x = Vec3(0.0, 0.0, half.z());
  start.v = v0;
  maximal::Data data(model, {start});
  maximal::StepOptions options;
  options.dt = 0.01;
  for (int k = 0; k < 200; ++k) {
    const maximal::StepStatus status = maximal::step(model, data, options);
    if (!status.ok()) {
      std::printf("step %d failed: %s\n", k, maximal::describe(status.failure));
      return 1;
    }
  }
  const Vec3 moved = data.state[0].x - start.x;
  const double exact = v0.squaredNorm() / (2.0 * mu * g);
  const double distance = moved.head<2>().norm();
  const double degrees = 180.0 / std::numbers::pi;
  std::printf("stopped after %.6f m (closed form %.6f m, %.2f%% off at dt = 0.01 s); heading "
              "%.9f deg (closed form %.9f)\n",
              distance, exact, 100.0 * std::abs(distance - exact) / exact,
              degrees * std::atan2(moved.y(), moved.x()), degrees * std::atan2(v0.y(), v0.x()));
  return std::abs(distance - exact) < 0.01 * exact ? 0 : 1;
}
