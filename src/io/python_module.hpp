// Internal: the "module" fields of scene and problem files, resolved by running Python
// (python_module.cpp; the policy in marsden/io/python_modules.hpp).
#pragma once

#include "json_access.hpp"

namespace marsden::io::detail {

// Replaces, in the document, a "system" object {"module": path, "object": name} by the
// "system" object the module's symbolic object gives, and a tree's "potentials" and
// "forces" elements {"module": ...} by {"library": path}, so that the readers see what a
// file naming the compiled libraries holds. Each error names the file and the field.
void resolve_python_modules(JsonDocument& doc);

}  // namespace marsden::io::detail
