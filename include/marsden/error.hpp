// Typed errors. The core never prints; it throws one of these or returns a status.
#pragma once

#include <stdexcept>
#include <string>

namespace marsden {

// Bad user input: the message names the file, the field and the problem.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A numerical method could not produce a trustworthy result (non-convergence, NaN,
// a step-size condition violated). The message names the step and the residual.
class SolverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace marsden
