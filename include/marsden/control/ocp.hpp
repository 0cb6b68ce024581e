// A DMOC transcription (vehicles §6, Fig. 11; Junge, Marsden and Ober-Blöbaum 2005): the
// integrator's own discrete residual imposed at every step as equality constraints of one
// sparse NLP. Each transcription is also the map back from the NLP's vector to a
// trajectory, and the check that re-simulating the optimal controls reproduces it.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Core>

#include "marsden/control/nlp.hpp"

namespace marsden::control {

// Named columns over rows: the knots (N + 1 rows) for states, the steps (N rows) for
// controls, which are held over [t_k, t_k+1).
struct Table {
  std::vector<std::string> columns;
  Eigen::MatrixXd rows;
};

class Ocp : public SparseNlp {
 public:
  virtual int num_steps() const = 0;
  virtual double time_step() const = 0;
  virtual void tables(const VecX& x, Table& states, Table& controls) const = 0;
  // Runs the simulator (the same integrator, the same residual) from the fixed initial
  // state with the controls in x, and returns the largest difference between its states
  // and those in x (max norm over knots and state entries). Throws SolverError naming the
  // step if the simulator fails.
  virtual double resimulation_error(const VecX& x) const = 0;
  // Smallest obstacle clearance beyond the margins (+inf without obstacles).
  virtual double min_clearance(const VecX& x) const = 0;
  // How a scene re-simulating a solution takes its inputs from the controls table: the
  // first `controls` columns after "t" are the scene's controls, the next `shape` its shape
  // inputs (run::run_problem writes resimulate.json from them).
  struct SceneInputs {
    int controls = 0, shape = 0;
  };
  virtual SceneInputs scene_inputs() const = 0;
};

}  // namespace marsden::control
