// Private scalar coefficient functions of the rotation-group closed forms, accurate to
// about 1e-15 relative for every angle in [0, 2 pi). Not part of the public API.
//
// The functions that enter dexp^-1 are templates on the scalar type so that the
// exact-exp integrator can differentiate them with forward-mode AD (one formula for both).
//
// Each function that suffers cancellation near theta = 0 is evaluated from its Taylor
// series in t = theta^2 below a threshold and from the closed form above it. The
// thresholds (x = 1 or 2) are where the closed form has lost at most ~1e-15 relative
// to cancellation; each series is truncated where the next term is below ~1e-17
// relative at its threshold. Checked against 60-digit references on a sweep of
// [1e-10, 6.2]: every function is within 7e-16 relative.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>

namespace marsden::lie_detail {

inline constexpr double kPi = 3.14159265358979323846;

// Horner evaluation of sum_k c[k] t^k, for any scalar type (double, or a dual number
// when a derivative of a coefficient is needed).
template <std::size_t N, class S>
S horner(const std::array<double, N>& c, const S& t) {
  S s = S(c[N - 1]);
  for (std::size_t k = N - 1; k-- > 0;) s = s * t + c[k];
  return s;
}

// sin(x)/x. No cancellation: the series is only needed to avoid 0/0.
inline double sinc(double x) {
  if (std::abs(x) < 1e-4) {
    const double t = x * x;
    return 1.0 - t / 6.0 * (1.0 - t / 20.0);  // next term x^6/5040 < 1e-27
  }
  return std::sin(x) / x;
}

// (1 - cos x)/x^2 = sinc(x/2)^2 / 2: the half-angle form has no cancellation.
inline double one_minus_cos_over_sq(double x) {
  const double s = sinc(0.5 * x);
  return 0.5 * s * s;
}

// (x - sin x)/x^3 = sum (-1)^n x^2n / (2n+3)!.
template <class S>
S x_minus_sin_over_cube(const S& x) {
  using std::cos;
  using std::sin;
  const S t = x * x;
  if (t < 1.0) {
    static constexpr std::array<double, 9> c{
        1.0 / 6.0,          -1.0 / 120.0,           1.0 / 5040.0,
        -1.0 / 362880.0,    1.0 / 39916800.0,       -1.0 / 6227020800.0,
        1.0 / 1307674368000.0, -1.0 / 355687428096000.0, 1.0 / 121645100408832000.0};
    return horner(c, t);
  }
  return (x - sin(x)) / (t * x);
}

// (x^2/2 + cos x - 1)/x^4 = sum (-1)^n x^2n / (2n+4)!. Cancels to fourth order: the
// series is used up to x = 2.
template <class S>
S cos_remainder_over_quartic(const S& x) {
  using std::cos;
  using std::sin;
  const S t = x * x;
  if (t < 4.0) {
    static constexpr std::array<double, 12> c{
        0.041666666666666664,   -0.001388888888888889,   2.48015873015873e-05,
        -2.755731922398589e-07, 2.08767569878681e-09,    -1.1470745597729725e-11,
        4.779477332387385e-14,  -1.5619206968586225e-16, 4.110317623312165e-19,
        -8.896791392450574e-22, 1.6117375710961184e-24,  -2.4795962632247976e-27};
    return horner(c, t);
  }
  return (0.5 * t + cos(x) - 1.0) / (t * t);
}

// (2x - 3 sin x + x cos x)/(2 x^5) = sum (-1)^n (n+1) x^2n / (2n+5)!. The closed form
// cancels to fifth order, so the series is used up to x = 2.
template <class S>
S barfoot_c3(const S& x) {
  using std::cos;
  using std::sin;
  const S t = x * x;
  if (t < 4.0) {
    static constexpr std::array<double, 12> c{
        0.008333333333333333,   -0.0003968253968253968,  8.267195767195768e-06,
        -1.0020843354176688e-07, 8.029521918410807e-10,   -4.58829823909189e-12,
        1.9680200780418645e-14, -6.576508197299464e-17,  1.7615646957052136e-19,
        -3.868170170630684e-22, 7.091645312822921e-25,   -1.1020427836554655e-27};
    return horner(c, t);
  }
  return (2.0 * x - 3.0 * sin(x) + x * cos(x)) / (2.0 * t * t * x);
}

// (1 - (x/2) cot(x/2))/x^2 = sum_{n>=1} |B_2n| x^(2n-2) / (2n)!, the W^2 coefficient of
// the inverse SO(3) left Jacobian. Singular at x = 2 pi. The series converges slowly
// (ratio (x / 2 pi)^2), hence the many terms to reach x = 2.
template <class S>
S inv_jacobian_coeff(const S& x) {
  using std::cos;
  using std::sin;
  const S t = x * x;
  if (t < 4.0) {
    static constexpr std::array<double, 18> c{
        0.08333333333333333,    0.001388888888888889,   3.306878306878307e-05,
        8.267195767195768e-07,  2.08767569878681e-08,   5.284190138687493e-10,
        1.3382536530684679e-11, 3.3896802963225827e-13, 8.586062056277845e-15,
        2.174868698558062e-16,  5.5090028283602295e-18, 1.3954464685812522e-19,
        3.534707039629467e-21,  8.953517427037546e-23,  2.267952452337683e-24,
        5.744790668872202e-26,  1.455172475614865e-27,  3.6859949406653103e-29};
    return horner(c, t);
  }
  const S h = 0.5 * x;
  return (1.0 - h * cos(h) / sin(h)) / t;
}

// (x/2) cot(x/2), the diagonal of the inverse SE(2) left Jacobian. Below x = 2 it is
// 1 - x^2 inv_jacobian_coeff(x), which avoids 0/0; above, the direct form does not cancel.
inline double half_cot(double x) {
  const double t = x * x;
  if (t < 4.0) return 1.0 - t * inv_jacobian_coeff(x);
  const double h = 0.5 * x;
  return h * std::cos(h) / std::sin(h);
}

}  // namespace marsden::lie_detail
