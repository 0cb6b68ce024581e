// marsden._core: the C++ library seen from Python (nanobind). The Python package
// (python/marsden) re-exports it with the pure-Python parts (Trajectory, simulate).
#include <nanobind/nanobind.h>

#include "marsden/error.hpp"
#include "module.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "Marsden's compiled core: Lie groups, scenes, systems and the simulation driver.";
  m.attr("__version__") = MARSDEN_VERSION;
  // C++ errors keep their messages (which name the file, field, step and residual) and map
  // to the Python exception a caller expects: bad input is a ValueError, a numerical
  // failure a RuntimeError.
  nb::exception<marsden::InputError>(m, "InputError", PyExc_ValueError).attr("__doc__") =
      "A file, field or argument that is malformed or inconsistent (a ValueError); the "
      "message names it.";
  nb::exception<marsden::SolverError>(m, "SolverError", PyExc_RuntimeError).attr("__doc__") =
      "A numerical failure (a RuntimeError): a step or solve that does not converge, a "
      "singular matrix; the message names the step or solve.";
  marsden::python::bind_lie(m.def_submodule("lie", "Lie groups SO(3), SE(2), SE(3)."));
  marsden::python::bind_signals(m);
  marsden::python::bind_sim(m);
  marsden::python::bind_tree(m.def_submodule("tree", "Tree systems (frames, coordinates)."));
  marsden::python::bind_maximal(
      m.def_submodule("maximal", "Mechanisms in maximal coordinates (bodies, joints)."));
  marsden::python::bind_control(m);
  marsden::python::bind_experiments(m);
}
