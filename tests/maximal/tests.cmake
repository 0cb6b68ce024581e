# Maximal-coordinates engine tests (see tests/CMakeLists.txt for marsden_add_test).
