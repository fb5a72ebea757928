# npuplan_link_absl_statically(<executable>)
#
# Links the abseil libraries an executable needs from Debian's static archives
# (libabsl-dev ships libabsl_X.a beside libabsl_X.so) instead of ~25 shared
# objects. Loading and relocating those at every start is a large share of a
# short run: `npuplan memplan` on a MiniMalloc file takes a few milliseconds,
# and MiniMalloc (issue 22) is compared with npuplan by whole-process CPU time.
#
# Why this shape: Debian's archives are not position-independent, so they can
# go into an executable (PIE accepts them) but not into the ONNX plugin or the
# Python module, which keep the shared libraries through the same imported
# targets. The archives are passed whole (--whole-archive) before the objects:
# their definitions satisfy every absl reference, and --as-needed then drops
# the shared objects the imported targets still list. The walk below finds the
# archives from the executable's own link closure, so a module that starts
# using another absl component needs no edit here. When an archive is missing
# (a non-Debian abseil), the executable keeps the shared libraries.
# Sets NPUPLAN_<target>_STATIC_ABSL in the caller's scope (tests/ checks it).
function(npuplan_link_absl_statically target)
  set(NPUPLAN_${target}_STATIC_ABSL OFF PARENT_SCOPE)
  get_target_property(queue ${target} LINK_LIBRARIES)
  set(seen "")
  set(archives "")
  while(queue)
    list(POP_FRONT queue lib)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
    if(NOT TARGET "${lib}" OR "${lib}" IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${lib}")
    get_target_property(type ${lib} TYPE)
    get_target_property(imported ${lib} IMPORTED)
    if(lib MATCHES "^absl::" AND type STREQUAL "SHARED_LIBRARY")
      get_target_property(shared ${lib} LOCATION)
      string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" archive "${shared}")
      if(NOT EXISTS "${archive}")
        message(STATUS "npuplan: ${target} links abseil as shared libraries (no ${archive})")
        return()
      endif()
      list(APPEND archives "${archive}")
    endif()
    if(NOT imported AND NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(deps ${lib} LINK_LIBRARIES)
      if(deps)
        list(APPEND queue ${deps})
      endif()
    endif()
    get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
    if(deps)
      list(APPEND queue ${deps})
    endif()
  endwhile()
  if(NOT archives)
    return()
  endif()
  list(SORT archives)  # a stable command line; whole archives need no order
  list(JOIN archives " " joined)
  target_link_options(${target} PRIVATE "SHELL:-Wl,--whole-archive ${joined} -Wl,--no-whole-archive")
  set(NPUPLAN_${target}_STATIC_ABSL ON PARENT_SCOPE)
  list(LENGTH archives count)
  message(STATUS "npuplan: ${target} links ${count} abseil archives statically")
endfunction()
