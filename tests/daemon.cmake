# Suites of the service stages link their libraries on top of the engine (included by
# tests/CMakeLists.txt after the test_*.c executables exist).
if(TARGET test_graph)
  target_link_libraries(test_graph PRIVATE sp_graph)
endif()
