// Boat of vehicles §4.3.2, eq. (15), with a box hull. The model and its conventions are
// documented next to BoatParams in include/marsden/vehicle/models.hpp.
//
// Jacobians are with respect to a right perturbation g exp(delta), delta = (dtheta, dv):
//   n = R^T e_z      -> n + n x dtheta           (dn = n^ dtheta)
//   x_z              -> x_z + n . dv
//   R^T a (a fixed)  -> R^T a + (R^T a) x dtheta
#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "marsden/error.hpp"
#include "marsden/vehicle/models.hpp"

namespace marsden::vehicle {
namespace {

Mat3 skew(const Vec3& a) {
  Mat3 S;
  S << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return S;
}

// Buoyancy columns per side of the footprint: a fixed fine grid keeps the force smooth
// even when the hydrodynamic patch grid is coarse.
int buoyancy_columns(const BoatParams& p) { return std::max(16, p.patches_per_side); }

// Below this |n_z| a column is treated as lying flat (wholly in or out of the water);
// the exact formulas divide by n_z.
constexpr double kFlatColumn = 1e-12;

[[noreturn]] void bad(const std::string& field, const std::string& what, double got) {
  throw InputError("boat: '" + field + "' " + what + " (got " + std::to_string(got) + ")");
}

void require_finite(const std::string& field, const Vec3& v) {
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(v[i])) bad(field, "must be finite", v[i]);
}

// Checks every field before the base class sees the inertia, so that messages name the
// boat's own fields.
Mat6 validated_inertia(const BoatParams& p) {
  if (!(p.mass > 0.0) || !std::isfinite(p.mass)) bad("mass", "must be > 0 and finite", p.mass);
  for (int i = 0; i < 3; ++i)
    if (!(p.J_principal[i] > 0.0) || !std::isfinite(p.J_principal[i]))
      bad("J_principal", "entries must be > 0 and finite", p.J_principal[i]);
  for (int i = 0; i < 3; ++i)
    if (!(p.hull_size[i] > 0.0) || !std::isfinite(p.hull_size[i]))
      bad("hull_size", "entries must be > 0 and finite", p.hull_size[i]);
  if (!(p.water_density > 0.0) || !std::isfinite(p.water_density))
    bad("water_density", "must be > 0 and finite", p.water_density);
  if (!(p.gravity > 0.0) || !std::isfinite(p.gravity))
    bad("gravity", "must be > 0 and finite", p.gravity);
  const double hull_volume = p.hull_size.prod();
  if (!(p.mass < p.water_density * hull_volume))
    bad("mass", "must be < water_density * hull volume = " +
                    std::to_string(p.water_density * hull_volume) + " kg so that the hull floats",
        p.mass);
  if (!(p.wet_smoothing >= 0.0) || !std::isfinite(p.wet_smoothing))
    bad("wet_smoothing", "must be >= 0 and finite", p.wet_smoothing);
  if (p.patches_per_side < 1 || p.patches_per_side > 256)
    bad("patches_per_side", "must be in [1, 256]", p.patches_per_side);
  for (int i = 0; i < 9; ++i)
    if (!std::isfinite(p.damping_E(i))) bad("damping_E", "entries must be finite", p.damping_E(i));
  // x^T E x >= 0 for all x is a condition on the symmetric part only.
  const Mat3 E_sym = 0.5 * (p.damping_E + p.damping_E.transpose());
  const double min_eig = Eigen::SelfAdjointEigenSolver<Mat3>(E_sym).eigenvalues().minCoeff();
  if (min_eig < -1e-12 * std::max(1.0, E_sym.norm()))
    bad("damping_E", "must be positive semi-definite (smallest eigenvalue of its symmetric part)",
        min_eig);
  if (!(p.pressure_P >= 0.0) || !std::isfinite(p.pressure_P))
    bad("pressure_P", "must be >= 0 and finite", p.pressure_P);
  require_finite("current", p.current);
  require_finite("wind_force", p.wind_force);
  require_finite("wind_point", p.wind_point);
  require_finite("thruster_right", p.thruster_right);
  require_finite("thruster_left", p.thruster_left);

  Mat6 I = Mat6::Zero();
  I.diagonal() << p.J_principal, Vec3::Constant(p.mass);
  return I;
}

// One buoyancy column at body footprint point (a, b), given n = R^T e_z and the
// centre's height x_z. Produces the submerged length s in [0, H], the body z of its
// centroid, and (when unclamped) ds/d(dtheta) and ds/d(dv).
struct Column {
  double s = 0.0;
  double zc = 0.0;
  bool active = false;  // s strictly inside (0, H): derivatives are nonzero
  Vec3 ds_dtheta = Vec3::Zero();
  Vec3 ds_dv = Vec3::Zero();
};

Column eval_column(double a, double b, double H, double x_z, const Vec3& n, bool want_d) {
  Column col;
  const double c = x_z + n.x() * a + n.y() * b;  // world height of the column's mid-point
  const double nz = n.z();
  const double anz = std::abs(nz);
  if (anz < kFlatColumn) {
    col.s = c < 0.0 ? H : 0.0;
    col.zc = 0.0;
    return col;
  }
  const double sigma = nz > 0.0 ? 1.0 : -1.0;
  // Height along the column is c + n_z z; the wet part is the end pointing down.
  const double s_raw = 0.5 * H - c / anz;
  if (s_raw <= 0.0) {
    col.s = 0.0;
  } else if (s_raw >= H) {
    col.s = H;
  } else {
    col.s = s_raw;
    col.active = true;
    if (want_d) {
      const Vec3 p0(a, b, 0.0);
      // ds = -dc/|n_z| + c sigma dn_z / n_z^2, dc = (p0 x n).dtheta + n.dv,
      // dn_z = (e_z x n).dtheta.
      col.ds_dtheta = -p0.cross(n) / anz + (c * sigma / (nz * nz)) * Vec3::UnitZ().cross(n);
      col.ds_dv = -n / anz;
    }
  }
  col.zc = sigma * 0.5 * (col.s - H);
  return col;
}

}  // namespace

Boat::Boat(const BoatParams& p) : HolonomicModel<SE3>(validated_inertia(p)), p_(p) {
  const int k = p_.patches_per_side;
  patches_.reserve(static_cast<std::size_t>(6 * k * k));
  // Each face is a k x k grid; (u, v) span the face, w is the outward normal axis.
  for (int w = 0; w < 3; ++w) {
    const int u = (w + 1) % 3, v = (w + 2) % 3;
    const double du = p_.hull_size[u] / k, dv = p_.hull_size[v] / k;
    for (int side = -1; side <= 1; side += 2) {
      for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
          Patch patch;
          patch.r = Vec3::Zero();
          patch.r[w] = side * 0.5 * p_.hull_size[w];
          patch.r[u] = -0.5 * p_.hull_size[u] + (i + 0.5) * du;
          patch.r[v] = -0.5 * p_.hull_size[v] + (j + 0.5) * dv;
          patch.n = Vec3::Zero();
          patch.n[w] = side;
          patch.area = du * dv;
          patches_.push_back(patch);
        }
      }
    }
  }
}

void Boat::control_wrench(const InputVec& /*gamma*/, const InputVec& u, Vec6& f,
                          InputJacobian<SE3>* J_f_u, InputJacobian<SE3>* J_f_gamma) const {
  if (u.size() != 2)
    throw InputError("boat: control vector u must have 2 entries (got " +
                     std::to_string(u.size()) + ")");
  // Thruster at c pushing along body x: torque c x e1 = (0, c_z, -c_y), force e1.
  Vec6 col_r, col_l;
  const Vec3& cr = p_.thruster_right;
  const Vec3& cl = p_.thruster_left;
  col_r << 0.0, cr.z(), -cr.y(), 1.0, 0.0, 0.0;
  col_l << 0.0, cl.z(), -cl.y(), 1.0, 0.0, 0.0;
  f = col_r * u[0] + col_l * u[1];
  if (J_f_u) {
    J_f_u->resize(6, 2);
    J_f_u->col(0) = col_r;
    J_f_u->col(1) = col_l;
  }
  if (J_f_gamma) J_f_gamma->resize(6, 0);
}

void Boat::external_wrench(double /*t*/, const SE3& g, const Vec6& xi, Vec6& f, Mat6* J_f_g,
                           Mat6* J_f_xi) const {
  const bool want_g = J_f_g != nullptr;
  const Vec3 n = g.R.transpose() * Vec3::UnitZ();
  const Mat3 n_hat = skew(n);
  const double x_z = g.x.z();
  const double L = p_.hull_size.x(), B = p_.hull_size.y(), H = p_.hull_size.z();
  const double rho_g = p_.water_density * p_.gravity;

  Vec3 torque = Vec3::Zero(), force = Vec3::Zero();
  if (J_f_g) J_f_g->setZero();
  if (J_f_xi) J_f_xi->setZero();

  // Gravity at the centre of mass: force -m g n, no torque.
  force += -p_.mass * p_.gravity * n;
  if (want_g) J_f_g->block<3, 3>(3, 0) += -p_.mass * p_.gravity * n_hat;

  // Buoyancy: rho g dV_j n at the centroid r_j of each column's wet part.
  const int nc = buoyancy_columns(p_);
  const double da = L / nc, db = B / nc;
  const double k = rho_g * da * db;
  const Vec3 e3_x_n = Vec3::UnitZ().cross(n);
  double S = 0.0;  // sum of wet lengths
  for (int i = 0; i < nc; ++i) {
    const double a = -0.5 * L + (i + 0.5) * da;
    for (int j = 0; j < nc; ++j) {
      const double b = -0.5 * B + (j + 0.5) * db;
      const Column col = eval_column(a, b, H, x_z, n, want_g);
      if (col.s == 0.0) continue;
      const Vec3 r(a, b, col.zc);
      const Vec3 r_x_n = r.cross(n);
      S += col.s;
      torque += k * col.s * r_x_n;
      if (want_g) {
        J_f_g->block<3, 3>(0, 0) += (k * col.s) * skew(r) * n_hat;
        if (col.active) {
          // d(s r x n)/ds, including dz_c/ds = sigma/2 (sigma = sign n_z).
          const double sigma = n.z() > 0.0 ? 1.0 : -1.0;
          const Vec3 dtau_ds = k * (r_x_n + 0.5 * sigma * col.s * e3_x_n);
          J_f_g->block<3, 3>(0, 0) += dtau_ds * col.ds_dtheta.transpose();
          J_f_g->block<3, 3>(0, 3) += dtau_ds * col.ds_dv.transpose();
          J_f_g->block<3, 3>(3, 0) += (k * n) * col.ds_dtheta.transpose();
          J_f_g->block<3, 3>(3, 3) += (k * n) * col.ds_dv.transpose();
        }
      }
    }
  }
  force += k * S * n;
  if (want_g) J_f_g->block<3, 3>(3, 0) += k * S * n_hat;

  // Wind: constant world force at a body point.
  if (p_.wind_force.squaredNorm() > 0.0) {
    const Vec3 w = g.R.transpose() * p_.wind_force;
    force += w;
    torque += p_.wind_point.cross(w);
    if (want_g) {
      const Mat3 w_hat = skew(w);
      J_f_g->block<3, 3>(3, 0) += w_hat;
      J_f_g->block<3, 3>(0, 0) += skew(p_.wind_point) * w_hat;
    }
  }

  // Hydrodynamic patches, averaged over the wet area A. Patch i lies at depth
  // d_i = -(x_z + n . r_i) and weighs w_i = a_i s(d_i), with s the step (wet_smoothing = 0:
  // the paper's wet set, piecewise constant in g, so absent from the Jacobian) or the
  // logistic 1 / (1 + exp(-d / eps)), which makes the wrench smooth in g for optimisation.
  const double eps = p_.wet_smoothing;
  const auto weight = [eps](double area, double depth, double& dw_dd) {
    dw_dd = 0.0;
    if (eps == 0.0) return depth > 0.0 ? area : 0.0;
    const double s = 1.0 / (1.0 + std::exp(-depth / eps));
    dw_dd = area * s * (1.0 - s) / eps;
    return area * s;
  };
  // dd_i/dg for the right perturbation (dtheta, dv): n moves by n x dtheta, x_z by n . dv.
  const auto depth_gradient = [&n](const Vec3& r) {
    Vec6 dd;
    dd << -r.cross(n), -n;
    return dd;
  };
  double A = 0.0;
  Vec6 dA_dg = Vec6::Zero();
  for (const Patch& pt : patches_) {
    double dw_dd;
    A += weight(pt.area, -(x_z + n.dot(pt.r)), dw_dd);
    if (want_g && dw_dd != 0.0) dA_dg += dw_dd * depth_gradient(pt.r);
  }
  if (A > 0.0) {
    const Vec3 omega = xi.head<3>(), v = xi.tail<3>();
    const Mat3& E = p_.damping_E;
    const Vec3 eta_body = g.R.transpose() * p_.current;
    const Mat3 E_eta_hat = E * skew(eta_body);
    Vec3 f_sum = Vec3::Zero(), t_sum = Vec3::Zero();
    Mat3 Fth = Mat3::Zero(), Fom = Mat3::Zero(), Tth = Mat3::Zero(), Tom = Mat3::Zero(),
         Tv = Mat3::Zero();
    Mat3 Fv = Mat3::Zero();
    // sum_i fh_i (dw_i/dg)^T and sum_i (r_i x fh_i) (dw_i/dg)^T, for the smooth weights.
    Eigen::Matrix<double, 3, 6> F_w = Eigen::Matrix<double, 3, 6>::Zero();
    Eigen::Matrix<double, 3, 6> T_w = Eigen::Matrix<double, 3, 6>::Zero();
    for (const Patch& pt : patches_) {
      double dw_dd;
      const double w = weight(pt.area, -(x_z + n.dot(pt.r)), dw_dd);
      if (w == 0.0) continue;
      const double wgt = w / A;
      const Vec3 fh = -E * (v + omega.cross(pt.r) - eta_body) - p_.pressure_P * pt.n;
      const Vec3 th = pt.r.cross(fh);
      const Mat3 r_hat = skew(pt.r);
      f_sum += wgt * fh;
      t_sum += wgt * th;
      if (J_f_g || J_f_xi) {
        // dfh/domega = E r^, dfh/dv = -E, dfh/dtheta = E (R^T eta)^.
        const Mat3 dfh_dom = E * r_hat;
        if (J_f_xi) {
          Fom += wgt * dfh_dom;
          Tom += wgt * r_hat * dfh_dom;
          Fv += -wgt * E;
          Tv += -wgt * r_hat * E;
        }
        if (J_f_g) {
          Fth += wgt * E_eta_hat;
          Tth += wgt * r_hat * E_eta_hat;
          if (dw_dd != 0.0) {
            const Vec6 dw_dg = dw_dd * depth_gradient(pt.r);
            F_w += fh * dw_dg.transpose();
            T_w += th * dw_dg.transpose();
          }
        }
      }
    }
    torque += t_sum;
    force += f_sum;
    if (J_f_xi) {
      J_f_xi->block<3, 3>(0, 0) += Tom;
      J_f_xi->block<3, 3>(0, 3) += Tv;
      J_f_xi->block<3, 3>(3, 0) += Fom;
      J_f_xi->block<3, 3>(3, 3) += Fv;
    }
    if (J_f_g) {
      J_f_g->block<3, 3>(0, 0) += Tth;
      J_f_g->block<3, 3>(3, 0) += Fth;
      // d(w_i / A) = (dw_i - (w_i / A) dA) / A.
      J_f_g->block<3, 6>(0, 0) += (T_w - t_sum * dA_dg.transpose()) / A;
      J_f_g->block<3, 6>(3, 0) += (F_w - f_sum * dA_dg.transpose()) / A;
    }
  }

  f.head<3>() = torque;
  f.tail<3>() = force;
}

double Boat::equilibrium_height() const {
  // Level box: wet volume L B d = m / rho, bottom at x_z - H/2 = -d.
  const double draft = p_.mass / (p_.water_density * p_.hull_size.x() * p_.hull_size.y());
  return 0.5 * p_.hull_size.z() - draft;
}

// -rho g (integral of z over the wet volume) = -rho g V z_centroid, plus gravity's m g x_z.
double Boat::potential_energy(const SE3& g) const {
  Vec3 centroid;
  const double V = submerged_volume(g, &centroid);
  return p_.mass * p_.gravity * g.x.z() - p_.water_density * p_.gravity * V * centroid.z();
}

double Boat::submerged_volume(const SE3& g, Vec3* centroid_world) const {
  const Vec3 n = g.R.transpose() * Vec3::UnitZ();
  const double L = p_.hull_size.x(), B = p_.hull_size.y(), H = p_.hull_size.z();
  const int nc = buoyancy_columns(p_);
  const double da = L / nc, db = B / nc;
  double V = 0.0;
  Vec3 moment = Vec3::Zero();
  for (int i = 0; i < nc; ++i) {
    const double a = -0.5 * L + (i + 0.5) * da;
    for (int j = 0; j < nc; ++j) {
      const double b = -0.5 * B + (j + 0.5) * db;
      const Column col = eval_column(a, b, H, g.x.z(), n, false);
      const double dV = col.s * da * db;
      V += dV;
      moment += dV * Vec3(a, b, col.zc);
    }
  }
  // A hull clear of the water has no centroid: report the centre of mass.
  if (centroid_world) *centroid_world = V > 0.0 ? g.act(moment / V) : g.x;
  return V;
}

}  // namespace marsden::vehicle
