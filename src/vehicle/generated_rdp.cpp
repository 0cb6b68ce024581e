#include "marsden/vehicle/generated_rdp.hpp"

#include <string>

#include "marsden/error.hpp"
#include "support/shared_object.hpp"

namespace marsden::vehicle {

using CountFn = int (*)();
using LagrangianFn = int (*)(const double*, const double*, const double*, double*, double*,
                             double*);
using ShapeMatrixFn = int (*)(const double*, double*, double*);
using ShapeForceFn = int (*)(const double*, const double*, const double*, double*, double*);

struct GeneratedRdpVehicle::Library : detail::SharedObject {
  int nr = 0, nb = 0;
  unsigned prescribed = 0;
  LagrangianFn lagrangian = nullptr;
  ShapeMatrixFn connection = nullptr, symmetry_basis = nullptr;
  ShapeForceFn shape_force = nullptr;  // optional: null when the object has none
};

using detail::check_status;
using detail::entry;
using detail::generated_where;

std::shared_ptr<const GeneratedRdpVehicle> GeneratedRdpVehicle::load(
    const std::filesystem::path& library) {
  auto lib = std::make_shared<Library>();
  static_cast<detail::SharedObject&>(*lib) = detail::open_shared_object(library);
  const int abi = entry<CountFn>(*lib, "marsden_rdp_abi_version")();
  if (abi != kGeneratedRdpAbiVersion)
    throw InputError(generated_where(library) + ": RDP ABI version " + std::to_string(abi) +
                     ", expected " + std::to_string(kGeneratedRdpAbiVersion) +
                     "; rebuild it with marsden.symbolic");
  lib->nr = entry<CountFn>(*lib, "marsden_rdp_num_shape")();
  lib->nb = entry<CountFn>(*lib, "marsden_rdp_num_symmetry")();
  if (lib->nr < 0 || lib->nr > kRdpMaxShape || lib->nb < 0 || lib->nb > 3)
    throw InputError(generated_where(library) + ": " + std::to_string(lib->nr) +
                     " shape variables and " + std::to_string(lib->nb) +
                     " symmetry directions; RDP takes at most " + std::to_string(kRdpMaxShape) +
                     " and 3");
  const int mask = entry<CountFn>(*lib, "marsden_rdp_prescribed")();
  if (mask < 0 || mask >= (1 << lib->nr))
    throw InputError(generated_where(library) + ": prescribed mask " + std::to_string(mask) +
                     " names shape variables beyond the " + std::to_string(lib->nr));
  lib->prescribed = static_cast<unsigned>(mask);
  lib->lagrangian = entry<LagrangianFn>(*lib, "marsden_rdp_lagrangian");
  lib->connection = entry<ShapeMatrixFn>(*lib, "marsden_rdp_connection");
  lib->symmetry_basis = entry<ShapeMatrixFn>(*lib, "marsden_rdp_symmetry_basis");
  lib->shape_force =
      reinterpret_cast<ShapeForceFn>(detail::shared_object_find(*lib, "marsden_rdp_shape_force"));
  return std::shared_ptr<const GeneratedRdpVehicle>(new GeneratedRdpVehicle(lib));
}

GeneratedRdpVehicle::GeneratedRdpVehicle(std::shared_ptr<const Library> lib)
    : lib_(std::move(lib)) {}

const std::filesystem::path& GeneratedRdpVehicle::library() const { return lib_->path; }
int GeneratedRdpVehicle::num_shape() const { return lib_->nr; }
int GeneratedRdpVehicle::num_symmetry() const { return lib_->nb; }
bool GeneratedRdpVehicle::prescribed(int i) const {
  return i >= 0 && i < lib_->nr && ((lib_->prescribed >> i) & 1u) != 0;
}

double GeneratedRdpVehicle::lagrangian(const ShapeVec& r, const ShapeVec& u, const Vec3& xi,
                                       LagVec* grad, LagMat* hess) const {
  const int nl = 2 * lib_->nr + 3;
  // Resized fixed-capacity vectors and matrices are dense column-major: the ABI's layout.
  if (grad) grad->resize(nl);
  if (hess) hess->resize(nl, nl);
  double l = 0.0;
  check_status(lib_->lagrangian(r.data(), u.data(), xi.data(), &l, grad ? grad->data() : nullptr,
                                hess ? hess->data() : nullptr),
               *lib_, "marsden_rdp_lagrangian");
  return l;
}

bool GeneratedRdpVehicle::has_shape_force() const { return lib_->shape_force != nullptr; }

void GeneratedRdpVehicle::shape_force(const ShapeVec& r, const ShapeVec& u, const Vec3& xi,
                                      ShapeVec& f, ShapeForceJac* J) const {
  const int nr = lib_->nr;
  f.resize(nr);
  if (J) J->resize(nr, 2 * nr + 3);
  if (!lib_->shape_force) {
    f.setZero();
    if (J) J->setZero();
    return;
  }
  check_status(lib_->shape_force(r.data(), u.data(), xi.data(), f.data(), J ? J->data() : nullptr),
               *lib_, "marsden_rdp_shape_force");
}

namespace {

// dM/dr_j, written by the generated code one after another into `stacked`, into M's array.
template <class Mat>
void unstack(const double* stacked, int rows, int cols, int nr, std::array<Mat, kRdpMaxShape>& dM) {
  for (int j = 0; j < nr; ++j) {
    dM[static_cast<std::size_t>(j)].resize(rows, cols);
    for (int k = 0; k < rows * cols; ++k)
      dM[static_cast<std::size_t>(j)].data()[k] = stacked[j * rows * cols + k];
  }
}

}  // namespace

void GeneratedRdpVehicle::connection(const ShapeVec& r, ConnectionMat<SE2>& A,
                                     std::array<ConnectionMat<SE2>, kRdpMaxShape>* dA) const {
  const int nr = lib_->nr;
  A.resize(3, nr);
  double stacked[3 * kRdpMaxShape * kRdpMaxShape];
  check_status(lib_->connection(r.data(), A.data(), dA ? stacked : nullptr), *lib_,
               "marsden_rdp_connection");
  if (dA) unstack(stacked, 3, nr, nr, *dA);
}

void GeneratedRdpVehicle::symmetry_basis(const ShapeVec& r, SymBasisMat<SE2>& E,
                                         std::array<SymBasisMat<SE2>, kRdpMaxShape>* dE) const {
  const int nr = lib_->nr, nb = lib_->nb;
  E.resize(3, nb);
  double stacked[3 * 3 * kRdpMaxShape];
  check_status(lib_->symmetry_basis(r.data(), E.data(), dE ? stacked : nullptr), *lib_,
               "marsden_rdp_symmetry_basis");
  if (dE) unstack(stacked, 3, nb, nr, *dE);
}

double GeneratedRdpVehicle::energy(const ShapeVec& r, const ShapeVec& u, const Vec3& xi) const {
  LagVec grad;
  const double l = lagrangian(r, u, xi, &grad, nullptr);
  const int nr = lib_->nr;
  return grad.segment(nr, nr).dot(u) + grad.tail<3>().dot(xi) - l;
}

}  // namespace marsden::vehicle
