# Maximal-coordinates engine tests (see tests/CMakeLists.txt for marsden_add_test).
marsden_add_test(test_maximal SOURCES maximal/test_maximal.cpp LABELS core)
marsden_add_no_malloc_test(test_maximal_no_malloc maximal/test_maximal_no_malloc.cpp)
marsden_add_test(test_urdf_maximal SOURCES io/test_urdf_maximal.cpp LIBS marsden_io LABELS io)
target_compile_definitions(test_urdf_maximal PRIVATE MARSDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
marsden_add_test(test_io_scene_maximal SOURCES io/test_scene_maximal.cpp LIBS marsden_io LABELS io)
target_compile_definitions(test_io_scene_maximal PRIVATE MARSDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
marsden_add_test(test_contact SOURCES maximal/test_contact.cpp LABELS core)
# The contact rows' private header (src/maximal/contact_rows.hpp), checked row by row.
target_include_directories(test_contact PRIVATE ${PROJECT_SOURCE_DIR}/src)
# Legged robots from example-robot-data (installed into .venv by scripts/install-deps.sh
# --robots): their URDFs' directory, found at configure time.
file(GLOB MARSDEN_ROBOTS_DIR
     ${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/cmeel.prefix/share/example-robot-data/robots)
if(MARSDEN_ROBOTS_DIR)
  marsden_add_test(test_legged SOURCES maximal/test_legged.cpp LIBS marsden_io LABELS io)
  target_compile_definitions(test_legged PRIVATE MARSDEN_ROBOTS_DIR="${MARSDEN_ROBOTS_DIR}")
else()
  message(WARNING "example-robot-data is not in .venv (scripts/install-deps.sh --robots): "
                  "test_legged is not built")
endif()
marsden_add_test(test_nonholonomic_maximal SOURCES maximal/test_nonholonomic_maximal.cpp LABELS core)
marsden_add_test(test_maximal_vehicles SOURCES maximal/test_maximal_vehicles.cpp LABELS core)
