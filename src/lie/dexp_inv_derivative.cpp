#include "lie/dexp_inv_derivative.hpp"

#include <unsupported/Eigen/AutoDiff>

namespace marsden::detail {

Mat6 dexp_inv_transpose_derivative(const Vec6& eta, const Vec6& mu) {
  using Dual = Eigen::AutoDiffScalar<Vec6>;
  Eigen::Matrix<Dual, 6, 1> eta_d;
  for (int i = 0; i < 6; ++i) eta_d[i] = Dual(eta[i], 6, i);
  const Eigen::Matrix<Dual, 6, 1> out = se3_dexp_inv<Dual>(eta_d).transpose() * mu.cast<Dual>();
  Mat6 D;
  for (int i = 0; i < 6; ++i) D.row(i) = out[i].derivatives().transpose();
  return D;
}

Mat3 dexp_inv_transpose_derivative(const Vec3& eta, const Vec3& mu) {
  constexpr int kIndex[3] = {2, 3, 4};
  Vec6 eta6 = Vec6::Zero(), mu6 = Vec6::Zero();
  for (int i = 0; i < 3; ++i) {
    eta6[kIndex[i]] = eta[i];
    mu6[kIndex[i]] = mu[i];
  }
  const Mat6 D6 = dexp_inv_transpose_derivative(eta6, mu6);
  Mat3 D;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) D(i, j) = D6(kIndex[i], kIndex[j]);
  return D;
}

}  // namespace marsden::detail
