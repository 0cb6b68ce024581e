# Tree engine tests (see tests/CMakeLists.txt for marsden_add_test).

marsden_add_test(test_tree_models SOURCES tree/test_builtin_models.cpp LABELS core)
marsden_add_test(test_io_scene_tree SOURCES io/test_scene_tree.cpp LIBS marsden_io LABELS io)
target_compile_definitions(test_io_scene_tree PRIVATE MARSDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
marsden_add_test(test_tree_dynamics SOURCES tree/test_tree_dynamics.cpp LABELS core)
marsden_add_test(test_galerkin SOURCES tree/test_galerkin.cpp LABELS core)
marsden_add_no_malloc_test(test_tree_no_malloc tree/test_tree_no_malloc.cpp)
marsden_add_test(test_generated_tree_potential SOURCES tree/test_generated_potential.cpp
                 support/allocation_counter.cpp LABELS core)
marsden_add_test(test_tree_from_mechanism SOURCES tree/test_from_mechanism.cpp LABELS core)
