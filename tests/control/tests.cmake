# Optimal-control (DMOC) tests (see tests/CMakeLists.txt for marsden_add_test).
marsden_add_test(test_control_holonomic SOURCES control/test_holonomic_ocp.cpp LIBS marsden_control
                 LABELS core)
marsden_add_test(test_control_rdp SOURCES control/test_rdp_ocp.cpp LIBS marsden_control LABELS core)
marsden_add_test(test_control_problem_files SOURCES control/test_problem_files.cpp LIBS marsden_io
                 LABELS io)
target_compile_definitions(test_control_problem_files PRIVATE MARSDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(test_control_problem_files PRIVATE nlohmann_json::nlohmann_json)
marsden_add_test(test_control_tree SOURCES control/test_tree_ocp.cpp LIBS marsden_control LABELS core)
marsden_add_test(test_control_lqr SOURCES control/test_lqr.cpp LIBS marsden_control LABELS core)
