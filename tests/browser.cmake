# The dashboard in headless Chromium against a real daemon (tests/browser/test_dashboard.py).
# Heavy: runs once, in the plain build; screenshots land in <build>/screenshots/ and
# `make screenshots` copies them into docs/screenshots/.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET shardpland AND TARGET shardplan)
  add_test(NAME browser_dashboard
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/browser/test_dashboard.py
            --bin ${CMAKE_BINARY_DIR}/bin --src ${CMAKE_SOURCE_DIR} --out ${CMAKE_BINARY_DIR})
  set_tests_properties(browser_dashboard PROPERTIES LABELS "heavy;browser" SKIP_RETURN_CODE 77
                       TIMEOUT 600)
endif()
