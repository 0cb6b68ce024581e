// The code that scene and problem files name, run only where the user allows it
// (run/code.hpp, docs/reliability.md "Trust model"): refused without the allowance, naming
// the file, the field and how to allow it, before anything runs; resolved with it (the
// errors of a module or library that cannot run then name the field); allowed for the files
// in the folders of $MARSDEN_TRUSTED_FOLDERS and only those. Modules that run are tested by
// tests/python/test_symbolic_module.py.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "io/scene_errors.hpp"
#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/run/code.hpp"

namespace marsden::run {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A scoped environment variable (unset: null).
class EnvVariable {
 public:
  EnvVariable(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvVariable() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  EnvVariable(const EnvVariable&) = delete;
  EnvVariable& operator=(const EnvVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string with_system(const std::string& system) {
  return R"({"system": )" + system + R"(, "dt": 0.01, "duration": 0.1})";
}

template <class F>
std::string error_of(F&& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string scene_error(const fs::path& path, const std::string& text, bool allow_code) {
  write_text(path, text);
  return error_of([&] { load_scene(path, {.allow_code = allow_code}); });
}

// Every place a file names code. The Python named does not exist, and the library is text:
// a reader that ran either would say so instead of refusing.
const std::pair<const char*, const char*> kReferences[] = {
    {R"({"module": "m.py"})", "system.module"},
    {R"({"module": "m.py", "object": "quad"})", "system.module"},
    {R"({"type": "generated", "library": "m.so"})", "system.library"},
    {R"({"type": "generated_rdp", "library": "m.so"})", "system.library"},
    {R"({"type": "generated_nonholonomic", "library": "m.so"})", "system.library"},
    {R"({"type": "tree", "model": "double_pendulum", "potentials": [{"module": "m.py"}]})",
     "system.potentials[0].module"},
    {R"({"type": "tree", "model": "double_pendulum", "forces": [{"library": "m.so"}]})",
     "system.forces[0].library"},
    {R"({"type": "tree", "model": "double_pendulum",
         "generated_constraints": [{"library": "m.so"}]})",
     "system.generated_constraints[0].library"},
};

class CodeFiles : public ::testing::Test {
 protected:
  CodeFiles() {
    dir.write("m.py", "");
    dir.write("m.so", "not a shared object");
  }
  TempDir dir;
  EnvVariable python{"MARSDEN_PYTHON", (dir / "no-python").string()};
  EnvVariable trusted{"MARSDEN_TRUSTED_FOLDERS", std::nullopt};
};

void expect_refused(const std::string& msg, const std::string& file, const std::string& field) {
  EXPECT_EQ(msg.rfind(file + ": field '" + field + "': names a ", 0), 0u) << msg;
  EXPECT_NE(msg.find("Marsden runs such code only where its user allows it"), std::string::npos)
      << msg;
}

TEST_F(CodeFiles, SceneFilesThatNameCodeAreRefusedWithoutTheAllowance) {
  for (const auto& [system, field] : kReferences) {
    const std::string msg = scene_error(dir / "scene.json", with_system(system), false);
    expect_refused(msg, (dir / "scene.json").string(), field);
    EXPECT_NE(msg.find("If you trust this file, add --allow-code to the command, or add its "
                       "folder to $MARSDEN_TRUSTED_FOLDERS (docs/reliability.md, \"Trust model\")"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(std::string(field).find("module") != std::string::npos
                           ? "names a Python module ('m.py'), code that reading the file would run"
                           : "names a compiled library ('m.so'), code that reading the file "
                             "would load and run"),
              std::string::npos)
        << msg;
  }
}

TEST_F(CodeFiles, ProblemFilesThatNameCodeAreRefusedWithoutTheAllowance) {
  for (const char* system : {R"({"module": "m.py"})", R"({"type": "generated", "library": "m.so"})",
                             R"({"type": "generated_rdp", "library": "m.so"})"}) {
    const fs::path path = dir / "problem.json";
    write_text(path, R"({"system": )" + std::string(system) + "}");
    const std::string msg = error_of([&] { load_problem(path, {}); });
    expect_refused(msg, path.string(),
                   std::string(system).find("module") != std::string::npos ? "system.module"
                                                                           : "system.library");
    EXPECT_NE(msg.find("add --allow-code to the command"), std::string::npos) << msg;
  }
}

// A text has no folder to trust: only the caller's allowance lets its code run, and the
// message says the caller's way.
TEST_F(CodeFiles, TextsThatNameCodeAreRefusedUnlessTheCallerAllowsIt) {
  const EnvVariable everything("MARSDEN_TRUSTED_FOLDERS", dir.path().string());
  const CodeAllowance python_caller{false, "pass allow_code=True"};
  const std::string label = (dir / "scene.json").string();
  for (const auto& [system_json, field] : kReferences) {
    const std::string system = system_json;  // clang 14 does not capture a binding
    const std::string msg =
        error_of([&] { parse_scene(with_system(system), label, python_caller); });
    expect_refused(msg, label, field);
    EXPECT_NE(msg.find("code that reading the text would"), std::string::npos) << msg;
    EXPECT_NE(msg.find("If you trust this text, pass allow_code=True (docs/reliability.md"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("MARSDEN_TRUSTED_FOLDERS"), std::string::npos) << msg;
  }
  const std::string problem = error_of(
      [&] { parse_problem(R"({"system": {"module": "m.py"}})", label, python_caller); });
  expect_refused(problem, label, "system.module");
}

// With the allowance the code is resolved: the module's Python cannot start, the text is
// no library, and each error names the field.
TEST_F(CodeFiles, AllowedCodeIsResolvedAndItsErrorsNameTheField) {
  const fs::path scene = dir / "scene.json";
  EXPECT_NE(scene_error(scene, with_system(R"({"module": "m.py"})"), true)
                .find("field 'system.module': Python module 'm.py': cannot run Python '" +
                      (dir / "no-python").string() +
                      "' ($MARSDEN_PYTHON): No such file or directory; set MARSDEN_PYTHON"),
            std::string::npos);
  for (const auto& [system, field] : kReferences) {
    if (std::string(field).find("library") == std::string::npos) continue;
    const std::string msg = scene_error(scene, with_system(system), true);
    EXPECT_EQ(msg.rfind(scene.string() + ": field '" + field + "': generated model '" +
                            (dir / "m.so").string() + "': cannot be loaded",
                        0),
              0u)
        << msg;
  }
  const std::string missing = scene_error(scene, with_system(R"({"module": "nowhere.py"})"), true);
  EXPECT_NE(missing.find("field 'system.module': no such Python file: " +
                         (dir / "nowhere.py").string()),
            std::string::npos)
      << missing;
  const std::string element = scene_error(scene, with_system(R"({"type": "tree",
      "model": "double_pendulum", "forces": [{"module": "gone.py"}]})"), true);
  EXPECT_NE(element.find("field 'system.forces[0].module': no such Python file"),
            std::string::npos)
      << element;
}

// A file in a trusted folder (or below) may name code; one beside it, one reached through a
// link from it, or through ".." out of it, may not.
TEST_F(CodeFiles, TrustedFoldersAllowTheFilesInThemOnly) {
  const fs::path folder = dir / "trusted", sibling = dir / "trusted-not", outside = dir / "out";
  for (const fs::path& d : {folder / "sub", sibling, outside}) fs::create_directories(d);
  const EnvVariable list("MARSDEN_TRUSTED_FOLDERS",
                         "::" + (dir / "gone").string() + ":" + folder.string() + ":");
  const std::string system = with_system(R"({"type": "generated", "library": "../m.so"})");
  const std::string loaded = "cannot be loaded";
  EXPECT_NE(scene_error(folder / "scene.json", system, false).find(loaded), std::string::npos);
  EXPECT_NE(scene_error(folder / "sub" / "scene.json",
                        with_system(R"({"type": "generated", "library": "../../m.so"})"), false)
                .find(loaded),
            std::string::npos);
  expect_refused(scene_error(sibling / "scene.json", system, false),
                 (sibling / "scene.json").string(), "system.library");
  const fs::path escaped = folder / ".." / "out" / "scene.json";
  expect_refused(scene_error(escaped, system, false), escaped.string(), "system.library");
  write_text(outside / "linked.json", system);
  fs::create_symlink(outside / "linked.json", folder / "linked.json");
  expect_refused(error_of([&] { load_scene(folder / "linked.json", {}); }),
                 (folder / "linked.json").string(), "system.library");
  EXPECT_TRUE(in_trusted_folder(folder / "sub" / "scene.json"));
  EXPECT_FALSE(in_trusted_folder(escaped));
}

// The variable is read only when a file names code: a wrong entry does not stop the others.
TEST_F(CodeFiles, ARelativeTrustedFolderIsAnErrorNamingTheVariable) {
  const EnvVariable list("MARSDEN_TRUSTED_FOLDERS", "examples");
  EXPECT_EQ(scene_error(dir / "scene.json", with_system(R"({"type": "generated", "library": "m.so"})"),
                        false),
            "MARSDEN_TRUSTED_FOLDERS: 'examples' is not an absolute path; list absolute folders "
            "separated by ':'");
  EXPECT_EQ(scene_error(dir / "scene.json",
                        with_system(R"({"type": "rigid_body", "inertia": {"J": [1, 2, 3], "mass": 1}})"),
                        false),
            "");
}

}  // namespace
}  // namespace marsden::run
