// Code that a scene or problem file names (docs/reliability.md, "Trust model"): a Python
// module that builds a marsden.symbolic object ({"module": path, "object": name}) or a
// compiled library ({"library": path}). Running a module runs its code, and so does loading
// a library. The readers of this folder run none of it: each reference they parse goes to
// a CodeResolver, which runs the module or loads the library for them. run::CodeLoader
// (run/code.hpp) is the one that checks the user's allowance first; without a resolver a
// reader refuses every reference (RefuseCode), as the fuzz targets' readers do.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "marsden/nonholonomic/generated.hpp"
#include "marsden/tree/model.hpp"
#include "marsden/vehicle/generated.hpp"
#include "marsden/vehicle/generated_rdp.hpp"

namespace marsden::io {

// One place where a file names code.
struct CodeReference {
  enum class Kind { Module, Library };
  Kind kind = Kind::Library;
  std::string file;   // the file that names it, as messages name it
  std::string field;  // where: "system.module", "system.potentials[1].library"
  std::string written;            // the path as the file writes it
  std::filesystem::path path;     // that path, relative to the file's folder unless absolute
  std::string object;             // a module's "object"; empty: its one object of the kind
  // What the field takes: "system" (a vehicle or system), or a tree's "potential",
  // "force" or "constraint".
  std::string role;

  // Throws InputError "FILE: field 'FIELD': what", as every reader's message reads.
  [[noreturn]] void fail(std::string_view what) const;
};

// A generated holonomic vehicle: the object says its group.
using GeneratedHolonomicModel =
    std::variant<std::shared_ptr<const vehicle::GeneratedVehicle>,
                 std::shared_ptr<const vehicle::GeneratedPlanarVehicle>>;

// What the readers ask of the code a file names. Each call either gives what the code
// gives or throws InputError naming the reference's file and field.
class CodeResolver {
 public:
  virtual ~CodeResolver() = default;
  // The JSON object (text) that stands in the file for a module's field: the "system"
  // object of its symbolic object, or the tree element {"library": path}.
  virtual std::string module_object(const CodeReference& module) const = 0;
  // The libraries, loaded: a holonomic vehicle ("generated"), an RDP vehicle
  // ("generated_rdp"), a system in full coordinates ("generated_nonholonomic"), and a
  // tree's potential, force or constraint (ref.role) added to `builder`.
  virtual GeneratedHolonomicModel holonomic_vehicle(const CodeReference& library) const = 0;
  virtual std::shared_ptr<const vehicle::GeneratedRdpVehicle> rdp_vehicle(
      const CodeReference& library) const = 0;
  virtual std::shared_ptr<const nonholonomic::GeneratedNonholonomicModel> nonholonomic_model(
      const CodeReference& library) const = 0;
  virtual void add_tree_element(tree::ModelBuilder& builder,
                                const CodeReference& library) const = 0;
};

// The resolver of readers that run no code: every reference is an InputError naming the
// file and the field.
class RefuseCode final : public CodeResolver {
 public:
  std::string module_object(const CodeReference& module) const override;
  GeneratedHolonomicModel holonomic_vehicle(const CodeReference& library) const override;
  std::shared_ptr<const vehicle::GeneratedRdpVehicle> rdp_vehicle(
      const CodeReference& library) const override;
  std::shared_ptr<const nonholonomic::GeneratedNonholonomicModel> nonholonomic_model(
      const CodeReference& library) const override;
  void add_tree_element(tree::ModelBuilder& builder, const CodeReference& library) const override;
};

}  // namespace marsden::io
