// Spins a free rigid body with the variational integrator and prints how well its spatial
// momentum is kept: the smallest useful program against an installed Marsden.
#include <cstdio>
#include <memory>

#include <marsden/vehicle/models.hpp>
#include <marsden/vehicle/stepper.hpp>

int main() {
  using namespace marsden;
  auto body = std::make_shared<FreeBody<SE3>>(rigid_body_inertia(Vec3(1.0, 2.0, 3.0), 1.0));
  HolonomicOptions<SE3> opt;
  opt.tangent = TangentMap::Exact;  // C = dcay^-1: the discrete Noether theorem holds exactly
  opt.newton.tolerance = 1e-14;      // so that what remains is round-off, not solver residual
  auto stepper = make_stepper<SE3>(Method::VI, body, opt);
  VehicleState<SE3> s0;
  s0.xi << 0.1, 2.0, 0.1, 1.0, 0.0, 0.0;  // near the unstable middle axis
  stepper->reset(s0, 0.01);
  const Vec6 pi0 = spatial_momentum(s0.g, body->inertia() * s0.xi);
  for (int k = 0; k < 10000; ++k) {
    if (!stepper->step(nullptr, nullptr).converged) {
      std::fprintf(stderr, "step %d did not converge\n", k);
      return 1;
    }
  }
  const auto s = stepper->state();
  const Vec6 pi = spatial_momentum(s.g, body->inertia() * s.xi);
  std::printf("t = %.1f s, |spatial momentum change| / |momentum| = %.2e\n", s.t,
              (pi - pi0).norm() / pi0.norm());
  return (pi - pi0).norm() < 1e-9 * pi0.norm() ? 0 : 1;
}
