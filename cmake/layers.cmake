# layers.cmake - the build's layering rules: which stage's headers each target may include.
#
# A stage is a folder whose headers are included as "<stage>/x.h" (server/ir -> "ir/x.h", a
# top-level store -> "store/x.h"). Every target built from this tree's sources is checked before
# it compiles (cmake/check_layers.cmake, run by the build):
#   - an include of another stage's folder must name a stage the target links (directly or
#     through what it links), so a stage cannot reach up into one that comes after it;
#   - a header named *_int.h is included only from its own folder;
#   - no quoted include climbs out of its folder with "..";
#   - a library linked privately into one stage (GLPK, zlib: the solver) has its header
#     included only there (and in tests), SP_RESERVED_HEADERS.
# A wrong-way include fails the build with FILE:LINE and the rule it breaks. The check reads the
# target's own .c files, and the headers of their folder those include (for a stage library,
# every header of the folder). sp_check_every_target_layered() at the end of the top-level
# CMakeLists.txt fails the configure step when a target escapes the check.
#
# Invariant: a stage library is defined after everything it links (data-flow order), because
# what a target may include is computed from the targets it links when it is defined.

define_property(TARGET PROPERTY SP_VISIBLE BRIEF_DOCS "stages a dependent may include"
  FULL_DOCS "The stage folders whose headers a target that links this one may include.")

# Folder names that are stages: server/<stage> and the top-level service folders.
file(GLOB _sp_known LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/server
     ${PROJECT_SOURCE_DIR}/server/*)
set(SP_KNOWN_STAGES ${_sp_known} store web client CACHE INTERNAL "stage folder names")
# System headers of libraries that one stage links privately: header=folder,folder.
set(SP_RESERVED_HEADERS "glpk.h=solver,tests" "zlib.h=solver,tests")

# _sp_visible(<out> <link items...>): the stages the link items make visible.
function(_sp_visible out)
  set(_v "")
  foreach(dep ${ARGN})
    if(dep MATCHES "^sp_")
      if(NOT TARGET ${dep})
        message(FATAL_ERROR "${dep} is linked before it is defined: define the stages in "
                            "data-flow order (cmake/layers.cmake), so that the layer check "
                            "knows what each one depends on")
      endif()
      get_target_property(_d ${dep} SP_VISIBLE)
      if(_d)
        list(APPEND _v ${_d})
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _v)
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

# sp_layers(<target> <stage> [HEADERS files...]): checks <target>'s includes against what it
# links, before it compiles. Call it after the target's last target_link_libraries(). A library
# makes <stage> and everything it may include visible to the targets that link it.
function(sp_layers target stage)
  cmake_parse_arguments(_a "" "" "HEADERS" ${ARGN})
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_links ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(_links ${target} LINK_LIBRARIES)
  endif()
  if(NOT _links)
    set(_links "")
  endif()
  _sp_visible(_allowed ${_links})
  if(_type MATCHES "LIBRARY$")
    set(_vis ${stage} ${_allowed})
    list(REMOVE_DUPLICATES _vis)
    set_target_properties(${target} PROPERTIES SP_VISIBLE "${_vis}")
  endif()
  if(_type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  # The target's own sources (generated ones live in the build tree and are not checked), and
  # every header of their folders as dependencies: the check follows those it includes.
  get_target_property(_srcdir ${target} SOURCE_DIR)
  get_target_property(_srcs ${target} SOURCES)
  set(_files "")
  set(_deps "")
  foreach(s ${_srcs} ${_a_HEADERS})
    get_filename_component(s ${s} ABSOLUTE BASE_DIR ${_srcdir})
    string(FIND "${s}" "${PROJECT_BINARY_DIR}/" _in_build)
    if(s MATCHES "\\.[ch]$" AND _in_build EQUAL -1)
      list(APPEND _files ${s})
      get_filename_component(_d ${s} DIRECTORY)
      file(GLOB _h CONFIGURE_DEPENDS ${_d}/*.h)
      list(APPEND _deps ${s} ${_h})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _deps)
  set(_stamp ${PROJECT_BINARY_DIR}/layers/${target}.ok)
  string(REPLACE ";" "|" _al "${_allowed}")   # lists travel as a|b|c on the command line
  string(REPLACE ";" "|" _kn "${SP_KNOWN_STAGES}")
  string(REPLACE ";" "|" _fl "${_files}")
  string(REPLACE ";" "|" _rs "${SP_RESERVED_HEADERS}")
  add_custom_command(OUTPUT ${_stamp}
    COMMAND ${CMAKE_COMMAND} -DTARGET=${target} -DALLOWED=${_al} -DKNOWN=${_kn} -DRESERVED=${_rs}
            -DSOURCES=${_fl}
            -DSTAMP=${_stamp} -P ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    DEPENDS ${_deps} ${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    COMMENT "Checking the includes of ${target} against its layer" VERBATIM)
  add_custom_target(${target}_layers DEPENDS ${_stamp})
  add_dependencies(${target} ${target}_layers)
  set_property(GLOBAL APPEND PROPERTY SP_LAYERED_TARGETS ${target})
endfunction()

# sp_stage_library(<target> <folder> [deps...] [PRIVATE deps...]): <folder>/*.c as a static
# library whose headers are included as "<stage>/x.h" (<stage> the folder's last part; the
# include root is the folder's parent), checked by sp_layers() with every header of the folder.
# PRIVATE dependencies (GLPK and zlib for the solver) are linked, but their headers are not
# visible to dependents.
function(sp_stage_library name dir)
  get_filename_component(_stage ${dir} NAME)
  get_filename_component(_root ${PROJECT_SOURCE_DIR}/${dir} DIRECTORY)
  file(GLOB _src CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.c)
  file(GLOB _hdr CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  if(_src)
    add_library(${name} STATIC ${_src})
    target_include_directories(${name} PUBLIC ${_root})
    target_link_libraries(${name} PUBLIC ${ARGN})
  else()  # a stage not written yet
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${_root})
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
  sp_layers(${name} ${_stage} HEADERS ${_hdr})
endfunction()

# _sp_targets_in(<out> <dir>): the build-system targets of <dir> and its subdirectories.
function(_sp_targets_in out dir)
  get_directory_property(_t DIRECTORY ${dir} BUILDSYSTEM_TARGETS)
  get_directory_property(_subs DIRECTORY ${dir} SUBDIRECTORIES)
  foreach(s ${_subs})
    _sp_targets_in(_st ${s})
    list(APPEND _t ${_st})
  endforeach()
  set(${out} "${_t}" PARENT_SCOPE)
endfunction()

# sp_check_every_target_layered(): fails the configure step when a library or program compiled
# from this tree's sources has no layer check (a target added without sp_layers()).
function(sp_check_every_target_layered)
  _sp_targets_in(_all ${PROJECT_SOURCE_DIR})
  get_property(_done GLOBAL PROPERTY SP_LAYERED_TARGETS)
  set(_missing "")
  foreach(t ${_all})
    get_target_property(_type ${t} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$"
       AND NOT t IN_LIST _done)
      get_target_property(_srcdir ${t} SOURCE_DIR)
      get_target_property(_srcs ${t} SOURCES)
      foreach(s ${_srcs})
        get_filename_component(s ${s} ABSOLUTE BASE_DIR ${_srcdir})
        string(FIND "${s}" "${PROJECT_BINARY_DIR}/" _in_build)
        if(s MATCHES "\\.c$" AND _in_build EQUAL -1)
          list(APPEND _missing ${t})
          break()
        endif()
      endforeach()
    endif()
  endforeach()
  if(_missing)
    message(FATAL_ERROR "targets without a layer check (call sp_layers(), cmake/layers.cmake): "
                        "${_missing}")
  endif()
endfunction()
