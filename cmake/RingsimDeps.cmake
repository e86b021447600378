# RingsimDeps.cmake — finds the required system packages and fails configure with one "install X" line each.
#
# Imported targets this gives the rest of the build:
#   PkgConfig::SYSTEMC   SystemC 2.3 (pkg-config systemc; shared only; needs CMAKE_CXX_STANDARD 17,
#                        which the top-level CMakeLists.txt sets)
#   PkgConfig::ZMQ       ZeroMQ (pkg-config libzmq)
#   PkgConfig::CMOCKA    cmocka (pkg-config cmocka; its CMake config has no imported target in 1.1.5)
#   PkgConfig::CYAML     libcyaml (pkg-config libcyaml; pulls in libyaml)
#   ringsim::cjson       cJSON: an alias of the CMake package's target `cjson` when cJSONConfig.cmake
#                        exists (Debian ships it), else of PkgConfig::CJSON (pkg-config libcjson).
#                        Link ringsim::cjson and `#include <cjson/cJSON.h>` either way.
#   GSL::gsl             the GNU Scientific Library (CMake's FindGSL): calibrate's least-squares solver
#   verilate(), verilator_link_systemc()  from find_package(verilator).
#
# Verilator's runtime include dirs come in as plain -I: our -Wall -Wextra then fires inside its
# headers. Whoever links verilated code must re-add them as SYSTEM includes, e.g.
#   target_include_directories(x SYSTEM PRIVATE ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
#
# ./ringsim installs every package below before it configures; these checks are for builds that
# bypass it (a plain `cmake -S . -B build`), so the message says exactly what to install.

set(_ringsim_missing_pkgs "")

# ringsim_dep_missing(<what> <debian package>): one line per missing dependency, collected so a
# bare configure names them all at once instead of one per attempt.
macro(ringsim_dep_missing what pkg)
  message(NOTICE "ringsim: missing ${what} — install ${pkg} (or run ./ringsim, which installs it)")
  list(APPEND _ringsim_missing_pkgs ${pkg})
endmacro()

find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "install pkg-config (apt-get install pkg-config) or run ./ringsim")
endif()

pkg_check_modules(SYSTEMC QUIET IMPORTED_TARGET systemc)
if(NOT SYSTEMC_FOUND)
  ringsim_dep_missing(SystemC libsystemc-dev)
endif()

pkg_check_modules(ZMQ QUIET IMPORTED_TARGET libzmq)
if(NOT ZMQ_FOUND)
  ringsim_dep_missing(ZeroMQ libzmq3-dev)
endif()

pkg_check_modules(CMOCKA QUIET IMPORTED_TARGET cmocka)
if(NOT CMOCKA_FOUND)
  ringsim_dep_missing(cmocka libcmocka-dev)
endif()

pkg_check_modules(CYAML QUIET IMPORTED_TARGET libcyaml)
if(NOT CYAML_FOUND)
  ringsim_dep_missing(libcyaml "libcyaml-dev libyaml-dev")
endif()

find_package(cJSON CONFIG QUIET)
if(TARGET cjson)
  add_library(ringsim::cjson ALIAS cjson)
else()
  pkg_check_modules(CJSON QUIET IMPORTED_TARGET libcjson)
  if(CJSON_FOUND)
    add_library(ringsim::cjson ALIAS PkgConfig::CJSON)
  else()
    ringsim_dep_missing(cJSON libcjson-dev)
  endif()
endif()

find_package(GSL QUIET)
if(NOT GSL_FOUND)
  ringsim_dep_missing(GSL libgsl-dev)
endif()

find_package(verilator QUIET HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
if(NOT verilator_FOUND)
  ringsim_dep_missing(Verilator verilator)
endif()

if(_ringsim_missing_pkgs)
  list(JOIN _ringsim_missing_pkgs " " _ringsim_missing_pkgs)
  message(FATAL_ERROR "ringsim: missing packages (see above): apt-get install ${_ringsim_missing_pkgs}")
endif()
unset(_ringsim_missing_pkgs)
