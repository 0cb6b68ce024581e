#include "marsden/nonholonomic/generated.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <string>

#include "marsden/error.hpp"
#include "support/shared_object.hpp"

namespace marsden::nonholonomic {

using CountFn = int (*)();
using NameFn = const char* (*)(int);
using FlagFn = int (*)(int);
using QFn = int (*)(const double*, double*);
using IndexFn = int (*)(int, const double*, double*);
using Index2Fn = int (*)(int, int, const double*, double*);
using PotentialFn = int (*)(const double*, double*, double*, double*);
using BodyAxesFn = int (*)(int, double*);
using BodyPoseFn = int (*)(int, const double*, double*, double*);
using ForceFn = int (*)(const double*, const double*, double*, double*, double*);

struct GeneratedNonholonomicModel::Library : detail::SharedObject {
  unsigned prescribed = 0;  // bit i: coordinate i
  std::vector<std::string> names;
  QFn mass = nullptr, constraint = nullptr, control = nullptr;
  IndexFn mass_derivative = nullptr, constraint_derivative = nullptr;
  Index2Fn mass_second_derivative = nullptr;
  PotentialFn potential = nullptr;
  std::vector<GeneratedNhBody> bodies;
  BodyPoseFn body_pose = nullptr;
  ForceFn force = nullptr;  // optional: none for an object generated without a force
};

namespace {

using Library = GeneratedNonholonomicModel::Library;

using detail::check_status;
using detail::entry;
using detail::generated_where;

std::string shape_text(Eigen::Index rows, Eigen::Index cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

// The optional body entries: all of them or none (an object generated before they existed).
void load_bodies(Library& lib) {
  const auto count = reinterpret_cast<CountFn>(
      detail::shared_object_find(lib, "marsden_nh_num_bodies"));
  if (!count) return;
  const int num_bodies = count();
  if (num_bodies < 0 || num_bodies > kNhMaxBodies)
    throw InputError(generated_where(lib.path) + ": " + std::to_string(num_bodies) +
                     " bodies, at most " + std::to_string(kNhMaxBodies));
  const auto name = entry<NameFn>(lib, "marsden_nh_body_name");
  const auto shape = entry<NameFn>(lib, "marsden_nh_body_shape");
  const auto semi_axes = entry<BodyAxesFn>(lib, "marsden_nh_body_semi_axes");
  lib.body_pose = entry<BodyPoseFn>(lib, "marsden_nh_body_pose");
  for (int b = 0; b < num_bodies; ++b) {
    GeneratedNhBody body;
    const char* n = name(b);
    const char* s = shape(b);
    body.name = n ? n : "";
    body.shape = s ? s : "";
    const std::string where = generated_where(lib.path) + ": body " + std::to_string(b);
    if (body.shape != "box" && body.shape != "cylinder" && body.shape != "ellipsoid")
      throw InputError(where + ": shape \"" + body.shape +
                       "\", expected box, cylinder or ellipsoid");
    if (semi_axes(b, body.semi_axes.data()) != 0 || !body.semi_axes.allFinite() ||
        !(body.semi_axes.minCoeff() > 0.0))
      throw InputError(where + ": semi-axes are not three positive numbers");
    lib.bodies.push_back(std::move(body));
  }
}

}  // namespace

std::shared_ptr<const GeneratedNonholonomicModel> GeneratedNonholonomicModel::load(
    const std::filesystem::path& library) {
  auto lib = std::make_shared<Library>();
  static_cast<detail::SharedObject&>(*lib) = detail::open_shared_object(library);
  const int abi = entry<CountFn>(*lib, "marsden_nh_abi_version")();
  if (abi != kGeneratedNhAbiVersion)
    throw InputError(generated_where(library) + ": ABI version " + std::to_string(abi) +
                     ", expected " +
                     std::to_string(kGeneratedNhAbiVersion) +
                     "; rebuild it with marsden.symbolic");
  const int n = entry<CountFn>(*lib, "marsden_nh_dof")();
  const int m = entry<CountFn>(*lib, "marsden_nh_num_constraints")();
  const int c = entry<CountFn>(*lib, "marsden_nh_num_controls")();
  if (n < 2 || n > kNhMaxDof || m < 1 || m >= n || c < 0 || c > kNhMaxDof)
    throw InputError(generated_where(library) + ": n = " + std::to_string(n) +
                     " coordinates, m = " +
                     std::to_string(m) + " constraints, c = " + std::to_string(c) +
                     " controls; need 0 < m < n <= " + std::to_string(kNhMaxDof) +
                     " and c <= " + std::to_string(kNhMaxDof));
  const auto is_prescribed = entry<FlagFn>(*lib, "marsden_nh_prescribed");
  const auto name = entry<NameFn>(*lib, "marsden_nh_coordinate_name");
  for (int i = 0; i < n; ++i) {
    if (is_prescribed(i)) lib->prescribed |= 1u << i;
    const char* s = name(i);
    // Appended rather than "q" + ...: GCC 12 warns falsely (-Wrestrict) on that operator+.
    std::string fallback = "q";
    fallback.append(std::to_string(i));
    lib->names.emplace_back(s ? std::string(s) : fallback);
  }
  lib->mass = entry<QFn>(*lib, "marsden_nh_mass");
  lib->mass_derivative = entry<IndexFn>(*lib, "marsden_nh_mass_derivative");
  lib->mass_second_derivative = entry<Index2Fn>(*lib, "marsden_nh_mass_second_derivative");
  lib->potential = entry<PotentialFn>(*lib, "marsden_nh_potential");
  lib->constraint = entry<QFn>(*lib, "marsden_nh_constraint");
  lib->constraint_derivative = entry<IndexFn>(*lib, "marsden_nh_constraint_derivative");
  lib->control = entry<QFn>(*lib, "marsden_nh_control_directions");
  load_bodies(*lib);
  lib->force = reinterpret_cast<ForceFn>(detail::shared_object_find(*lib, "marsden_nh_force"));
  return std::shared_ptr<const GeneratedNonholonomicModel>(
      new GeneratedNonholonomicModel(lib, n, m, c));
}

GeneratedNonholonomicModel::GeneratedNonholonomicModel(std::shared_ptr<const Library> lib,
                                                       int n, int m, int c)
    : NonholonomicModel(n, m, c), lib_(std::move(lib)) {}

const std::filesystem::path& GeneratedNonholonomicModel::library() const { return lib_->path; }

const std::string& GeneratedNonholonomicModel::coordinate_name(int i) const {
  return lib_->names.at(static_cast<std::size_t>(i));
}

bool GeneratedNonholonomicModel::prescribed(int i) const {
  return i >= 0 && i < dof() && ((lib_->prescribed >> i) & 1u);
}

// A resized NhMat is dense column-major with leading dimension its row count: the ABI's layout.
void GeneratedNonholonomicModel::mass(const NhVec& q, NhMat& M) const {
  M.resize(dof(), dof());
  check_status(lib_->mass(q.data(), M.data()), *lib_, "marsden_nh_mass");
}

void GeneratedNonholonomicModel::mass_derivative(const NhVec& q, int i, NhMat& dM) const {
  dM.resize(dof(), dof());
  check_status(lib_->mass_derivative(i, q.data(), dM.data()), *lib_,
               "marsden_nh_mass_derivative");
}

void GeneratedNonholonomicModel::mass_second_derivative(const NhVec& q, int i, int j,
                                                        NhMat& ddM) const {
  ddM.resize(dof(), dof());
  check_status(lib_->mass_second_derivative(i, j, q.data(), ddM.data()), *lib_,
        "marsden_nh_mass_second_derivative");
}

double GeneratedNonholonomicModel::potential(const NhVec& q) const {
  double V = 0.0;
  check_status(lib_->potential(q.data(), &V, nullptr, nullptr), *lib_, "marsden_nh_potential");
  return V;
}

void GeneratedNonholonomicModel::potential_gradient(const NhVec& q, NhVec& g) const {
  g.resize(dof());
  check_status(lib_->potential(q.data(), nullptr, g.data(), nullptr), *lib_,
               "marsden_nh_potential");
}

void GeneratedNonholonomicModel::potential_hessian(const NhVec& q, NhMat& H) const {
  H.resize(dof(), dof());
  check_status(lib_->potential(q.data(), nullptr, nullptr, H.data()), *lib_,
               "marsden_nh_potential");
}

void GeneratedNonholonomicModel::constraint(const NhVec& q, NhMat& mu) const {
  mu.resize(num_constraints(), dof());
  check_status(lib_->constraint(q.data(), mu.data()), *lib_, "marsden_nh_constraint");
}

void GeneratedNonholonomicModel::constraint_derivative(const NhVec& q, int i,
                                                       NhMat& dmu) const {
  dmu.resize(num_constraints(), dof());
  check_status(lib_->constraint_derivative(i, q.data(), dmu.data()), *lib_,
        "marsden_nh_constraint_derivative");
}

void GeneratedNonholonomicModel::control_directions(const NhVec& q, NhMat& B) const {
  B.resize(dof(), num_controls());
  if (num_controls() == 0) return;
  check_status(lib_->control(q.data(), B.data()), *lib_, "marsden_nh_control_directions");
}

bool GeneratedNonholonomicModel::has_force() const { return lib_->force != nullptr; }

void GeneratedNonholonomicModel::force(const NhVec& q, const NhVec& qdot, NhVec& Q,
                                       NhMat* dQ_dq, NhMat* dQ_dqdot) const {
  if (!lib_->force) {
    NonholonomicModel::force(q, qdot, Q, dQ_dq, dQ_dqdot);
    return;
  }
  Q.resize(dof());
  if (dQ_dq) dQ_dq->resize(dof(), dof());
  if (dQ_dqdot) dQ_dqdot->resize(dof(), dof());
  check_status(lib_->force(q.data(), qdot.data(), Q.data(), dQ_dq ? dQ_dq->data() : nullptr,
                           dQ_dqdot ? dQ_dqdot->data() : nullptr),
               *lib_, "marsden_nh_force");
}

const std::vector<GeneratedNhBody>& GeneratedNonholonomicModel::bodies() const {
  return lib_->bodies;
}

void GeneratedNonholonomicModel::body_pose(int b, const NhVec& q, Vec3& x_b, Mat3& R_b) const {
  if (b < 0 || b >= static_cast<int>(lib_->bodies.size()))
    throw InputError(generated_where(lib_->path) + ": no body " + std::to_string(b) + " (it has " +
                     std::to_string(lib_->bodies.size()) + ")");
  check_status(lib_->body_pose(b, q.data(), x_b.data(), R_b.data()), *lib_,
               "marsden_nh_body_pose");
}

void GeneratedNonholonomicModel::check_at(const NhVec& q, const std::string& at,
                                          const NhVec* qdot) const {
  const int n = dof(), m = num_constraints();
  const std::string here = generated_where(lib_->path) + " at " + at;
  if (q.size() != n)
    throw InputError(here + ": q has " + std::to_string(q.size()) + " entries, expected " +
                     std::to_string(n));
  if (!q.allFinite()) throw InputError(here + ": q is not finite");
  NhMat M, mu;
  mass(q, M);
  if (!M.allFinite()) throw InputError(here + ": mass matrix M (" + shape_text(n, n) +
                                       ") is not finite");
  const Eigen::LLT<NhMat> llt(M);
  if (!M.isApprox(M.transpose(), 1e-12) || llt.info() != Eigen::Success ||
      llt.matrixL().toDenseMatrix().diagonal().minCoeff() <= 1e-8 * std::sqrt(M.norm()))
    throw InputError(here + ": mass matrix M (" + shape_text(n, n) +
                     ") is singular or not positive definite");
  constraint(q, mu);
  if (!mu.allFinite())
    throw InputError(here + ": constraint mu (" + shape_text(m, n) + ") is not finite");
  Eigen::FullPivLU<NhMat> lu(mu);
  lu.setThreshold(1e-10);
  if (lu.rank() < m)
    throw InputError(here + ": constraint mu (" + shape_text(m, n) + ") has dependent rows (rank " +
                     std::to_string(lu.rank()) + " < " + std::to_string(m) + ")");
  NhVec g;
  potential_gradient(q, g);
  if (!std::isfinite(potential(q)) || !g.allFinite())
    throw InputError(here + ": potential V or its gradient is not finite");
  NhMat B;
  control_directions(q, B);
  if (!B.allFinite())
    throw InputError(here + ": control directions B (" + shape_text(n, num_controls()) +
                     ") are not finite");
  if (!has_force()) return;
  if (qdot && (qdot->size() != n || !qdot->allFinite()))
    throw InputError(here + ": qdot is not " + std::to_string(n) + " finite numbers");
  NhVec Q;
  NhMat dQ_dq, dQ_dqdot;
  force(q, qdot ? *qdot : NhVec(NhVec::Zero(n)), Q, &dQ_dq, &dQ_dqdot);
  if (!Q.allFinite() || !dQ_dq.allFinite() || !dQ_dqdot.allFinite())
    throw InputError(here + ": force Q (" + shape_text(n, 1) +
                     ") or its derivatives are not finite");
}

}  // namespace marsden::nonholonomic
