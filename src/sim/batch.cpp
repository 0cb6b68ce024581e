// Batch rollouts over a pool of std::threads (sim/batch.hpp): workers take the next run
// index from one atomic counter, so a slow run never holds up the others.
#include "marsden/sim/batch.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include "marsden/error.hpp"

namespace marsden::sim {
namespace {

// Writes one run's rows straight into its slice of the batch array.
class SliceRecorder final : public Recorder {
 public:
  SliceRecorder(double* slice, std::size_t capacity_rows) : slice_(slice), capacity_(capacity_rows) {}
  void begin(const Layout& layout) override {
    layout_ = layout;
    columns_ = layout.columns.size();
  }
  void row(std::span<const double> values) override {
    if (rows_ == capacity_) throw InputError("rollout: a run recorded more rows than expected");
    std::memcpy(slice_ + rows_ * columns_, values.data(), columns_ * sizeof(double));
    ++rows_;
  }
  void finish(bool) override {}
  const Layout& layout() const { return layout_; }

 private:
  double* slice_;
  std::size_t capacity_, columns_ = 0, rows_ = 0;
  Layout layout_;
};

}  // namespace

std::size_t rows_of_run(int steps, int output_every) {
  if (steps < 1 || output_every < 1) return 0;
  // Row 0 (the initial state), then steps n + 1 with (n + 1) % every == 0 or n + 1 == steps.
  const auto s = static_cast<std::size_t>(steps), e = static_cast<std::size_t>(output_every);
  return 1 + s / e + (s % e != 0 ? 1 : 0);
}

BatchOutput rollout(std::size_t runs, const SystemFactory& make, const RunOptions& options,
                    int threads) {
  BatchOutput out;
  out.summaries.resize(runs);
  if (runs == 0) return out;
  // The first run's system gives the layout and sizes the array (and checks the options
  // through simulate's own validation when it runs).
  std::unique_ptr<System> first = make(0);
  if (!first) throw InputError("rollout: the factory returned no system for run 0");
  out.layout = first->layout();
  const std::size_t columns = out.layout.columns.size();
  out.rows_per_run = rows_of_run(options.steps, options.output_every);
  out.values.assign(runs * out.rows_per_run * columns, std::numeric_limits<double>::quiet_NaN());

  RunOptions per_run = options;  // the caller's stop flag ends every run at its next step
  per_run.progress = nullptr;
  std::atomic<bool> abort{false};  // an error: no further run starts
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::size_t error_run = 0;

  auto run_one = [&](std::size_t i, std::unique_ptr<System> system) {
    if (!system) system = make(i);
    if (!system) throw InputError("the factory returned no system");
    if (system->layout().columns != out.layout.columns)
      throw InputError("its columns differ from run 0's: a batch runs one model");
    SliceRecorder recorder(out.values.data() + i * out.rows_per_run * columns, out.rows_per_run);
    out.summaries[i] = simulate(*system, per_run, recorder);
  };
  auto worker = [&](std::unique_ptr<System> first_system) {
    for (;;) {
      if (abort) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= runs) return;
      try {
        run_one(i, i == 0 ? std::move(first_system) : nullptr);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error || i < error_run) {
          error = std::current_exception();
          error_run = i;
        }
        abort = true;
        return;
      }
    }
  };

  std::size_t n_threads = threads > 0 ? static_cast<std::size_t>(threads)
                                      : std::max(1u, std::thread::hardware_concurrency());
  n_threads = std::min(n_threads, runs);
  {
    std::vector<std::jthread> pool;
    pool.reserve(n_threads - 1);
    for (std::size_t k = 1; k < n_threads; ++k) pool.emplace_back(worker, nullptr);
    worker(std::move(first));  // the calling thread is a worker too
  }
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      throw InputError("run " + std::to_string(error_run) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace marsden::sim
