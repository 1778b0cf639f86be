# The Shardy conformance runner as a CTest test (see tests/conformance/run_conformance.py).
# It needs shardplan-opt; it is skipped (exit 77) when ../shared or FileCheck is absent.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET shardplan-opt)
  add_test(NAME conformance
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/conformance/run_conformance.py
            --opt $<TARGET_FILE:shardplan-opt>
            --dir ${SP_SHARED_DIR}/conformance/shardy
            --floor ${CMAKE_CURRENT_SOURCE_DIR}/conformance/floor.txt
            --json ${CMAKE_BINARY_DIR}/conformance.json)
  set_tests_properties(conformance PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200)
endif()
