# Maximal-coordinates benchmarks: time per step against the number of links (O(n)),
# sparse block LDU against dense LU.
add_executable(bench_maximal bench_maximal.cpp)
target_link_libraries(bench_maximal PRIVATE marsden::marsden benchmark::benchmark)
