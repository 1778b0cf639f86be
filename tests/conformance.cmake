# Shardy's conformance sets as CTest tests, one per folder of ../shared/conformance
# (conformance-shardy, conformance-shardy-ir, ...; see tests/conformance/run_conformance.py).
# Each fails below its folder's line in tests/conformance/floor.txt and is skipped (exit 77)
# when ../shared or FileCheck is absent.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET shardplan-opt)
  foreach(folder shardy shardy-ir shardy-import shardy-export shardy-explicit-reshards)
    add_test(NAME conformance-${folder}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/conformance/run_conformance.py
              --opt $<TARGET_FILE:shardplan-opt>
              --root ${SP_SHARED_DIR}/conformance
              --folder ${folder}
              --floor ${CMAKE_CURRENT_SOURCE_DIR}/conformance/floor.txt
              --json ${CMAKE_BINARY_DIR}/conformance-${folder}.json)
    set_tests_properties(conformance-${folder} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200
                         LABELS conformance)
  endforeach()
  # The runner's own case splitting (CHECK-LABEL sections as FileCheck splits a whole file).
  add_test(NAME conformance-runner
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/conformance/test_run_conformance.py)
  set_tests_properties(conformance-runner PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
