// No heap allocation inside a nonholonomic step: the step code is compiled again with
// EIGEN_RUNTIME_NO_MALLOC (Eigen asserts on any allocation while forbidden), and
// support/allocation_counter counts every other allocation.
#include <gtest/gtest.h>

#include <cmath>

#include "marsden/nonholonomic/integrators.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::nonholonomic {
namespace {

using test_support::allocations_during;

TEST(NonholonomicNoMalloc, EveryStepOnTheSnakeboard) {
  const Snakeboard sb(0.3, 0.1, 2.0, 0.6);
  NhVec q(5), qd(5), u(2), q1, p1, p_plus1, lambda, q_prev;
  q << 0.1, 0.3, 0.2, 1.0, -1.0;
  qd << 0.0, 0.0, 0.0, 0.0, 0.0;
  u << 0.1, -0.05;
  NhMat M;
  sb.mass(q, M);
  NhVec p = M * qd;
  q_prev = q;
  const double dt = 0.01;
  const long n = allocations_during([&] {
    for (int k = 0; k < 20; ++k) {
      q1 = q;
      EXPECT_TRUE(rattle_step(sb, dt, q, p, u, q1, p1).converged);
      EXPECT_TRUE(projected_rattle_step(sb, dt, q, p, u, q1, p1).converged);
      EXPECT_TRUE(gni_step(sb, dt, q, p, u, q1, p_plus1).converged);
      EXPECT_TRUE(shake_step(sb, dt, q_prev, q, u, q1, lambda).converged);
      nh_rk4_step(sb, dt, u, q, qd);
      q_prev = q;
      q = q1;
      p = p1;
    }
  });
  EXPECT_EQ(n, 0);
}

// The car prescribes its steering: every step with q_prescribed_kp1.
TEST(NonholonomicNoMalloc, EveryStepOnTheCar) {
  const NhCar car(CarParams{}, 0.7);
  NhVec q(5), qd(5), u(1), q1, p1, p_plus1, lambda, q_prev, q_prescribed;
  q << 0.1, 0.0, 0.2, 1.0, -1.0;
  qd << 1.0, 0.3, 0.0, 0.3 * std::cos(0.2), 0.3 * std::sin(0.2);
  u << 0.2;
  NhMat M;
  car.mass(q, M);
  NhVec p = M * qd;
  q_prev = q;
  q_prescribed = q;
  const double dt = 0.01;
  const long n = allocations_during([&] {
    for (int k = 0; k < 20; ++k) {
      q_prescribed[1] = 0.3 * std::sin((k + 1) * dt);
      q1 = q;
      EXPECT_TRUE(rattle_step(car, dt, q, p, u, q1, p1, {}, &q_prescribed).converged);
      EXPECT_TRUE(projected_rattle_step(car, dt, q, p, u, q1, p1, {}, &q_prescribed).converged);
      EXPECT_TRUE(gni_step(car, dt, q, p, u, q1, p_plus1, nullptr, {}, &q_prescribed).converged);
      EXPECT_TRUE(shake_step(car, dt, q_prev, q, u, q1, lambda, {}, &q_prescribed).converged);
      q_prev = q;
      q = q1;
      p = p1;
    }
  });
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace marsden::nonholonomic
