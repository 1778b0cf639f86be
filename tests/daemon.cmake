# Suites of the service stages link their libraries on top of the engine (included by
# tests/CMakeLists.txt after the test_*.c executables exist). The daemon suites start the real
# build/bin/shardpland, so they depend on it (and on shardplan-gen for their models).
if(TARGET test_graph)
  target_link_libraries(test_graph PRIVATE sp_graph)
endif()
foreach(t test_daemon test_daemon_errors test_plan_request)
  if(TARGET ${t})
    target_sources(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support/daemon_harness.c)
    target_link_libraries(${t} PRIVATE sp_rpc)
    add_dependencies(${t} shardpland shardplan-gen)
  endif()
endforeach()
if(TARGET test_daemon)
  set_tests_properties(test_daemon test_daemon_errors PROPERTIES LABELS daemon)
endif()
