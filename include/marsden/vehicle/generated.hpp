// A holonomic vehicle on SE(3) or SE(2) whose wrenches and their derivatives were generated
// by marsden.symbolic (CasADi, docs/own-system.md), compiled into a shared object and
// loaded here at run time. The core calls the object's plain C entry points (its ABI
// below); it does not link CasADi.
//
// ABI version 1: every entry point is a C function; matrices are dense and column-major;
// a null output pointer skips that output. n = 6 on SE(3), 3 on SE(2).
//   int  marsden_abi_version(void)              1
//   int  marsden_group(void)                    3: SE(3), 2: SE(2); absent: SE(3) (the
//                                               objects made before SE(2) was added)
//   int  marsden_num_controls(void)             nu, 0..kMaxInputs
//   int  marsden_num_shape(void)                ns, 0..kMaxInputs
//   int  marsden_depends_on_time(void)          1 if f_ext depends on t
//   void marsden_inertia(double* I)             (n x n) locked inertia
//   int  marsden_control_wrench(const double* gamma (ns), const double* u (nu),
//            double* f (n), double* J_f_u (n x nu), double* J_f_gamma (n x ns))
//   int  marsden_external_wrench(const double* t (1), const double* R, const double* p,
//            const double* omega, const double* v,
//            double* f (n), double* J_f_g (n x n, right perturbation), double* J_f_xi (n x n))
//   int  marsden_potential_energy(const double* R, const double* p, double* V (1))
// with, on SE(3), R (3 x 3), p (3), omega (3), v (3), and on SE(2), R the heading theta
// (1, in (-pi, pi]: expressions must be 2 pi periodic in it), p (2), omega (1), v (2).
// Wrenches are body-frame (torque, force): (tau, f1, f2) on SE(2).
// The int results are 0 on success.
#pragma once

#include <filesystem>
#include <memory>

#include "marsden/vehicle/holonomic.hpp"

namespace marsden::vehicle {

inline constexpr int kGeneratedAbiVersion = 1;

// The group a generated holonomic object is written for (marsden_group): 3 or 2. Throws
// InputError naming the file when it cannot be loaded or is not a Marsden model.
int generated_vehicle_group(const std::filesystem::path& library);

template <class G>
class GeneratedHolonomic final : public HolonomicModel<G> {
 public:
  using Tangent = typename G::Tangent;
  using Jac = typename G::Jacobian;

  // Loads the shared object at `library`. Throws InputError naming the file when it cannot
  // be loaded, lacks an entry point, has another ABI version or group, or an invalid inertia.
  static std::shared_ptr<const GeneratedHolonomic> load(const std::filesystem::path& library);

  const std::filesystem::path& library() const;
  int num_controls() const override;
  int num_shape() const override;
  bool wrench_depends_on_time() const override;
  void control_wrench(const InputVec& gamma, const InputVec& u, Tangent& f,
                      InputJacobian<G>* J_f_u, InputJacobian<G>* J_f_gamma) const override;
  void external_wrench(double t, const G& g, const Tangent& xi, Tangent& f, Jac* J_f_g,
                       Jac* J_f_xi) const override;
  double potential_energy(const G& g) const override;

  struct Library;  // the loaded object and its entry points (generated.cpp)

 private:
  GeneratedHolonomic(std::shared_ptr<const Library> lib, const Jac& inertia);
  std::shared_ptr<const Library> lib_;
};

using GeneratedVehicle = GeneratedHolonomic<SE3>;
using GeneratedPlanarVehicle = GeneratedHolonomic<SE2>;

extern template class GeneratedHolonomic<SE3>;
extern template class GeneratedHolonomic<SE2>;

}  // namespace marsden::vehicle
