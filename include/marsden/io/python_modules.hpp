// Scene and problem files may name a Python module that builds a marsden.symbolic object
// in place of its compiled library (docs/own-system.md, "In scene and problem files"); the
// reader then runs Python. Readers of untrusted input that must never start a process (the
// fuzz targets) refuse such fields, which are then an ordinary InputError naming the field.
#pragma once

namespace marsden::io {

enum class PythonModules { Run, Refuse };

// For the whole process; Run unless set.
void set_python_modules(PythonModules policy);
PythonModules python_modules();

}  // namespace marsden::io
