# Geometry tests: shapes, closed-form signed distances and their derivatives, filtering
# (see tests/CMakeLists.txt for marsden_add_test).
marsden_add_test(test_geometry SOURCES geometry/test_geometry.cpp support/allocation_counter.cpp
                 LABELS core)
