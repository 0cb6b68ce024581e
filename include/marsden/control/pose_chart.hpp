// Coordinates for poses as NLP variables, and the reconstruction g_k+1 = g_k tau(eta)
// (vehicles eq. (9)) written in them with exact derivatives.
//
// Why these coordinates: the NLP needs a vector space, and a global chart avoids the
// re-centring local coordinates need between solves.
//   SE(2): c = (theta, x, y), theta unwrapped along the path (the reconstruction adds the
//          step's rotation angle, so theta never jumps by 2 pi).
//   SE(3): c = (x, y, z, q_w, q_x, q_y, q_z) with the Hamilton quaternion q. The pose is
//          that of q / |q|; the reconstruction q_k+1 = q_k (x) q(tau(eta)) is bilinear and
//          keeps |q| = 1 exactly along any feasible trajectory starting from a unit q_0,
//          so no norm constraint is needed beyond the fixed initial pose, and q and -q never
//          swap along the path.
#pragma once

#include <Eigen/Core>

#include "marsden/lie/se2.hpp"
#include "marsden/lie/se3.hpp"

namespace marsden::control {

template <class G>
struct PoseChart;

template <>
struct PoseChart<SE2> {
  static constexpr int kCoords = 3;
  static constexpr int kPositionOffset = 1;  // (x, y) at c[1], c[2]
  static constexpr int kPositionDim = 2;
  using Coords = Eigen::Matrix<double, 3, 1>;
  using JacCC = Eigen::Matrix<double, 3, 3>;  // d c_kp1 / d c_k
  using JacCT = Eigen::Matrix<double, 3, 3>;  // d c_kp1 / d eta
  using JacTC = Eigen::Matrix<double, 3, 3>;  // right perturbation of the pose / d c

  static SE2 pose(const Coords& c);
  static Coords coords(const SE2& g, double theta_near = 0.0);  // theta closest to theta_near
  static JacTC right_from_coords(const Coords& c);
  static Coords compose(const Coords& c, DiffMap map, const Vec3& eta, JacCC* J_c, JacCT* J_eta);
};

template <>
struct PoseChart<SE3> {
  static constexpr int kCoords = 7;
  static constexpr int kPositionOffset = 0;  // (x, y, z) at c[0..2]
  static constexpr int kPositionDim = 3;
  using Coords = Eigen::Matrix<double, 7, 1>;
  using JacCC = Eigen::Matrix<double, 7, 7>;
  using JacCT = Eigen::Matrix<double, 7, 6>;
  using JacTC = Eigen::Matrix<double, 6, 7>;

  static SE3 pose(const Coords& c);
  // The quaternion sign is chosen with q . q_near >= 0.
  static Coords coords(const SE3& g, const Vec4& q_near = Vec4(1.0, 0.0, 0.0, 0.0));
  static JacTC right_from_coords(const Coords& c);
  static Coords compose(const Coords& c, DiffMap map, const Vec6& eta, JacCC* J_c, JacCT* J_eta);
};

}  // namespace marsden::control
