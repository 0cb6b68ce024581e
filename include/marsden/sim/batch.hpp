// Batch rollouts: many runs of one model over a pool of threads, as MuJoCo's rollout does.
// Each run is a System made by a factory on the worker thread that runs it (its own
// workspace, Data, beside the shared immutable Model), driven by sim::simulate; a worker
// holds one System at a time, so there is one Data per thread in flight. Runs are
// independent, and each is bit for bit the run sim::simulate gives alone.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "marsden/sim/simulate.hpp"

namespace marsden::sim {

// Makes the system of run i (0 <= i < runs): called from worker threads, concurrently
// with itself, so it may only read what it shares (the Model, signals).
using SystemFactory = std::function<std::unique_ptr<System>(std::size_t run)>;

struct BatchOutput {
  Layout layout;                     // the first run's (every run of one model shares it)
  std::size_t rows_per_run = 0;      // the rows of a complete run
  // runs x rows_per_run x columns, row-major. A run that stopped early (summary.ok false)
  // has its rows_written rows first and NaN in the rows after them.
  std::vector<double> values;
  std::vector<RunSummary> summaries;  // one per run, in run order
};

// Rows a complete run of `steps` steps records with `output_every` (the first state, every
// n-th, and the last).
std::size_t rows_of_run(int steps, int output_every);

// Runs `runs` systems from the factory for options.steps steps each over `threads` threads
// (0: one per hardware thread; at most runs). options.progress is not called per run; the
// options' stop flag ends every run at its next step. A factory or recorder exception ends
// the batch (no further run starts) and is rethrown as InputError
// "run i: ..." after every thread has joined. Throws InputError when the runs' layouts
// differ (different models).
BatchOutput rollout(std::size_t runs, const SystemFactory& make, const RunOptions& options,
                    int threads = 0);

}  // namespace marsden::sim
