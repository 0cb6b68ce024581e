# Tree engine tests (see tests/CMakeLists.txt for marsden_add_test).
marsden_add_test(test_tree_dynamics SOURCES tree/test_tree_dynamics.cpp LABELS core)
