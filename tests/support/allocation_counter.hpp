// Counts heap allocations in a test executable: allocation_counter.cpp replaces the global
// operator new, so every allocation is seen, Eigen's and anyone else's. Built with
// EIGEN_RUNTIME_NO_MALLOC, Eigen also asserts on its own allocations in the same window.
#pragma once

#include <functional>

namespace marsden::test_support {

// Heap allocations made while f runs (f is built before counting starts).
long allocations_during(const std::function<void()>& f);

}  // namespace marsden::test_support
