# The layering check itself (cmake/check_layers.cmake, cmake/layers.cmake): each rule on small
# trees, and a fixture project whose wrong-way include fails its build.
add_test(NAME layers_check
         COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_BINARY_DIR}/layers-test
                 -DGENERATOR=${CMAKE_GENERATOR} -P ${CMAKE_CURRENT_SOURCE_DIR}/layers/test_check_layers.cmake)
set_tests_properties(layers_check PROPERTIES TIMEOUT 120)
