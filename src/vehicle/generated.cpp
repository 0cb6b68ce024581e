#include "marsden/vehicle/generated.hpp"

#include <string>

#include "marsden/error.hpp"
#include "support/shared_object.hpp"

namespace marsden::vehicle {

using CountFn = int (*)();
using InertiaFn = void (*)(double*);
using ControlFn = int (*)(const double*, const double*, double*, double*, double*);
using ExternalFn = int (*)(const double*, const double*, const double*, const double*,
                           const double*, double*, double*, double*);
using PotentialFn = int (*)(const double*, const double*, double*);

template <class G>
struct GeneratedHolonomic<G>::Library : detail::SharedObject {
  int nu = 0, ns = 0;
  bool depends_on_time = false;
  ControlFn control = nullptr;
  ExternalFn external = nullptr;
  PotentialFn potential = nullptr;
};

using detail::check_status;
using detail::entry;
using detail::generated_where;

namespace {

int object_group(const detail::SharedObject& so) {
  const auto group = reinterpret_cast<CountFn>(detail::shared_object_find(so, "marsden_group"));
  return group ? group() : 3;
}

const char* group_name(int group) { return group == 2 ? "SE(2)" : "SE(3)"; }

// The pose as the ABI passes it: (R, p) on SE(3); (theta, p) on SE(2).
struct PoseArgs {
  double theta = 0.0;
  const double* R;
  const double* p;
  const double* rotation() const { return R ? R : &theta; }
};
PoseArgs pose_args(const SE3& g) { return {0.0, g.R.data(), g.x.data()}; }
PoseArgs pose_args(const SE2& g) { return {g.angle(), nullptr, g.x.data()}; }

}  // namespace

int generated_vehicle_group(const std::filesystem::path& library) {
  const detail::SharedObject so = detail::open_shared_object(library);
  entry<CountFn>(so, "marsden_abi_version");
  return object_group(so);
}

template <class G>
std::shared_ptr<const GeneratedHolonomic<G>> GeneratedHolonomic<G>::load(
    const std::filesystem::path& library) {
  auto lib = std::make_shared<Library>();
  static_cast<detail::SharedObject&>(*lib) = detail::open_shared_object(library);
  const int abi = entry<CountFn>(*lib, "marsden_abi_version")();
  if (abi != kGeneratedAbiVersion)
    throw InputError(generated_where(library) + ": ABI version " + std::to_string(abi) + ", expected " +
                     std::to_string(kGeneratedAbiVersion) + "; rebuild it with marsden.symbolic");
  constexpr int want = G::kDim == 6 ? 3 : 2;
  if (const int group = object_group(*lib); group != want)
    throw InputError(generated_where(library) + ": a vehicle on " +
                     (group == 2 || group == 3 ? std::string(group_name(group))
                                               : "group " + std::to_string(group)) +
                     ", expected one on " + group_name(want));
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
  Jac inertia;
  entry<InertiaFn>(*lib, "marsden_inertia")(inertia.data());
  try {
    return std::shared_ptr<const GeneratedHolonomic>(new GeneratedHolonomic(lib, inertia));
  } catch (const InputError& e) {
    throw InputError(generated_where(library) + ": " + e.what());
  }
}

template <class G>
GeneratedHolonomic<G>::GeneratedHolonomic(std::shared_ptr<const Library> lib, const Jac& inertia)
    : HolonomicModel<G>(inertia), lib_(std::move(lib)) {}

template <class G>
const std::filesystem::path& GeneratedHolonomic<G>::library() const {
  return lib_->path;
}
template <class G>
int GeneratedHolonomic<G>::num_controls() const {
  return lib_->nu;
}
template <class G>
int GeneratedHolonomic<G>::num_shape() const {
  return lib_->ns;
}
template <class G>
bool GeneratedHolonomic<G>::wrench_depends_on_time() const {
  return lib_->depends_on_time;
}

template <class G>
void GeneratedHolonomic<G>::control_wrench(const InputVec& gamma, const InputVec& u, Tangent& f,
                                           InputJacobian<G>* J_f_u,
                                           InputJacobian<G>* J_f_gamma) const {
  if (u.size() != lib_->nu || gamma.size() != lib_->ns)
    throw InputError(generated_where(lib_->path) + ": expected " + std::to_string(lib_->nu) +
                     " controls and " + std::to_string(lib_->ns) + " shape variables, got " +
                     std::to_string(u.size()) + " and " + std::to_string(gamma.size()));
  // A resized InputJacobian is dense column-major with leading dimension n: the ABI's layout.
  if (J_f_u) J_f_u->resize(G::kDim, lib_->nu);
  if (J_f_gamma) J_f_gamma->resize(G::kDim, lib_->ns);
  check_status(lib_->control(gamma.data(), u.data(), f.data(), J_f_u ? J_f_u->data() : nullptr,
                             J_f_gamma ? J_f_gamma->data() : nullptr),
               *lib_, "marsden_control_wrench");
}

template <class G>
void GeneratedHolonomic<G>::external_wrench(double t, const G& g, const Tangent& xi, Tangent& f,
                                            Jac* J_f_g, Jac* J_f_xi) const {
  constexpr int kAngular = G::kDim == 6 ? 3 : 1;
  const Eigen::Matrix<double, kAngular, 1> omega = xi.template head<kAngular>();
  const Eigen::Matrix<double, G::kDim - kAngular, 1> v = xi.template tail<G::kDim - kAngular>();
  const PoseArgs pose = pose_args(g);
  check_status(lib_->external(&t, pose.rotation(), pose.p, omega.data(), v.data(),
                              f.data(), J_f_g ? J_f_g->data() : nullptr,
                              J_f_xi ? J_f_xi->data() : nullptr),
               *lib_, "marsden_external_wrench");
}

template <class G>
double GeneratedHolonomic<G>::potential_energy(const G& g) const {
  double V = 0.0;
  const PoseArgs pose = pose_args(g);
  check_status(lib_->potential(pose.rotation(), pose.p, &V), *lib_,
               "marsden_potential_energy");
  return V;
}

template class GeneratedHolonomic<SE3>;
template class GeneratedHolonomic<SE2>;

}  // namespace marsden::vehicle
