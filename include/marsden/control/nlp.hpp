// A sparse nonlinear program
//   min f(x)  subject to  g_l <= g(x) <= g_u,  x_l <= x <= x_u
// as the optimal-control transcriptions present it to Ipopt (src/control/ipopt.cpp), with
// exact first derivatives. The constraint Jacobian is assembled from dense blocks in a
// fixed order: a structure pass records where each block lies, value passes write the
// same blocks in the same order, so a transcription writes its Jacobian code once.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace marsden::control {

using VecX = Eigen::VectorXd;

// Receives dense Jacobian blocks. In structure mode it records (row, col) of every entry
// (zeros included: the pattern must not depend on x); in value mode it writes the entries
// to values in the recorded order.
class BlockSink {
 public:
  void begin_structure();
  void begin_values(double* values);
  bool structure_mode() const { return values_ == nullptr; }

  template <class Derived>
  void block(int row0, int col0, const Eigen::MatrixBase<Derived>& B) {
    for (Eigen::Index j = 0; j < B.cols(); ++j)
      for (Eigen::Index i = 0; i < B.rows(); ++i)
        put(row0 + static_cast<int>(i), col0 + static_cast<int>(j), B(i, j));
  }
  void entry(int row, int col, double value) { put(row, col, value); }

  int count() const { return static_cast<int>(rows_.size()); }
  int written() const { return cursor_; }
  const std::vector<int>& rows() const { return rows_; }
  const std::vector<int>& cols() const { return cols_; }

 private:
  void put(int row, int col, double value) {
    if (values_ == nullptr) {
      rows_.push_back(row);
      cols_.push_back(col);
    } else {
      values_[cursor_++] = value;
    }
  }
  std::vector<int> rows_, cols_;
  double* values_ = nullptr;
  int cursor_ = 0;
};

class SparseNlp {
 public:
  virtual ~SparseNlp() = default;
  virtual int num_variables() const = 0;
  virtual int num_constraints() const = 0;
  virtual void bounds(VecX& x_l, VecX& x_u, VecX& g_l, VecX& g_u) const = 0;
  virtual void initial_guess(VecX& x) const = 0;
  // f(x) and, if grad is not null, its gradient (num_variables).
  virtual double cost(const VecX& x, VecX* grad) = 0;
  virtual void constraints(const VecX& x, VecX& g) = 0;
  // The constraint Jacobian through sink (its pattern must not depend on x).
  virtual void jacobian(const VecX& x, BlockSink& sink) = 0;
  // Variables per stage when every constraint and cost term involves at most two
  // consecutive stages of this many variables (a DMOC transcription); 0 if unknown. It
  // makes the Hessian of the Lagrangian banded, which the difference Hessian relies on.
  virtual int stage_size() const { return 0; }
  // Name of constraint row i / variable j, for reports ("dynamics step 12 row 3").
  virtual std::string constraint_name(int i) const = 0;
  virtual std::string variable_name(int j) const = 0;
};

// The Hessian of the Lagrangian given to Ipopt.
enum class HessianMode {
  // Central differences of the exact gradient of the Lagrangian, sigma grad f + J^T lambda,
  // with the variables of every third stage perturbed together (the band makes them
  // independent): 6 stage_size() gradient evaluations per Hessian, error O(eps^2). Needs
  // stage_size() > 0; otherwise LimitedMemory is used.
  Differences,
  LimitedMemory  // Ipopt's L-BFGS approximation
};

// The Hessian of the Lagrangian sigma f + lambda^T g at x exactly as HessianMode::Differences
// gives it to Ipopt (banded, by stages), as a dense symmetric matrix: for tests. Throws
// InputError if nlp.stage_size() is 0 or the sizes disagree.
Eigen::MatrixXd difference_hessian(SparseNlp& nlp, const VecX& x, double sigma,
                                   const VecX& lambda);

struct IpoptOptions {
  double tolerance = 1e-8;              // Ipopt tol (scaled NLP error)
  double constraint_tolerance = 1e-8;   // Ipopt constr_viol_tol (unscaled, max norm)
  int max_iterations = 3000;
  HessianMode hessian = HessianMode::Differences;
  int print_level = 5;                  // Ipopt's log detail in log_file (0-12)
  std::filesystem::path log_file;       // empty: no log
  double max_cpu_time_s = 600.0;
  // Read at every iteration: once true, Ipopt stops there (status Interrupted) with its
  // iterate (a SIGINT or SIGTERM handler sets it).
  const std::atomic<bool>* stop = nullptr;
  // Called at every iteration with its number, objective and constraint violation.
  std::function<void(int iteration, double objective, double infeasibility)> progress;
};

enum class NlpStatus { Solved, Acceptable, Infeasible, MaxIterations, Interrupted, Failed };
const char* to_string(NlpStatus status);

struct NlpSolution {
  NlpStatus status = NlpStatus::Failed;
  std::string message;           // Ipopt's return status in words
  VecX x;                        // the last iterate (the solution when solved)
  double cost = 0.0;
  int iterations = 0;
  double constraint_violation = 0.0;  // max over g and x of the bound violation (unscaled)
  std::string worst_constraint;  // the row where that violation is largest
  double solve_time_s = 0.0;     // wall time inside Ipopt
  bool ok() const { return status == NlpStatus::Solved || status == NlpStatus::Acceptable; }
};

// Solves the program from nlp.initial_guess, or from x_start if it is not empty (warm
// start). Evaluation errors (NaN, exceptions) are reported to Ipopt as failed evaluations,
// which it backs off from; they never escape as NaN results.
NlpSolution solve_with_ipopt(SparseNlp& nlp, const IpoptOptions& options,
                             const VecX& x_start = VecX());

// Largest bound violation of (x, g(x)) and the name of where it occurs.
double max_violation(SparseNlp& nlp, const VecX& x, std::string* where = nullptr);

}  // namespace marsden::control
