#include "marsden/vehicle/generated.hpp"

#include <string>

#include "marsden/error.hpp"
#include "vehicle/shared_object.hpp"

namespace marsden {

using CountFn = int (*)();
using InertiaFn = void (*)(double*);
using ControlFn = int (*)(const double*, const double*, double*, double*, double*);
using ExternalFn = int (*)(const double*, const double*, const double*, const double*,
                           const double*, double*, double*, double*);
using PotentialFn = int (*)(const double*, const double*, double*);

struct GeneratedVehicle::Library : detail::SharedObject {
  int nu = 0, ns = 0;
  bool depends_on_time = false;
  ControlFn control = nullptr;
  ExternalFn external = nullptr;
  PotentialFn potential = nullptr;
};

using detail::check_status;
using detail::entry;
using detail::generated_where;

std::shared_ptr<const GeneratedVehicle> GeneratedVehicle::load(
    const std::filesystem::path& library) {
  auto lib = std::make_shared<Library>();
  static_cast<detail::SharedObject&>(*lib) = detail::open_shared_object(library);
  const int abi = entry<CountFn>(*lib, "marsden_abi_version")();
  if (abi != kGeneratedAbiVersion)
    throw InputError(generated_where(library) + ": ABI version " + std::to_string(abi) + ", expected " +
                     std::to_string(kGeneratedAbiVersion) + "; rebuild it with marsden.symbolic");
  lib->nu = entry<CountFn>(*lib, "marsden_num_controls")();
  lib->ns = entry<CountFn>(*lib, "marsden_num_shape")();
  if (lib->nu < 0 || lib->nu > kMaxInputs || lib->ns < 0 || lib->ns > kMaxInputs)
    throw InputError(generated_where(library) + ": " + std::to_string(lib->nu) + " controls and " +
                     std::to_string(lib->ns) + " shape variables, at most " +
                     std::to_string(kMaxInputs) + " of each");
  lib->depends_on_time = entry<CountFn>(*lib, "marsden_depends_on_time")() != 0;
  lib->control = entry<ControlFn>(*lib, "marsden_control_wrench");
  lib->external = entry<ExternalFn>(*lib, "marsden_external_wrench");
  lib->potential = entry<PotentialFn>(*lib, "marsden_potential_energy");
  Mat6 inertia;
  entry<InertiaFn>(*lib, "marsden_inertia")(inertia.data());
  try {
    return std::shared_ptr<const GeneratedVehicle>(new GeneratedVehicle(lib, inertia));
  } catch (const InputError& e) {
    throw InputError(generated_where(library) + ": " + e.what());
  }
}

GeneratedVehicle::GeneratedVehicle(std::shared_ptr<const Library> lib, const Mat6& inertia)
    : HolonomicModel<SE3>(inertia), lib_(std::move(lib)) {}

const std::filesystem::path& GeneratedVehicle::library() const { return lib_->path; }
int GeneratedVehicle::num_controls() const { return lib_->nu; }
int GeneratedVehicle::num_shape() const { return lib_->ns; }
bool GeneratedVehicle::wrench_depends_on_time() const { return lib_->depends_on_time; }

void GeneratedVehicle::control_wrench(const InputVec& gamma, const InputVec& u, Vec6& f,
                                      InputJacobian<SE3>* J_f_u,
                                      InputJacobian<SE3>* J_f_gamma) const {
  if (u.size() != lib_->nu || gamma.size() != lib_->ns)
    throw InputError(generated_where(lib_->path) + ": expected " + std::to_string(lib_->nu) +
                     " controls and " + std::to_string(lib_->ns) + " shape variables, got " +
                     std::to_string(u.size()) + " and " + std::to_string(gamma.size()));
  // A resized InputJacobian is dense column-major with leading dimension 6: the ABI's layout.
  if (J_f_u) J_f_u->resize(6, lib_->nu);
  if (J_f_gamma) J_f_gamma->resize(6, lib_->ns);
  check_status(lib_->control(gamma.data(), u.data(), f.data(), J_f_u ? J_f_u->data() : nullptr,
                      J_f_gamma ? J_f_gamma->data() : nullptr),
        *lib_, "marsden_control_wrench");
}

void GeneratedVehicle::external_wrench(double t, const SE3& g, const Vec6& xi, Vec6& f,
                                       Mat6* J_f_g, Mat6* J_f_xi) const {
  const Vec3 omega = xi.head<3>(), v = xi.tail<3>();
  check_status(lib_->external(&t, g.R.data(), g.x.data(), omega.data(), v.data(), f.data(),
                       J_f_g ? J_f_g->data() : nullptr, J_f_xi ? J_f_xi->data() : nullptr),
        *lib_, "marsden_external_wrench");
}

double GeneratedVehicle::potential_energy(const SE3& g) const {
  double V = 0.0;
  check_status(lib_->potential(g.R.data(), g.x.data(), &V), *lib_, "marsden_potential_energy");
  return V;
}

}  // namespace marsden
