// Reading scene and problem files whose code may run (docs/reliability.md, "Trust model").
// A file that names a Python module or a compiled library runs that code when it is read;
// Marsden does so only where the file's user allows it: with --allow-code (allow_code=True
// in Python) for the files of one command or call, or for every file in the folders of
// $MARSDEN_TRUSTED_FOLDERS. Otherwise the reference is an InputError naming the file, the
// field and how to allow it, raised before anything runs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "marsden/io/code.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"

namespace marsden::run {

// What the caller allows, and what a refusal tells its user to do.
struct CodeAllowance {
  bool allow_code = false;
  std::string how_to_allow = "add --allow-code to the command";
};

// The folders that $MARSDEN_TRUSTED_FOLDERS lists (separated by ':'), made canonical; an
// entry that is not an absolute path to a folder is an InputError naming it.
std::vector<std::filesystem::path> trusted_folders();
// Whether `file`, made canonical (links and ".." resolved), lies in one of them or below.
bool in_trusted_folder(const std::filesystem::path& file);

// The resolver of marsden/io/code.hpp that runs code where it is allowed: a module through
// python -m marsden.symbolic.module (run/python.hpp), within $MARSDEN_MODULE_TIMEOUT
// seconds (600 by default); a library through its family's loader. Where it is not
// allowed, every reference is refused before anything runs.
class CodeLoader final : public io::CodeResolver {
 public:
  // file: the file read from disk, whose code runs when allowance.allow_code or when it
  // lies in a trusted folder; empty for a text, whose code runs when allowance.allow_code.
  CodeLoader(CodeAllowance allowance, std::filesystem::path file);

  std::string module_object(const io::CodeReference& module) const override;
  io::GeneratedHolonomicModel holonomic_vehicle(const io::CodeReference& library) const override;
  std::shared_ptr<const vehicle::GeneratedRdpVehicle> rdp_vehicle(
      const io::CodeReference& library) const override;
  std::shared_ptr<const nonholonomic::GeneratedNonholonomicModel> nonholonomic_model(
      const io::CodeReference& library) const override;
  void add_tree_element(tree::ModelBuilder& builder,
                        const io::CodeReference& library) const override;

 private:
  void check(const io::CodeReference& ref) const;

  CodeAllowance allowance_;
  std::filesystem::path file_;
};

// The readers of io/ with this resolver: a file's code runs when allowance.allow_code or
// the file lies in a trusted folder; a text's when allowance.allow_code.
io::Scene load_scene(const std::filesystem::path& path, const CodeAllowance& allowance);
io::Scene parse_scene(std::string_view text, const std::string& label,
                      const CodeAllowance& allowance);
io::Problem load_problem(const std::filesystem::path& path, const CodeAllowance& allowance);
io::Problem parse_problem(std::string_view text, const std::string& label,
                          const CodeAllowance& allowance);

}  // namespace marsden::run
