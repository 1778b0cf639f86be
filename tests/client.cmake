# The C client (client/): installing it and building against it with pkg-config. Not in the
# sanitizer build (a program built without ASan cannot load an ASan-built library).
if(TARGET shardplan_client AND NOT SP_SANITIZE)
  add_test(NAME client_install
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/client/install_test.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_C_COMPILER})
  set_tests_properties(client_install PROPERTIES TIMEOUT 120)
endif()
if(TARGET test_client)
  target_link_libraries(test_client PRIVATE sp_cli shardplan_client)
  # Against the real daemon, started by the daemon suites' harness.
  target_sources(test_client PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support/daemon_harness.c)
  target_link_libraries(test_client PRIVATE sp_rpc)
  add_dependencies(test_client shardplan shardpland shardplan-gen)
  set_tests_properties(test_client PROPERTIES LABELS daemon)
endif()
