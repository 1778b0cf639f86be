# The plan cache's fault-injection suite links the store (test_store itself is linked by the
# test_<module> -> sp_<module> rule of tests/CMakeLists.txt).
if(TARGET test_store_faults)
  target_link_libraries(test_store_faults PRIVATE sp_store sp_store_faults)
endif()
