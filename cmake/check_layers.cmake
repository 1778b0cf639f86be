# check_layers.cmake - fails the build when a stage includes a header it may not see.
#
#   cmake -DSTAGE=plan -DALLOWED="search|solver|ir" -DKNOWN="ir|mlir|..." -DSOURCES="a.c|b.h"
#         -DSTAMP=file -P check_layers.cmake
#
# For every `#include "X/..."` in SOURCES where X is a known stage folder: X must be STAGE
# itself or one of ALLOWED (the stages it links, transitively), and a header named *_int.h
# only ever from its own folder. Each violation is reported as FILE:LINE with the rule it
# breaks; on success STAMP is touched so the check reruns only when a source changes.
cmake_minimum_required(VERSION 3.18)
# Lists arrive as a|b|c.
foreach(v ALLOWED KNOWN SOURCES)
  string(REPLACE "|" ";" ${v} "${${v}}")
endforeach()
set(_bad "")
foreach(f ${SOURCES})
  file(STRINGS "${f}" _lines)
  set(_n 0)
  foreach(l IN LISTS _lines)
    math(EXPR _n "${_n} + 1")
    if(l MATCHES "^[ \t]*#[ \t]*include[ \t]+\"([A-Za-z0-9_]+)/([^\"]+)\"")
      set(_dir "${CMAKE_MATCH_1}")
      set(_hdr "${CMAKE_MATCH_2}")
      if(NOT _dir STREQUAL STAGE)
        if(_hdr MATCHES "_int\\.h$")
          string(APPEND _bad "${f}:${_n}: ${_dir}/${_hdr} is internal to ${_dir}/\n")
        elseif(_dir IN_LIST KNOWN AND NOT _dir IN_LIST ALLOWED)
          string(APPEND _bad "${f}:${_n}: stage ${STAGE}/ may not include ${_dir}/${_hdr} "
                             "(it depends on: ${ALLOWED})\n")
        endif()
      endif()
    endif()
  endforeach()
endforeach()
if(_bad)
  message(FATAL_ERROR "layering violations:\n${_bad}")
endif()
get_filename_component(_stamp_dir "${STAMP}" DIRECTORY)
file(MAKE_DIRECTORY "${_stamp_dir}")
file(TOUCH "${STAMP}")
