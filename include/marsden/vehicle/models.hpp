// Holonomic vehicle models of vehicles §4.3. SI units throughout: kg, m, s, N, rad.
// Body frame: x forward, y left, z up (gravity along -z of the world frame).
#pragma once

#include <vector>

#include "marsden/vehicle/holonomic.hpp"

namespace marsden::vehicle {

inline constexpr double kStandardGravity = 9.81;  // m/s^2, as in the paper

// Block-diagonal inertia diag(J, m I3) on SE(3); J in kg m^2, m in kg.
Mat6 rigid_body_inertia(const Vec3& J_principal, double mass);
// diag(J, m, m) on SE(2).
Mat3 planar_body_inertia(double J, double mass);

// Free rigid body: no controls, no external forces. The inertia may be any SPD matrix.
template <class G>
class FreeBody final : public HolonomicModel<G> {
 public:
  using HolonomicModel<G>::HolonomicModel;
};

// Helicopter, vehicles §4.3.1. Controls u = (collective lift u_c [N], tail-rotor force
// u_psi [N]); shape gamma = (pitch gamma_p, roll gamma_r) tilt of the main rotor [rad].
struct HelicopterParams {
  double mass = 5.0;                        // kg
  Vec3 J_principal = Vec3(0.2, 0.3, 0.3);   // kg m^2
  double d_t = 0.2;  // m, main-rotor hub height above the centre of mass
  double d_r = 0.8;  // m, tail-rotor lever arm behind the centre of mass
  double gravity = kStandardGravity;
};

class Helicopter final : public HolonomicModel<SE3> {
 public:
  explicit Helicopter(const HelicopterParams& p);
  const HelicopterParams& params() const { return p_; }
  int num_controls() const override { return 2; }
  int num_shape() const override { return 2; }
  void control_wrench(const InputVec& gamma, const InputVec& u, Vec6& f,
                      InputJacobian<SE3>* J_f_u, InputJacobian<SE3>* J_f_gamma) const override;
  void external_wrench(double t, const SE3& g, const Vec6& xi, Vec6& f, Mat6* J_f_g,
                       Mat6* J_f_xi) const override;
  double potential_energy(const SE3& g) const override;

 private:
  HelicopterParams p_;
};

// Boat, vehicles §4.3.2 and eq. (15), with a box hull of size (L, B, H) centred at the
// centre of mass. World z is up, the water surface is z = 0; n = R^T e_z is "up" in the
// body frame, so body point p is at world height x_z + n . p. Wrench (torque, force) in
// the body frame about the centre of mass, the sum of:
// - gravity: force -m g n, no torque;
// - buoyancy: the footprint is split into a fixed grid of max(16, patches_per_side)^2
//   vertical (body z) columns; the wet length s_j in [0, H] of column j is the part of its
//   axis below z = 0 (a column with |n_z| < 1e-12 lies flat: wholly wet or dry). Force
//   rho g V n with V = sum_j s_j dA, torque rho g sum_j s_j dA (r_j x n), r_j the centroid
//   of the wet part. This is conservative, exact for the volume of a level box and
//   accurate for moderate tilts; a hull near 90 degrees of heel is resolved only to the
//   column spacing. equilibrium_height() is the closed form for a level box with
//   rho g V = m g (pressure_P and the other forces ignored);
// - hydrodynamics: 6 k x k patches on the box faces (k = patches_per_side); a patch is wet
//   when its centre is below z = 0; (1/A) sum_wet dA_i (r_i x f_i, f_i), A the wet area,
//   f_i = -E (v + omega x r_i - R^T eta) - P n_i with a uniform current eta. Being an
//   area-weighted mean, E is a total damping and P a total normal force. The wet set is
//   piecewise constant in g, so these forces jump slightly when a patch crosses z = 0;
// - wind: constant world force F_w at body point p_w: (p_w x R^T F_w, R^T F_w).
// Controls u = (u_r, u_l) [N]: right and left thrusters pushing along body x; a thruster at
// c gives ((0, c_z, -c_y) u, (u, 0, 0)) (the printed matrix of the paper has sign errors).
// No shape variables. Jacobians of f_ext are exact (zero across the wet-set jumps; the
// column clamps s_j = 0 or H are kinks).
// Defaults: a 3 x 1.2 x 0.6 m, 400 kg box (uniform-box inertia): draft m / (rho L B) =
// 0.111 m, metacentric heights 0.84 m (roll) and 6.5 m (pitch); heave, roll and pitch
// settle within about 3 s, surge decays with the time constant m / E_xx = 4 s.
struct BoatParams {
  double mass = 400.0;                      // kg
  Vec3 J_principal = Vec3(60.0, 312.0, 348.0);  // kg m^2
  Vec3 hull_size = Vec3(3.0, 1.2, 0.6);     // m, box length, beam, height (centred at com)
  double water_density = 1000.0;            // kg/m^3
  Mat3 damping_E = Vec3(100.0, 1000.0, 2000.0).asDiagonal();  // N s/m, total over the wet hull
  double pressure_P = 0.0;                  // N, total normal (pressure) force magnitude
  Vec3 current = Vec3::Zero();              // m/s, water velocity eta in the world frame
  Vec3 wind_force = Vec3::Zero();           // N, world-frame wind force on the superstructure
  Vec3 wind_point = Vec3(0.0, 0.0, 0.5);    // m, body point where the wind acts
  Vec3 thruster_right = Vec3(-1.5, -0.4, -0.25);  // m, body position c_r (below the waterline)
  Vec3 thruster_left = Vec3(-1.5, 0.4, -0.25);    // m, body position c_l
  int patches_per_side = 8;                 // surface patches per box edge (6 k^2 in all)
  // m; 0: a patch is wet when its centre is below z = 0 (the paper). > 0: it counts with the
  // logistic weight 1 / (1 + exp(-depth / wet_smoothing)), so that the hydrodynamic wrench
  // is smooth in the pose, as optimisation needs (docs/dmoc.md).
  double wet_smoothing = 0.0;
  double gravity = kStandardGravity;        // m/s^2
};

class Boat final : public HolonomicModel<SE3> {
 public:
  explicit Boat(const BoatParams& p);
  const BoatParams& params() const { return p_; }
  int num_controls() const override { return 2; }
  void control_wrench(const InputVec& gamma, const InputVec& u, Vec6& f,
                      InputJacobian<SE3>* J_f_u, InputJacobian<SE3>* J_f_gamma) const override;
  void external_wrench(double t, const SE3& g, const Vec6& xi, Vec6& f, Mat6* J_f_g,
                       Mat6* J_f_xi) const override;
  // Gravity plus buoyancy potential, m g x_z - rho g V z_centroid [J]: the buoyancy force
  // is its negative gradient, so a boat without damping keeps its energy.
  double potential_energy(const SE3& g) const override;
  // Height of the centre of mass at which buoyancy balances gravity, level hull [m].
  double equilibrium_height() const;
  // Submerged volume [m^3] and its centroid in world coordinates at pose g.
  double submerged_volume(const SE3& g, Vec3* centroid_world) const;

 private:
  struct Patch {
    Vec3 r;       // centre, body frame
    Vec3 n;       // outward unit normal, body frame
    double area;  // m^2
  };
  BoatParams p_;
  std::vector<Patch> patches_;
};

}  // namespace marsden::vehicle
