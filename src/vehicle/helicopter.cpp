#include <cmath>
#include <string>

#include "marsden/error.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::vehicle {

Mat6 rigid_body_inertia(const Vec3& J_principal, double mass) {
  if (!(mass > 0.0) || !std::isfinite(mass))
    throw InputError("inertia 'mass' must be a finite number > 0 (got " + std::to_string(mass) +
                     ")");
  if (!J_principal.allFinite() || J_principal.minCoeff() <= 0.0)
    throw InputError("inertia principal moments 'J' must be finite and > 0");
  Mat6 I = Mat6::Zero();
  I.diagonal() << J_principal, Vec3::Constant(mass);
  return I;
}

Mat3 planar_body_inertia(double J, double mass) {
  if (!(mass > 0.0) || !std::isfinite(mass) || !(J > 0.0) || !std::isfinite(J))
    throw InputError("inertia 'J' and 'mass' must be finite numbers > 0");
  return Vec3(J, mass, mass).asDiagonal();
}

namespace {
const HelicopterParams& validated(const HelicopterParams& p) {
  auto check = [](double value, const char* name) {
    if (!std::isfinite(value) || value < 0.0)
      throw InputError(std::string("helicopter: '") + name + "' must be finite and >= 0 (got " +
                       std::to_string(value) + ")");
  };
  check(p.d_t, "d_t");
  check(p.d_r, "d_r");
  check(p.gravity, "gravity");
  return p;
}
}  // namespace

Helicopter::Helicopter(const HelicopterParams& p)
    : HolonomicModel<SE3>(rigid_body_inertia(p.J_principal, p.mass)), p_(validated(p)) {}

// F(gamma) of vehicles §4.3.1: the main-rotor lift along
// l(gamma) = (sin gp cos gr, -sin gr, cos gp cos gr) acts at the hub (0, 0, d_t); the tail
// rotor pushes along -y at (-d_r, 0, 0).
void Helicopter::control_wrench(const InputVec& gamma, const InputVec& u, Vec6& f,
                                InputJacobian<SE3>* J_f_u,
                                InputJacobian<SE3>* J_f_gamma) const {
  const double sp = std::sin(gamma[0]), cp = std::cos(gamma[0]);
  const double sr = std::sin(gamma[1]), cr = std::cos(gamma[1]);
  Eigen::Matrix<double, 6, 2> F;
  F << p_.d_t * sr, 0.0,
       p_.d_t * sp * cr, 0.0,
       0.0, p_.d_r,
       sp * cr, 0.0,
       -sr, -1.0,
       cp * cr, 0.0;
  f = F * u.head<2>();
  if (J_f_u) *J_f_u = F;
  if (J_f_gamma) {
    J_f_gamma->resize(6, 2);
    J_f_gamma->col(0) << 0.0, p_.d_t * cp * cr, 0.0, cp * cr, 0.0, -sp * cr;
    J_f_gamma->col(1) << p_.d_t * cr, -p_.d_t * sp * sr, 0.0, -sp * sr, -cr, -cp * sr;
    *J_f_gamma *= u[0];
  }
}

// Gravity, f_ext = (0, R^T (0, 0, -m g)). Under g exp(delta), R^T e_z -> R^T e_z + n^ dtheta.
void Helicopter::external_wrench(double, const SE3& g, const Vec6&, Vec6& f, Mat6* J_f_g,
                                 Mat6* J_f_xi) const {
  const Vec3 n = g.R.transpose().col(2);
  const double mg = p_.mass * p_.gravity;
  f << Vec3::Zero(), -mg * n;
  if (J_f_g) {
    J_f_g->setZero();
    J_f_g->bottomLeftCorner<3, 3>() = -mg * SO3::hat(n);
  }
  if (J_f_xi) J_f_xi->setZero();
}

double Helicopter::potential_energy(const SE3& g) const {
  return p_.mass * p_.gravity * g.x.z();
}

}  // namespace marsden::vehicle
