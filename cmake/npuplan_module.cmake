# npuplan_module(<name> DEPS <module>... [TEST_DEPS <module>...] [LIBS <target>...])
# Builds npuplan/<name>/*.cc (without *_test.cc) into the static library
# npuplan_<name>, and npuplan/<name>/*_test.cc into the test executable
# <name>_tests whose cases are registered with CTest.
# DEPS: the modules the library's own code uses (lower layers only).
# TEST_DEPS: further modules only the tests use (e.g. the compile driver for an
# end-to-end check); the test executable links the library, its DEPS, these,
# and npuplan_testing — nothing else. scripts/check_deps.py checks both lists
# against the #includes.
# The libraries' include directory is the source root while building; the
# installed package (cmake/npuplan_install.cmake) exports them with the
# installed include directory instead, which holds only the public API headers
# (npuplan/api/).
function(npuplan_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS;LIBS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(tests)
    list(REMOVE_ITEM srcs ${tests})
  endif()
  set(deps)
  foreach(d ${ARG_DEPS})
    list(APPEND deps npuplan_${d})
  endforeach()
  if(srcs)
    add_library(npuplan_${name} STATIC ${srcs})
    target_include_directories(npuplan_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(npuplan_${name} PUBLIC ${deps} ${ARG_LIBS})
    if(NPUPLAN_UNITY_BUILD)
      set_target_properties(npuplan_${name} PROPERTIES UNITY_BUILD ON)
    endif()
  else()
    add_library(npuplan_${name} INTERFACE)
    target_include_directories(npuplan_${name} INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(npuplan_${name} INTERFACE ${deps} ${ARG_LIBS})
  endif()
  if(NPUPLAN_BUILD_TESTS AND tests)
    set(test_deps)
    foreach(d ${ARG_TEST_DEPS})
      list(APPEND test_deps npuplan_${d})
    endforeach()
    add_executable(${name}_tests ${tests})
    target_link_libraries(${name}_tests PRIVATE npuplan_${name} ${test_deps} npuplan_testing GTest::gmock
                          GTest::gtest_main)
    target_compile_definitions(${name}_tests PRIVATE
      NPUPLAN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      NPUPLAN_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
    gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${name})
  endif()
endfunction()
