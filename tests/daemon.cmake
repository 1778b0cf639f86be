# Suites of the service stages link their libraries on top of the engine (included by
# tests/CMakeLists.txt after the test_*.c executables exist).
if(TARGET test_graph)
  target_link_libraries(test_graph PRIVATE sp_graph)
endif()

# sp_daemon: the daemon harness (support/daemon_harness.h: start the real build/bin/shardpland
# on a loopback port, raw gRPC calls) for the daemon suites and bench/bench_daemon.c. It
# depends on the programs it runs.
add_library(sp_daemon STATIC ${CMAKE_CURRENT_SOURCE_DIR}/support/daemon_harness.c)
target_include_directories(sp_daemon PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}
                           ${CMAKE_CURRENT_SOURCE_DIR}/support)
target_compile_definitions(sp_daemon PUBLIC SP_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                           SP_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
target_link_libraries(sp_daemon PUBLIC sp_rpc)
add_dependencies(sp_daemon shardpland shardplan-gen)
sp_layers(sp_daemon tests)
add_library(sp_soak ALIAS sp_daemon)   # bench/bench_soak.c links it (bench_X -> sp_X)

foreach(t test_daemon test_daemon_errors test_daemon_overflow test_daemon_search
          test_plan_request)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE sp_daemon)
  endif()
endforeach()
# Request builders shared by the suites that plan through the daemon.
foreach(t test_daemon test_daemon_search test_daemon_rows)
  if(TARGET ${t})
    target_sources(${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support/daemon_requests.c)
  endif()
endforeach()
if(TARGET test_daemon)
  set_tests_properties(test_daemon test_daemon_errors test_daemon_overflow PROPERTIES
                       LABELS daemon)
endif()

# shardpland-faults: the daemon's test build, its own sources plus store/faults_hook.c (with
# SHARDPLAN_TEST_FAULTS=SOCKET its plan cache runs over the failing VFS and allocator of
# store/faults.h, driven through that socket) and support/rows_hold_hook.c (with
# SHARDPLAN_TEST_ROWS_HOLD=PATH a plan's detail rows wait while PATH exists, see
# server/rpc/test_hooks.h). Kept out of bin/: never installed or shipped.
get_target_property(_shardpland_src shardpland SOURCES)
list(TRANSFORM _shardpland_src PREPEND ${PROJECT_SOURCE_DIR}/server/daemon/)
add_executable(shardpland-faults ${_shardpland_src} ${PROJECT_SOURCE_DIR}/store/faults_hook.c
               ${CMAKE_CURRENT_SOURCE_DIR}/support/rows_hold_hook.c)
target_link_libraries(shardpland-faults PRIVATE sp_rpc sp_web sp_store_faults)
set_target_properties(shardpland-faults PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_BINARY_DIR}/test-bin)
sp_layers(shardpland-faults daemon)
if(TARGET test_daemon_faults)
  target_link_libraries(test_daemon_faults PRIVATE sp_daemon sp_store_faults)
  target_compile_definitions(test_daemon_faults PRIVATE
                             SP_FAULTS_DAEMON="${CMAKE_BINARY_DIR}/test-bin/shardpland-faults")
  add_dependencies(test_daemon_faults shardpland-faults)
  set_tests_properties(test_daemon_faults PROPERTIES LABELS daemon)
endif()
if(TARGET test_daemon_search)
  set_tests_properties(test_daemon_search PROPERTIES LABELS daemon)
endif()
# test_daemon_rows holds a plan's detail rows back through the test build's hook.
if(TARGET test_daemon_rows)
  target_link_libraries(test_daemon_rows PRIVATE sp_daemon)
  target_compile_definitions(test_daemon_rows PRIVATE
                             SP_FAULTS_DAEMON="${CMAKE_BINARY_DIR}/test-bin/shardpland-faults")
  add_dependencies(test_daemon_rows shardpland-faults)
  set_tests_properties(test_daemon_rows PROPERTIES LABELS daemon)
endif()
