# Maximal-coordinates engine tests (see tests/CMakeLists.txt for marsden_add_test).
marsden_add_test(test_maximal SOURCES maximal/test_maximal.cpp LABELS core)
marsden_add_no_malloc_test(test_maximal_no_malloc maximal/test_maximal_no_malloc.cpp)
