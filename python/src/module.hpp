// The parts of the extension module, one per source file.
#pragma once

#include <nanobind/nanobind.h>

namespace marsden::python {

void bind_lie(nanobind::module_ m);          // lie.cpp
void bind_signals(nanobind::module_ m);      // signals.cpp
void bind_sim(nanobind::module_ m);          // sim.cpp: scenes, systems, the driver
void bind_tree(nanobind::module_ m);         // tree.cpp
void bind_maximal(nanobind::module_ m);      // maximal.cpp
void bind_control(nanobind::module_ m);      // control.cpp: problems, DMOC with Ipopt
void bind_experiments(nanobind::module_ m);  // experiments.cpp

}  // namespace marsden::python
