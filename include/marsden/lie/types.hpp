// Fixed-size Eigen aliases shared by the whole library.
#pragma once

#include <Eigen/Core>

namespace marsden {

using Vec2 = Eigen::Matrix<double, 2, 1>;
using Vec3 = Eigen::Matrix<double, 3, 1>;
using Vec4 = Eigen::Matrix<double, 4, 1>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat2 = Eigen::Matrix<double, 2, 2>;
using Mat3 = Eigen::Matrix<double, 3, 3>;
using Mat4 = Eigen::Matrix<double, 4, 4>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Mat34 = Eigen::Matrix<double, 3, 4>;

// The two group difference maps tau of vehicles §3.1.
enum class DiffMap { Exp, Cay };

}  // namespace marsden
