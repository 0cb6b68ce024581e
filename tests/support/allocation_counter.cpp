#include "support/allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

#include <Eigen/Core>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* counted_malloc(std::size_t n) {
  if (g_counting.load()) ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_malloc(n); }
void* operator new[](std::size_t n) { return counted_malloc(n); }
// noinline: GCC's -Wmismatched-new-delete misfires once free() is inlined into callers.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace marsden::test_support {

long allocations_during(const std::function<void()>& f) {
  g_allocations = 0;
  g_counting = true;
#ifdef EIGEN_RUNTIME_NO_MALLOC
  Eigen::internal::set_is_malloc_allowed(false);
#endif
  f();
#ifdef EIGEN_RUNTIME_NO_MALLOC
  Eigen::internal::set_is_malloc_allowed(true);
#endif
  g_counting = false;
  return g_allocations.load();
}

}  // namespace marsden::test_support
