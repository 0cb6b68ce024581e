// Ipopt adapter: the only file that sees Ipopt's headers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <IpIpoptApplication.hpp>
#include <IpIpoptData.hpp>
#include <IpSolveStatistics.hpp>
#include <IpTNLP.hpp>

#include "marsden/control/nlp.hpp"
#include "marsden/error.hpp"

namespace marsden::control {

void BlockSink::begin_structure() {
  rows_.clear();
  cols_.clear();
  values_ = nullptr;
  cursor_ = 0;
}

void BlockSink::begin_values(double* values) {
  values_ = values;
  cursor_ = 0;
}

const char* to_string(NlpStatus status) {
  switch (status) {
    case NlpStatus::Solved: return "solved";
    case NlpStatus::Acceptable: return "solved to acceptable level";
    case NlpStatus::Infeasible: return "infeasible";
    case NlpStatus::MaxIterations: return "iteration or time limit";
    case NlpStatus::Interrupted: return "interrupted";
    case NlpStatus::Failed: return "failed";
  }
  return "failed";
}

double max_violation(SparseNlp& nlp, const VecX& x, std::string* where) {
  VecX x_l, x_u, g_l, g_u, g(nlp.num_constraints());
  nlp.bounds(x_l, x_u, g_l, g_u);
  nlp.constraints(x, g);
  double worst = 0.0;
  auto consider = [&](double v, double lo, double hi, auto name) {
    const double viol = std::isfinite(v) ? std::max({0.0, lo - v, v - hi})
                                         : std::numeric_limits<double>::infinity();
    if (viol > worst) {
      worst = viol;
      if (where) *where = name();
    }
  };
  for (int i = 0; i < g.size(); ++i)
    consider(g[i], g_l[i], g_u[i], [&] { return nlp.constraint_name(i); });
  for (int j = 0; j < x.size(); ++j)
    consider(x[j], x_l[j], x_u[j], [&] { return "bound on " + nlp.variable_name(j); });
  return worst;
}

namespace {

using Ipopt::Index;
using Ipopt::Number;

constexpr double kIpoptInfinity = 1e20;

double to_ipopt_bound(double b) {
  if (b == std::numeric_limits<double>::infinity()) return kIpoptInfinity;
  if (b == -std::numeric_limits<double>::infinity()) return -kIpoptInfinity;
  return b;
}

class Adapter final : public Ipopt::TNLP {
 public:
  Adapter(SparseNlp& nlp, const VecX& x_start, bool difference_hessian,
          const IpoptOptions* options = nullptr)
      : nlp_(nlp), x_start_(x_start), options_(options) {
    VecX x0(nlp.num_variables());
    nlp.initial_guess(x0);
    sink_.begin_structure();
    nlp.jacobian(x0, sink_);
    stage_ = difference_hessian ? nlp.stage_size() : 0;
    if (stage_ > 0) band_structure();
  }

  bool exact_hessian() const { return stage_ > 0; }

  // The stop flag and the progress report, once per iteration.
  bool intermediate_callback(Ipopt::AlgorithmMode, Index iteration, Number objective,
                             Number infeasibility, Number, Number, Number, Number, Number,
                             Number, Index, const Ipopt::IpoptData*,
                             Ipopt::IpoptCalculatedQuantities*) override {
    if (options_ == nullptr) return true;
    if (options_->progress) options_->progress(iteration, objective, infeasibility);
    return options_->stop == nullptr || !options_->stop->load();
  }

  bool get_nlp_info(Index& n, Index& m, Index& nnz_jac_g, Index& nnz_h_lag,
                    IndexStyleEnum& index_style) override {
    n = nlp_.num_variables();
    m = nlp_.num_constraints();
    nnz_jac_g = sink_.count();
    nnz_h_lag = static_cast<Index>(h_rows_.size());
    index_style = C_STYLE;
    return true;
  }

  bool get_bounds_info(Index n, Number* x_l, Number* x_u, Index m, Number* g_l,
                       Number* g_u) override {
    VecX xl, xu, gl, gu;
    nlp_.bounds(xl, xu, gl, gu);
    for (Index j = 0; j < n; ++j) {
      x_l[j] = to_ipopt_bound(xl[j]);
      x_u[j] = to_ipopt_bound(xu[j]);
    }
    for (Index i = 0; i < m; ++i) {
      g_l[i] = to_ipopt_bound(gl[i]);
      g_u[i] = to_ipopt_bound(gu[i]);
    }
    return true;
  }

  bool get_starting_point(Index n, bool init_x, Number* x, bool, Number*, Number*, Index, bool,
                          Number*) override {
    if (!init_x) return false;
    VecX x0(n);
    if (x_start_.size() == n)
      x0 = x_start_;
    else
      nlp_.initial_guess(x0);
    for (Index j = 0; j < n; ++j) x[j] = x0[j];
    return true;
  }

  bool eval_f(Index n, const Number* x, bool, Number& f) override {
    return guarded([&] {
      f = nlp_.cost(as_vec(n, x), nullptr);
      return std::isfinite(f);
    });
  }

  bool eval_grad_f(Index n, const Number* x, bool, Number* grad) override {
    return guarded([&] {
      grad_.resize(n);
      nlp_.cost(as_vec(n, x), &grad_);
      for (Index j = 0; j < n; ++j) grad[j] = grad_[j];
      return grad_.allFinite();
    });
  }

  bool eval_g(Index n, const Number* x, bool, Index m, Number* g) override {
    return guarded([&] {
      g_.resize(m);
      nlp_.constraints(as_vec(n, x), g_);
      for (Index i = 0; i < m; ++i) g[i] = g_[i];
      return g_.allFinite();
    });
  }

  bool eval_jac_g(Index n, const Number* x, bool, Index, Index nele, Index* i_row, Index* j_col,
                  Number* values) override {
    if (values == nullptr) {
      for (Index e = 0; e < nele; ++e) {
        i_row[e] = sink_.rows()[e];
        j_col[e] = sink_.cols()[e];
      }
      return true;
    }
    return guarded([&] {
      sink_.begin_values(values);
      nlp_.jacobian(as_vec(n, x), sink_);
      if (sink_.written() != sink_.count())
        throw std::logic_error("Jacobian value pass wrote a different number of entries");
      for (Index e = 0; e < nele; ++e)
        if (!std::isfinite(values[e])) return false;
      return true;
    });
  }

  bool eval_h(Index n, const Number* x, bool, Number obj_factor, Index m, const Number* lambda,
              bool, Index nele, Index* i_row, Index* j_col, Number* values) override {
    if (values == nullptr) {
      for (Index e = 0; e < nele; ++e) {
        i_row[e] = h_rows_[e];
        j_col[e] = h_cols_[e];
      }
      return true;
    }
    return guarded([&] { return difference_hessian(n, x, obj_factor, m, lambda, values); });
  }

  void finalize_solution(Ipopt::SolverReturn, Index n, const Number* x, const Number*,
                         const Number*, Index, const Number*, const Number*, Number obj,
                         const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    x_final_ = as_vec(n, x);
    cost_final_ = obj;
  }

  const VecX& x_final() const { return x_final_; }
  double cost_final() const { return cost_final_; }
  const std::string& evaluation_error() const { return evaluation_error_; }

 private:
  VecX as_vec(Index n, const Number* x) const { return Eigen::Map<const VecX>(x, n); }

  // Ipopt treats false as a failed evaluation and backs off; a logic error (a bug) is
  // recorded and reported with the result instead of being swallowed.
  template <class F>
  bool guarded(F&& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      if (evaluation_error_.empty()) evaluation_error_ = e.what();
      return false;
    }
  }

  int stage_of(int j) const { return j / stage_; }
  // Last row of column j's band: the end of the stage after j's.
  int band_end(int j, int n) const { return std::min(n, (stage_of(j) + 2) * stage_); }

  // Lower triangle of the band |stage(i) - stage(j)| <= 1, column by column.
  void band_structure() {
    const int n = nlp_.num_variables();
    col_start_.resize(n + 1);
    for (int j = 0; j < n; ++j) {
      col_start_[j] = static_cast<int>(h_rows_.size());
      for (int i = j; i < band_end(j, n); ++i) {
        h_rows_.push_back(i);
        h_cols_.push_back(j);
      }
    }
    col_start_[n] = static_cast<int>(h_rows_.size());
  }

  // sigma grad f + J^T lambda at x.
  void lagrangian_gradient(const VecX& x, double sigma, const Number* lambda, VecX& out) {
    out.setZero(x.size());
    nlp_.cost(x, &out);
    out *= sigma;
    jac_values_.resize(sink_.count());
    sink_.begin_values(jac_values_.data());
    nlp_.jacobian(x, sink_);
    for (int e = 0; e < sink_.count(); ++e)
      out[sink_.cols()[e]] += jac_values_[e] * lambda[sink_.rows()[e]];
  }

  // Columns of the Hessian by central differences of the Lagrangian's gradient; the
  // variables at one offset of every third stage move together, since no term couples
  // stages more than one apart. Symmetrised: H_ij = (column j at i + column i at j) / 2.
  bool difference_hessian(Index n, const Number* x_raw, double sigma, Index, const Number* lambda,
                          Number* values) {
    const VecX x = as_vec(n, x_raw);
    const int rows_per_col = 3 * stage_;
    columns_.assign(static_cast<std::size_t>(n) * rows_per_col, 0.0);
    VecX xp, xm, gp, gm;
    for (int r = 0; r < 3; ++r) {
      for (int o = 0; o < stage_; ++o) {
        xp = x;
        xm = x;
        bool any = false;
        for (int j = r * stage_ + o; j < n; j += 3 * stage_) {
          const double eps = 1e-5 * std::max(1.0, std::abs(x[j]));
          xp[j] += eps;
          xm[j] -= eps;
          any = true;
        }
        if (!any) continue;
        lagrangian_gradient(xp, sigma, lambda, gp);
        lagrangian_gradient(xm, sigma, lambda, gm);
        for (int j = r * stage_ + o; j < n; j += 3 * stage_) {
          const double two_eps = xp[j] - xm[j];
          const int first = std::max(0, (stage_of(j) - 1) * stage_);
          for (int i = first; i < band_end(j, n); ++i)
            columns_[static_cast<std::size_t>(j) * rows_per_col + (i - first)] =
                (gp[i] - gm[i]) / two_eps;
        }
      }
    }
    auto column_at = [&](int j, int i) {
      const int first = std::max(0, (stage_of(j) - 1) * stage_);
      return columns_[static_cast<std::size_t>(j) * rows_per_col + (i - first)];
    };
    for (int j = 0; j < n; ++j)
      for (int i = j; i < band_end(j, n); ++i) {
        const double v = 0.5 * (column_at(j, i) + column_at(i, j));
        if (!std::isfinite(v)) return false;
        values[col_start_[j] + (i - j)] = v;
      }
    return true;
  }

  SparseNlp& nlp_;
  VecX x_start_;
  const IpoptOptions* options_;
  BlockSink sink_;
  int stage_ = 0;
  std::vector<int> h_rows_, h_cols_, col_start_;
  std::vector<double> jac_values_, columns_;
  VecX grad_, g_, x_final_;
  double cost_final_ = std::numeric_limits<double>::quiet_NaN();
  std::string evaluation_error_;
};

NlpStatus classify(Ipopt::ApplicationReturnStatus s) {
  switch (s) {
    case Ipopt::Solve_Succeeded: return NlpStatus::Solved;
    case Ipopt::Solved_To_Acceptable_Level: return NlpStatus::Acceptable;
    case Ipopt::Infeasible_Problem_Detected: return NlpStatus::Infeasible;
    case Ipopt::Maximum_Iterations_Exceeded:
    case Ipopt::Maximum_CpuTime_Exceeded: return NlpStatus::MaxIterations;
    case Ipopt::User_Requested_Stop: return NlpStatus::Interrupted;
    default: return NlpStatus::Failed;
  }
}

const char* describe(Ipopt::ApplicationReturnStatus s) {
  switch (s) {
    case Ipopt::Solve_Succeeded: return "optimal solution found";
    case Ipopt::Solved_To_Acceptable_Level: return "solved to the acceptable tolerance";
    case Ipopt::Infeasible_Problem_Detected:
      return "converged to a point of local infeasibility: the constraints cannot be met";
    case Ipopt::Search_Direction_Becomes_Too_Small: return "search direction too small";
    case Ipopt::Diverging_Iterates: return "iterates diverging";
    case Ipopt::User_Requested_Stop: return "stopped";
    case Ipopt::Feasible_Point_Found: return "feasible point found";
    case Ipopt::Maximum_Iterations_Exceeded: return "maximum number of iterations exceeded";
    case Ipopt::Restoration_Failed:
      return "restoration phase failed: no feasible point found near the iterates";
    case Ipopt::Error_In_Step_Computation: return "error in step computation";
    case Ipopt::Maximum_CpuTime_Exceeded: return "maximum CPU time exceeded";
    case Ipopt::Not_Enough_Degrees_Of_Freedom: return "not enough degrees of freedom";
    case Ipopt::Invalid_Problem_Definition: return "invalid problem definition";
    case Ipopt::Invalid_Option: return "invalid option";
    case Ipopt::Invalid_Number_Detected: return "invalid number (NaN or Inf) in an evaluation";
    default: return "internal Ipopt error";
  }
}

}  // namespace

Eigen::MatrixXd difference_hessian(SparseNlp& nlp, const VecX& x, double sigma,
                                   const VecX& lambda) {
  if (nlp.stage_size() <= 0) throw InputError("difference_hessian: the problem has no stages");
  if (x.size() != nlp.num_variables() || lambda.size() != nlp.num_constraints())
    throw InputError("difference_hessian: x or lambda has the wrong size");
  Ipopt::SmartPtr<Adapter> adapter = new Adapter(nlp, VecX(), true);
  Ipopt::Index n, m, nnz_jac, nnz_h;
  Ipopt::TNLP::IndexStyleEnum style;
  adapter->get_nlp_info(n, m, nnz_jac, nnz_h, style);
  std::vector<Ipopt::Index> rows(static_cast<std::size_t>(nnz_h)), cols(rows.size());
  std::vector<double> values(rows.size());
  adapter->eval_h(n, x.data(), true, sigma, m, lambda.data(), true, nnz_h, rows.data(),
                  cols.data(), nullptr);
  if (!adapter->eval_h(n, x.data(), true, sigma, m, lambda.data(), true, nnz_h, nullptr, nullptr,
                       values.data()))
    throw SolverError("difference_hessian: an evaluation failed: " + adapter->evaluation_error());
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
  for (std::size_t e = 0; e < rows.size(); ++e) {
    H(rows[e], cols[e]) = values[e];
    H(cols[e], rows[e]) = values[e];
  }
  return H;
}

NlpSolution solve_with_ipopt(SparseNlp& nlp, const IpoptOptions& options, const VecX& x_start) {
  if (x_start.size() != 0 && x_start.size() != nlp.num_variables())
    throw InputError("warm start has " + std::to_string(x_start.size()) + " variables, the problem " +
                     std::to_string(nlp.num_variables()));
  Ipopt::SmartPtr<Adapter> adapter =
      new Adapter(nlp, x_start, options.hessian == HessianMode::Differences, &options);
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = IpoptApplicationFactory();
  auto opts = app->Options();
  opts->SetStringValue("sb", "yes");
  opts->SetIntegerValue("print_level", 0);
  opts->SetStringValue("hessian_approximation",
                       adapter->exact_hessian() ? "exact" : "limited-memory");
  // No bound relaxation: Ipopt would clip the final point back onto active bounds (a
  // torque at its limit), breaking the dynamics rows by ~1e-8 after convergence.
  opts->SetNumericValue("bound_relax_factor", 0.0);
  opts->SetNumericValue("tol", options.tolerance);
  opts->SetNumericValue("constr_viol_tol", options.constraint_tolerance);
  opts->SetNumericValue("max_cpu_time", options.max_cpu_time_s);
  opts->SetIntegerValue("max_iter", options.max_iterations);
  if (!options.log_file.empty()) {
    opts->SetStringValue("output_file", options.log_file.string());
    opts->SetIntegerValue("file_print_level", options.print_level);
  }
  if (app->Initialize() != Ipopt::Solve_Succeeded)
    throw SolverError("Ipopt could not be initialised");

  const auto start = std::chrono::steady_clock::now();
  const Ipopt::ApplicationReturnStatus status = app->OptimizeTNLP(adapter);
  NlpSolution out;
  out.solve_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.status = classify(status);
  out.message = describe(status);
  if (!adapter->evaluation_error().empty())
    out.message += "; an evaluation failed: " + adapter->evaluation_error();
  if (auto stats = app->Statistics(); Ipopt::IsValid(stats)) out.iterations = stats->IterationCount();
  out.x = adapter->x_final().size() == nlp.num_variables() ? adapter->x_final() : VecX();
  if (out.x.size() == 0) {
    out.status = NlpStatus::Failed;
    out.constraint_violation = std::numeric_limits<double>::infinity();
    return out;
  }
  out.cost = nlp.cost(out.x, nullptr);
  out.constraint_violation = max_violation(nlp, out.x, &out.worst_constraint);
  // Never call a point that violates the constraints a solution.
  if (out.ok() && !(out.constraint_violation <= 10.0 * options.constraint_tolerance)) {
    out.status = NlpStatus::Failed;
    out.message += "; the final point violates " + out.worst_constraint;
  }
  return out;
}

}  // namespace marsden::control
