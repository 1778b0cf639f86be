# check_layers.cmake - fails the build when a target includes a header it may not see.
#
#   cmake -DTARGET=sp_plan -DALLOWED="search|solver|ir" -DKNOWN="ir|mlir|..." \
#         -DRESERVED="glpk.h=solver,tests|..." -DSOURCES="/abs/a.c|/abs/b.h" -DSTAMP=file \
#         -P check_layers.cmake
#
# Each file's own stage is the name of its folder. For every quoted include of a file in
# SOURCES, and of the headers of that file's folder it includes (followed, once each):
#   "X/h"  X a known stage (KNOWN) other than the file's own folder: X must be one of ALLOWED
#          (the stages the target links, transitively), and h must not be an *_int.h header;
#   "h"    an *_int.h header must sit in the file's own folder (no reaching into another
#          stage's internals through an include path);
#   ".." in a quoted include is refused (it would step around both rules);
#   <h>    a library header listed in RESERVED ("glpk.h=solver,tests": GLPK is linked in the
#          solver only) may be included only from the folders named there.
# Each violation is reported as FILE:LINE with the rule it breaks; on success STAMP is touched,
# so the check reruns only when a source changes. tests/layers.cmake tests this script.
cmake_minimum_required(VERSION 3.18)
# Lists arrive as a|b|c.
foreach(v ALLOWED KNOWN SOURCES RESERVED)
  string(REPLACE "|" ";" ${v} "${${v}}")
endforeach()
set(_bad "")
set(_todo ${SOURCES})
set(_seen "")
while(_todo)
  list(POP_FRONT _todo f)
  if(f IN_LIST _seen)
    continue()
  endif()
  list(APPEND _seen ${f})
  get_filename_component(_fdir "${f}" DIRECTORY)
  get_filename_component(_own "${_fdir}" NAME)
  file(STRINGS "${f}" _lines)
  set(_n 0)
  foreach(l IN LISTS _lines)
    math(EXPR _n "${_n} + 1")
    if(l MATCHES "^[ \t]*#[ \t]*include[ \t]*<([^>]+)>")
      set(_sys "${CMAKE_MATCH_1}")
      foreach(r ${RESERVED})
        string(REPLACE "=" ";" r "${r}")
        list(GET r 0 _rh)
        list(GET r 1 _rdirs)
        string(REPLACE "," ";" _rdirs "${_rdirs}")
        if(_sys STREQUAL _rh AND NOT _own IN_LIST _rdirs)
          string(REPLACE ";" "/, " _rd "${_rdirs}")
          string(APPEND _bad "${f}:${_n}: <${_sys}> is private to ${_rd}/ (its library is "
                             "linked there only)\n")
        endif()
      endforeach()
      continue()
    endif()
    if(NOT l MATCHES "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\"")
      continue()
    endif()
    set(_inc "${CMAKE_MATCH_1}")
    if(_inc MATCHES "(^|/)\\.\\.(/|$)")
      string(APPEND _bad "${f}:${_n}: \"${_inc}\" climbs out of its folder; include a stage's "
                         "header as \"stage/x.h\"\n")
    elseif(_inc MATCHES "^([A-Za-z0-9_]+)/(.+)$")
      set(_dir "${CMAKE_MATCH_1}")
      set(_hdr "${CMAKE_MATCH_2}")
      if(_dir STREQUAL _own)
        if(EXISTS "${_fdir}/${_hdr}")
          list(APPEND _todo "${_fdir}/${_hdr}")
        endif()
      elseif(_hdr MATCHES "_int\\.h$")
        string(APPEND _bad "${f}:${_n}: ${_dir}/${_hdr} is internal to ${_dir}/\n")
      elseif(_dir IN_LIST KNOWN AND NOT _dir IN_LIST ALLOWED)
        string(APPEND _bad "${f}:${_n}: ${TARGET} may not include ${_dir}/${_hdr} "
                           "(${_dir}/ is not among what it links: ${ALLOWED})\n")
      endif()
    elseif(NOT _inc MATCHES "/")
      if(EXISTS "${_fdir}/${_inc}")
        list(APPEND _todo "${_fdir}/${_inc}")
      elseif(_inc MATCHES "_int\\.h$")
        string(APPEND _bad "${f}:${_n}: ${_inc} is not in ${_own}/, and an *_int.h header is "
                           "internal to its own folder\n")
      endif()
    endif()
  endforeach()
endwhile()
if(_bad)
  message(FATAL_ERROR "layering violations:\n${_bad}")
endif()
get_filename_component(_stamp_dir "${STAMP}" DIRECTORY)
file(MAKE_DIRECTORY "${_stamp_dir}")
file(TOUCH "${STAMP}")
