// SO(3), SE(2) and SE(3) from Python: group elements as homogeneous matrices (numpy), Lie
// algebra elements as vectors in the library's ordering (SE(3): (omega, v); SE(2):
// (omega, vx, vy)), and the right-trivialised tangents of exp, cay and ccsk
// (docs/conventions.md).
#include <cmath>
#include <string>

#include <Eigen/LU>
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>

#include "marsden/error.hpp"
#include "marsden/lie/se2.hpp"
#include "marsden/lie/se3.hpp"
#include "marsden/lie/so3.hpp"
#include "module.hpp"

namespace nb = nanobind;

namespace marsden::python {
namespace {

// A rotation block within round-off of orthonormal with determinant 1, else a ValueError
// naming the argument.
template <int N>
void check_rotation(const Eigen::Matrix<double, N, N>& R, const char* what) {
  const double err = (R.transpose() * R - Eigen::Matrix<double, N, N>::Identity()).norm();
  if (!R.allFinite() || !(err < 1e-9) || !(R.determinant() > 0.0))
    throw InputError(std::string(what) + ": not a rotation (|R^T R - I| = " +
                     std::to_string(err) + ", det = " + std::to_string(R.determinant()) + ")");
}

SO3 so3_from(const Mat3& R) {
  check_rotation<3>(R, "g");
  return SO3{R};
}

SE3 se3_from(const Mat4& g) {
  check_rotation<3>(g.topLeftCorner<3, 3>(), "g");
  if (!g.allFinite() || g.row(3) != Eigen::RowVector4d(0, 0, 0, 1))
    throw InputError("g: not a homogeneous matrix (last row must be [0, 0, 0, 1])");
  return SE3{g.topLeftCorner<3, 3>(), g.topRightCorner<3, 1>()};
}

SE2 se2_from(const Mat3& g) {
  check_rotation<2>(g.topLeftCorner<2, 2>(), "g");
  if (!g.allFinite() || g.row(2) != Eigen::RowVector3d(0, 0, 1))
    throw InputError("g: not a homogeneous matrix (last row must be [0, 0, 1])");
  return SE2{g.topLeftCorner<2, 2>(), g.topRightCorner<2, 1>()};
}

// The same functions for each group G, whose elements cross as matrices M.
template <class G, class M, class From>
void bind_group(nb::module_& m, const char* name, const char* doc, From from) {
  using T = typename G::Tangent;
  using J = typename G::Jacobian;
  nb::class_<G> cls(m, name, doc);
  cls.def_static("exp", [](const T& xi) -> M { return G::exp(xi).matrix(); }, nb::arg("xi"),
                 "exp(xi): the group element (matrix) of an algebra vector xi (dim,).");
  cls.def_static("log", [from](const M& g) -> T { return G::log(from(g)); }, nb::arg("g"),
                 "Inverse of exp: the algebra vector (dim,) of g, rotation angle in [0, pi]. "
                 "InputError when g is not a group element.");
  cls.def_static("cay", [](const T& xi) -> M { return G::cay(xi).matrix(); }, nb::arg("xi"),
                 "cay(xi): the group element (matrix) of the Cayley map of xi (dim,).");
  cls.def_static("cay_inv", [from](const M& g) -> T { return G::cay_inv(from(g)); },
                 nb::arg("g"),
                 "Inverse of cay: the algebra vector (dim,) of g. InputError when g is not "
                 "a group element.");
  cls.def_static("hat", [](const T& xi) { return G::hat(xi); }, nb::arg("xi"),
                 "The algebra element of xi (dim,) as a matrix (3x3; 4x4 for SE(3)).");
  cls.def_static("ad", [](const T& xi) -> J { return G::ad(xi); }, nb::arg("xi"),
                 "Adjoint of the algebra, ad_xi (dim, dim).");
  cls.def_static("dexp", [](const T& xi) -> J { return G::dexp(xi); }, nb::arg("xi"),
                 "Right-trivialised tangent of exp (dim, dim): exp(xi + e d) = "
                 "exp(e dexp(xi) d) exp(xi) to first order.");
  cls.def_static("dexp_inv", [](const T& xi) -> J { return G::dexp_inv(xi); }, nb::arg("xi"),
                 "Inverse of dexp (dim, dim) (the paper's C for exp).");
  cls.def_static("dcay", [](const T& xi) -> J { return G::dcay(xi); }, nb::arg("xi"),
                 "Right-trivialised tangent of cay (dim, dim).");
  cls.def_static("dcay_inv", [](const T& xi) -> J { return G::dcay_inv(xi); }, nb::arg("xi"),
                 "Inverse of dcay (dim, dim) (the paper's C for cay).");
  cls.attr("dim") = G::kDim;
}

}  // namespace

void bind_lie(nb::module_ m) {
  bind_group<SO3, Mat3>(m, "SO3",
                        "Rotations: elements are 3x3 rotation matrices, algebra vectors "
                        "angular velocities omega (3).",
                        so3_from);
  bind_group<SE2, Mat3>(m, "SE2",
                        "Planar rigid motions: elements are 3x3 homogeneous matrices, algebra "
                        "vectors (omega, vx, vy) in the body frame.",
                        se2_from);
  bind_group<SE3, Mat4>(m, "SE3",
                        "Rigid motions: elements are 4x4 homogeneous matrices, algebra vectors "
                        "(omega, v) (6) in the body frame.",
                        se3_from);
}

}  // namespace marsden::python
