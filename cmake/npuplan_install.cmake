# Install rules and the Debian package (docs/api.md, "Install").
#
#   cmake --install build --prefix /opt/npuplan
#     bin/npuplan                                   the CLI
#     lib/npuplan/libnpuplan_onnx.so                its ONNX importer, loaded when a command reads .onnx
#     lib/libnpuplan_<module>.a                     every module library (static, PIC)
#     include/npuplan/api/*.h                       the public API, nothing else
#     lib/cmake/npuplan/npuplanConfig.cmake (+ ConfigVersion, Targets)
#     lib/pkgconfig/npuplan.pc
#
# find_package(npuplan CONFIG REQUIRED) gives npuplan::npuplan (the API
# library; the other modules and the Debian packages they need come along via
# INTERFACE_LINK_LIBRARIES and find_dependency). Static libraries: no
# soname to keep stable, and a consumer links only what the API reaches.
include(CMakePackageConfigHelpers)
set(NPUPLAN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/npuplan)

set(npuplan_installed_libs)
foreach(m ${NPUPLAN_MODULES})
  if(TARGET npuplan_${m})
    list(APPEND npuplan_installed_libs npuplan_${m})
    set_target_properties(npuplan_${m} PROPERTIES EXPORT_NAME ${m})
  endif()
endforeach()
set_target_properties(npuplan_api PROPERTIES EXPORT_NAME npuplan)
install(TARGETS ${npuplan_installed_libs} EXPORT npuplanTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${NPUPLAN_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/npuplan/api)
install(TARGETS npuplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The CLI's ONNX importer, loaded on demand (tools/npuplan/onnx_plugin/).
install(TARGETS npuplan_onnx LIBRARY DESTINATION ${NPUPLAN_ONNX_PLUGIN_DIR})

install(EXPORT npuplanTargets NAMESPACE npuplan:: DESTINATION ${NPUPLAN_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/npuplanConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/npuplanConfig.cmake
                              INSTALL_DESTINATION ${NPUPLAN_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/npuplanConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/npuplanConfig.cmake ${CMAKE_BINARY_DIR}/cmake/npuplanConfigVersion.cmake
        DESTINATION ${NPUPLAN_INSTALL_CMAKEDIR})

# pkg-config: the archives in link order (highest module first), then the
# Debian packages' own .pc files; relocatable through ${pcfiledir}.
set(NPUPLAN_PC_LIBS)
set(mods ${NPUPLAN_MODULES})
list(REVERSE mods)
foreach(m ${mods})
  if(TARGET npuplan_${m})
    get_target_property(type npuplan_${m} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      string(APPEND NPUPLAN_PC_LIBS " -lnpuplan_${m}")
    endif()
  endif()
endforeach()
file(RELATIVE_PATH NPUPLAN_PC_PREFIX_REL /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${PROJECT_SOURCE_DIR}/cmake/npuplan.pc.in ${CMAKE_BINARY_DIR}/cmake/npuplan.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/npuplan.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB (in the build folder): one package like a -dev package — the
# CLI, the libraries, the headers, the CMake and pkg-config files. Depends:
# the run-time libraries of the CLI (dpkg-shlibdeps) and the -dev packages a
# consumer links against.
set(CPACK_PACKAGE_NAME npuplan)
set(CPACK_PACKAGE_VENDOR "npuplan")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "graph to verified multi-stream execution plan for NPUs: CLI, C++ library and headers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "npuplan maintainers <npuplan@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libabsl-dev, libfmt-dev, nlohmann-json3-dev, libprotobuf-dev, libonnx-dev, pkg-config")
set(CPACK_GENERATOR DEB)
# Packaging never rebuilds: it installs what the last build made.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)
