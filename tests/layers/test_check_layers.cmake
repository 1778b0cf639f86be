# test_check_layers.cmake - the build's layering check (cmake/check_layers.cmake and
# cmake/layers.cmake) refuses every wrong-way include and accepts the right ones.
#
#   cmake -DSRC=<source tree> -DWORK=<scratch folder> -DGENERATOR=<cmake generator>
#         -P test_check_layers.cmake
#
# Part 1 runs the check script on small trees written here, one rule per case. Part 2
# configures and builds a two-stage project with the real helpers: a build with a lower stage
# including an upper one must fail, and a configure with a program that has no layer check
# must fail. Prints "ok: CASE" per case and ends with an error on the first mismatch.
cmake_minimum_required(VERSION 3.18)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# write(path text): a file of the scratch tree.
function(write path text)
  file(WRITE ${WORK}/${path} "${text}")
endfunction()

# check(NAME OK|FAIL ALLOWED SOURCES [EXPECT text]): runs the check; FAIL cases must print
# EXPECT (FILE:LINE and the rule).
function(check name want allowed sources)
  set(_files "")
  foreach(s ${sources})
    list(APPEND _files ${WORK}/${s})
  endforeach()
  string(REPLACE ";" "|" _files "${_files}")
  string(REPLACE ";" "|" allowed "${allowed}")
  file(REMOVE ${WORK}/stamp)
  execute_process(COMMAND ${CMAKE_COMMAND} -DTARGET=t -DALLOWED=${allowed}
                          -DKNOWN=ir|rules|solver|plan|web -DRESERVED=glpk.h=solver,tests
                          -DSOURCES=${_files}
                          -DSTAMP=${WORK}/stamp -P ${SRC}/cmake/check_layers.cmake
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REGEX REPLACE "[ \t\r\n]+" " " _flat "${_out}")   # cmake wraps long messages
  if(want STREQUAL "OK")
    if(NOT _rc EQUAL 0 OR NOT EXISTS ${WORK}/stamp)
      message(FATAL_ERROR "${name}: expected the check to pass, got:\n${_out}")
    endif()
  else()
    if(_rc EQUAL 0 OR EXISTS ${WORK}/stamp)
      message(FATAL_ERROR "${name}: expected the check to fail, it passed")
    endif()
    string(REPLACE "@" "${WORK}/" _expect "${ARGN}")
    string(FIND "${_flat}" "${_expect}" _at)
    if(_at EQUAL -1)
      message(FATAL_ERROR "${name}: expected \"${_expect}\" in:\n${_out}")
    endif()
  endif()
  message(STATUS "ok: ${name}")
endfunction()

# ---- part 1: the rules, on the check script itself ----
write(rules/a.c [=[
#include <stdio.h>
#include "ir/ir.h"
#include "rules/a.h"
#include "shardplan/v1/graph.pb-c.h"
#include "support/helper.h"
]=])
write(rules/a.h [=[
#include "ir/arena.h"
#include "a_int.h"
]=])
write(rules/a_int.h [=[
#include "rules/b_int.h"
]=])
write(rules/b_int.h [=[
#include "ir/err.h"
]=])
check("a stage includes what it links, its own *_int.h, and folders that are no stage" OK
      "ir" "rules/a.c")

write(ir/up.c [=[
#include "ir/ir.h"
#include "plan/plan.h"
]=])
check("a lower stage including a later one fails" FAIL "" "ir/up.c"
      "@ir/up.c:2: t may not include plan/plan.h (plan/ is not among what it links")

write(plan/p.c [=[
#include "ir/ir.h"
#include "solver/sg_heuristic_int.h"
]=])
check("another stage's *_int.h fails even when that stage is linked" FAIL "ir;solver"
      "plan/p.c" "@plan/p.c:2: solver/sg_heuristic_int.h is internal to solver/")

write(rules/c.c [=[
#include "c.h"
]=])
write(rules/c.h [=[
/* a header of the folder, followed */
#include "web/web.h"
]=])
check("a header of the folder that a source includes is checked too" FAIL "ir" "rules/c.c"
      "@rules/c.h:2: t may not include web/web.h")

write(plan/q.c [=[
#include "sg_heuristic_int.h"
]=])
check("an *_int.h reached through an include path fails" FAIL "solver" "plan/q.c"
      "@plan/q.c:1: sg_heuristic_int.h is not in plan/")

write(plan/r.c [=[
#include "../solver/sg_heuristic_int.h"
]=])
check("a relative include climbing out of the folder fails" FAIL "solver" "plan/r.c"
      "@plan/r.c:1: \"../solver/sg_heuristic_int.h\" climbs out of its folder")

write(bench/b.c [=[
#include "plan/plan.h"
#include "solver/sg_heuristic_int.h"
]=])
check("a program outside the stages may not include *_int.h" FAIL "ir;solver;plan" "bench/b.c"
      "@bench/b.c:2: solver/sg_heuristic_int.h is internal to solver/")

write(plan/glpk_user.c [=[
#include <stdio.h>
#include <glpk.h>
]=])
check("a library header reserved to one stage fails elsewhere" FAIL "ir;solver"
      "plan/glpk_user.c" "@plan/glpk_user.c:2: <glpk.h> is private to solver/, tests/")
write(solver/ilp.c [=[
#include <glpk.h>
]=])
check("and passes in its own stage" OK "ir" "solver/ilp.c")

# ---- part 2: the helpers in a build ----
set(P ${WORK}/proj)
file(MAKE_DIRECTORY ${P}/cmake)
file(COPY ${SRC}/cmake/layers.cmake ${SRC}/cmake/check_layers.cmake DESTINATION ${P}/cmake)
write(proj/server/lo/lo.h [=[
int lo(void);
]=])
write(proj/server/hi/hi.h [=[
int hi(void);
]=])
write(proj/server/hi/hi.c [=[
#include "hi/hi.h"
#include "lo/lo.h"
int hi(void) { return lo(); }
]=])
write(proj/server/lo/lo.c [=[
#include "lo/lo.h"
#include "hi/hi.h"
int lo(void) { return 1; }
]=])
write(proj/main.c [=[
#include "hi/hi.h"
int main(void) { return hi() - 1; }
]=])
write(proj/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.18)
project(layers_fixture LANGUAGES C)
include(cmake/layers.cmake)
sp_stage_library(sp_lo server/lo)
sp_stage_library(sp_hi server/hi sp_lo)
add_executable(prog main.c)
target_link_libraries(prog PRIVATE sp_hi)
if(NOT UNCHECKED)
  sp_layers(prog tools)
endif()
sp_check_every_target_layered()
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -S ${P} -B ${P}/build -G ${GENERATOR}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "fixture project: configure failed:\n${_out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${P}/build
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
string(REGEX REPLACE "[ \t\r\n]+" " " _flat "${_out}")
string(FIND "${_flat}" "server/lo/lo.c:2: sp_lo may not include hi/hi.h" _at)
if(_rc EQUAL 0 OR _at EQUAL -1 OR EXISTS ${P}/build/libsp_lo.a)
  message(FATAL_ERROR "a build whose lower stage includes an upper one must fail before "
                      "compiling it, naming the line; got (exit ${_rc}):\n${_out}")
endif()
message(STATUS "ok: a build whose lower stage includes an upper one fails")

write(proj/server/lo/lo.c [=[
#include "lo/lo.h"
int lo(void) { return 1; }
]=])
execute_process(COMMAND ${CMAKE_COMMAND} --build ${P}/build
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the fixture project, fixed, must build; got:\n${_out}")
endif()
message(STATUS "ok: the same build, fixed, passes")

execute_process(COMMAND ${CMAKE_COMMAND} -S ${P} -B ${P}/build2 -G ${GENERATOR} -DUNCHECKED=ON
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
string(REGEX REPLACE "[ \t\r\n]+" " " _flat "${_out}")
string(FIND "${_flat}" "targets without a layer check" _at)
if(_rc EQUAL 0 OR _at EQUAL -1)
  message(FATAL_ERROR "a program without a layer check must fail the configure step; got "
                      "(exit ${_rc}):\n${_out}")
endif()
message(STATUS "ok: a program without a layer check fails the configure step")
file(REMOVE_RECURSE ${WORK})
