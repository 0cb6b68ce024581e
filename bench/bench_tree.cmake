# Tree engine benchmarks (bench/report_tree.py prints the ratios).
add_executable(bench_tree bench_tree.cpp)
target_link_libraries(bench_tree PRIVATE marsden::marsden benchmark::benchmark)
