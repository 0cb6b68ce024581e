// The references to code that scene and problem files make (marsden/io/code.hpp): parsed
// here, resolved by the CodeResolver the reader was given.
#include "marsden/io/code.hpp"

#include <cctype>
#include <utility>
#include <vector>

#include "marsden/error.hpp"
#include "scene_detail.hpp"

namespace marsden::io {

void CodeReference::fail(std::string_view what) const {
  throw InputError(file + ": field '" + field + "': " + std::string(what));
}

namespace {

[[noreturn]] void refuse(const CodeReference& ref) {
  const bool module = ref.kind == CodeReference::Kind::Module;
  ref.fail(std::string(module ? "names a Python module ('" : "names a compiled library ('") +
           detail::shown(ref.written, 300) + "'), which this reader does not " +
           (module ? "run" : "load") +
           ": the code a file names runs only where its user allows it (run::load_scene, "
           "`marsden simulate --allow-code`; docs/reliability.md, \"Trust model\")");
}

}  // namespace

std::string RefuseCode::module_object(const CodeReference& module) const { refuse(module); }

GeneratedHolonomicModel RefuseCode::holonomic_vehicle(const CodeReference& library) const {
  refuse(library);
}

std::shared_ptr<const vehicle::GeneratedRdpVehicle> RefuseCode::rdp_vehicle(
    const CodeReference& library) const {
  refuse(library);
}

std::shared_ptr<const nonholonomic::GeneratedNonholonomicModel> RefuseCode::nonholonomic_model(
    const CodeReference& library) const {
  refuse(library);
}

void RefuseCode::add_tree_element(tree::ModelBuilder&, const CodeReference& library) const {
  refuse(library);
}

namespace detail {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 200 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

CodeReference reference(const JsonNode& path, CodeReference::Kind kind, std::string role) {
  CodeReference ref;
  ref.kind = kind;
  ref.file = path.file();
  ref.field = path.path();
  ref.written = path.string();
  ref.path = path_relative_to(path, path.file());
  ref.role = std::move(role);
  return ref;
}

// The module that `field` ({"module": path, "object": name}) names, its keys checked.
CodeReference module_reference(const JsonNode& field, const std::string& role) {
  if (field.has("library")) field.fail("give either \"module\" or \"library\", not both");
  field.expect_keys({"module", "object"});
  CodeReference ref = reference(field.at("module"), CodeReference::Kind::Module, role);
  if (const auto o = field.find("object")) {
    ref.object = o->string();
    if (!is_identifier(ref.object))
      o->fail("expected a Python attribute name, got '" + shown(ref.object) + "'");
  }
  return ref;
}

// The object that stands in the document for the module of `field`.
nlohmann::json module_object(const JsonNode& field, const std::string& role,
                             const CodeResolver& code) {
  return nlohmann::json::parse(code.module_object(module_reference(field, role)));
}

}  // namespace

CodeReference library_reference(const JsonNode& library, std::string role) {
  return reference(library, CodeReference::Kind::Library, std::move(role));
}

CodeReference generated_library(const JsonNode& sys) {
  sys.expect_keys({"type", "library"});
  return library_reference(sys.at("library"), "system");
}

void resolve_python_modules(JsonDocument& doc, const CodeResolver& code) {
  if (!doc.root.is_object() || !doc.root.contains("system")) return;
  const JsonNode sys = JsonNode(doc).at("system");
  if (!sys.is_object()) return;
  if (sys.has("module")) {
    nlohmann::json resolved = module_object(sys, "system", code);
    doc.root["system"] = std::move(resolved);
    return;
  }
  if (sys.raw().value("type", nlohmann::json()) != "tree") return;
  constexpr std::pair<const char*, const char*> kElements[] = {
      {"potentials", "potential"}, {"forces", "force"}, {"generated_constraints", "constraint"}};
  std::vector<std::pair<std::pair<const char*, std::size_t>, nlohmann::json>> resolved;
  for (const auto& [key, role] : kElements) {
    const auto elements = sys.find(key);
    if (!elements || !elements->is_array()) continue;
    for (std::size_t i = 0; i < elements->array_size(); ++i)
      if (const JsonNode e = (*elements)[i]; e.is_object() && e.has("module"))
        resolved.push_back({{key, i}, module_object(e, role, code)});
  }
  for (auto& [where, element] : resolved)
    doc.root["system"][where.first][where.second] = std::move(element);
}

}  // namespace detail

}  // namespace marsden::io
