# The halo exchanges of -sdy-resolve-permutation-factors checked by evaluating their output
# device by device on random pads, slices and reshapes (tests/halo_exchange_sim.py).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET shardplan-opt)
  add_test(NAME halo_exchange_sim
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/halo_exchange_sim.py
            $<TARGET_FILE:shardplan-opt> 1 60)
  set_tests_properties(halo_exchange_sim PROPERTIES TIMEOUT 300)
endif()
