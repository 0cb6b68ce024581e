// Generic helpers for the Lie group property tests: element comparison, random tangents
// with a prescribed rotation angle, and finite-difference references.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <random>

#include "marsden/lie/quaternion.hpp"
#include "marsden/lie/se2.hpp"
#include "marsden/lie/se3.hpp"
#include "marsden/lie/so3.hpp"

namespace marsden::test {

constexpr double kPi = 3.14159265358979323846;

// Per-group facts the generic tests need: how many leading tangent coordinates are
// rotational, a faithful coordinate vector/matrix of an element (q itself for the cover,
// so that q and -q differ), and a matrix representation of the element and of hat(xi)
// (for Quat: the rotation it covers and so(3)).
template <class G>
struct Traits;

template <>
struct Traits<SO3> {
  static constexpr int kRot = 3;
  static Mat3 coords(const SO3& g) { return g.R; }
  static Mat3 mat(const SO3& g) { return g.R; }
  static Mat3 hat(const Vec3& xi) { return SO3::hat(xi); }
};

template <>
struct Traits<SE2> {
  static constexpr int kRot = 1;
  static Mat3 coords(const SE2& g) { return g.matrix(); }
  static Mat3 mat(const SE2& g) { return g.matrix(); }
  static Mat3 hat(const Vec3& xi) { return SE2::hat(xi); }
};

template <>
struct Traits<SE3> {
  static constexpr int kRot = 3;
  static Mat4 coords(const SE3& g) { return g.matrix(); }
  static Mat4 mat(const SE3& g) { return g.matrix(); }
  static Mat4 hat(const Vec6& xi) { return SE3::hat(xi); }
};

template <>
struct Traits<Quat> {
  static constexpr int kRot = 3;
  static Vec4 coords(const Quat& g) { return g.q; }
  static Mat3 mat(const Quat& g) { return g.matrix(); }
  static Mat3 hat(const Vec3& xi) { return SO3::hat(xi); }
};

template <class G>
using Tan = typename G::Tangent;
template <class G>
using Jac = typename G::Jacobian;

// A tangent whose rotational part has norm `angle` in a random direction (a random sign
// for SE(2)) and whose translational part is uniform in [-trans, trans]^k.
template <class G>
Tan<G> tangent_with_angle(std::mt19937& rng, double angle, double trans = 1.0) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  constexpr int r = Traits<G>::kRot;
  Tan<G> xi;
  Eigen::Matrix<double, r, 1> dir;
  do {
    for (int i = 0; i < r; ++i) dir(i) = normal(rng);
  } while (dir.norm() < 1e-3);
  xi.template head<r>() = angle * dir.normalized();
  for (int i = r; i < G::kDim; ++i) xi(i) = trans * uni(rng);
  return xi;
}

template <class G>
Tan<G> random_unit_tangent(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Tan<G> d;
  for (int i = 0; i < G::kDim; ++i) d(i) = normal(rng);
  return d.normalized();
}

// A random element: exp of a rotation angle uniform in [0, max_angle).
template <class G>
G random_element(std::mt19937& rng, double max_angle = kPi) {
  std::uniform_real_distribution<double> uni(0.0, max_angle);
  return G::exp(tangent_with_angle<G>(rng, uni(rng), 2.0));
}

template <class G>
double distance(const G& a, const G& b) {
  return (Traits<G>::coords(a) - Traits<G>::coords(b)).norm();
}

// Right-trivialised derivative of tau by central differences on the manifold:
// column j = [log(tau(xi + h e_j) tau(xi)^-1) - log(tau(xi - h e_j) tau(xi)^-1)] / 2h.
template <class G>
Jac<G> fd_right_tangent(const std::function<G(const Tan<G>&)>& tau, const Tan<G>& xi,
                        double h = 1e-6) {
  const G g0inv = tau(xi).inverse();
  Jac<G> D;
  for (int j = 0; j < G::kDim; ++j) {
    Tan<G> e = Tan<G>::Zero();
    e(j) = h;
    D.col(j) = (G::log(tau(xi + e) * g0inv) - G::log(tau(xi - e) * g0inv)) / (2.0 * h);
  }
  return D;
}

// Matrix exponential by scaling and squaring of a 30-term Taylor series: an independent
// reference for the closed-form exp maps (accurate to ~1e-15 for |X| <~ 10).
template <class M>
M expm(const M& X) {
  int squarings = 0;
  double n = X.norm();
  while (n > 0.5) {
    n *= 0.5;
    ++squarings;
  }
  const M Y = X / std::pow(2.0, squarings);
  M term = M::Identity(), sum = M::Identity();
  for (int k = 1; k <= 30; ++k) {
    term = term * Y / static_cast<double>(k);
    sum += term;
  }
  for (int i = 0; i < squarings; ++i) sum = sum * sum;
  return sum;
}

// sum_k ad^k / (k+1)!: an independent reference for dexp at moderate |xi|.
template <class G>
Jac<G> dexp_series(const Tan<G>& xi) {
  const Jac<G> A = G::ad(xi);
  Jac<G> term = Jac<G>::Identity(), sum = Jac<G>::Identity();
  for (int k = 1; k <= 60; ++k) {
    term = term * A / static_cast<double>(k + 1);
    sum += term;
  }
  return sum;
}

// |a - b| <= tol |b| (Frobenius), with the message naming the point.
template <class A, class B>
::testing::AssertionResult rel_near(const A& a, const B& b, double tol) {
  const double err = (a - b).norm();
  const double scale = b.norm();
  if (err <= tol * scale || err == 0.0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error " << err / scale << " > " << tol
                                       << "\n  got:\n" << a << "\n  want:\n" << b;
}

template <class A, class B>
::testing::AssertionResult abs_near(const A& a, const B& b, double tol) {
  const double err = (a - b).norm();
  if (err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "error " << err << " > " << tol << "\n  got:\n"
                                       << a << "\n  want:\n" << b;
}

}  // namespace marsden::test
