# install_consumer.cmake — cmake -P script: install to a scratch prefix, then build and run a consumer via find_package and via pkg-config.
#
# Inputs (-D): BUILD_DIR WORK_DIR CONSUMER_SRC GENERATOR MAKE_PROGRAM C_COMPILER CONFIG LIBDIR
#              PKG_CONFIG EXTRA_FLAGS (space-separated, may be empty)
cmake_minimum_required(VERSION 3.22)

foreach(var BUILD_DIR WORK_DIR CONSUMER_SRC GENERATOR C_COMPILER LIBDIR PKG_CONFIG)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_consumer: -D${var}=... is required")
  endif()
endforeach()
# --config only when there is one: a single-config tree with no build type installs "noconfig"
# export files, which `--config Release` would skip.
set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
separate_arguments(extra_flags UNIX_COMMAND "${EXTRA_FLAGS}")

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# step(<name> <command...>): runs a command, prints its output only if it fails.
function(step name)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    message(FATAL_ERROR "install_consumer: ${name} failed (${rc})\n$ ${cmd}\n${out}")
  endif()
  message(STATUS "ok: ${name}")
endfunction()

step("cmake --install"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} ${config_args} --prefix ${prefix})

foreach(f include/ncl/ncl.h include/ncl/ncl_host.h ${LIBDIR}/pkgconfig/ringsim.pc
          ${LIBDIR}/cmake/ringsim/ringsimConfig.cmake ${LIBDIR}/cmake/ringsim/ringsimTargets.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install_consumer: ${f} was not installed under ${prefix}")
  endif()
endforeach()

# 1. CMake package: find_package(ringsim) + ringsim::ncl, same generator and compiler.
set(extra_args "")
if(MAKE_PROGRAM)
  list(APPEND extra_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
if(extra_flags)
  list(APPEND extra_args "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
endif()
step("configure consumer (find_package)"
  ${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${WORK_DIR}/consumer-build -G ${GENERATOR}
    ${extra_args}
    -DCMAKE_C_COMPILER=${C_COMPILER}
    "-DCMAKE_BUILD_TYPE=${CONFIG}"
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build consumer (find_package)"
  ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build ${config_args})
set(exe ${WORK_DIR}/consumer-build/consumer)
if(NOT EXISTS ${exe} AND CONFIG)
  set(exe ${WORK_DIR}/consumer-build/${CONFIG}/consumer)
endif()
step("run consumer (find_package)" ${exe})
# ringsim_add_scenario_test(): the consumer's CTest runs the installed program on its scenario.
step("ctest consumer (ringsim_add_scenario_test)"
  ${CMAKE_COMMAND} -E chdir ${WORK_DIR}/consumer-build ctest --output-on-failure ${config_args})
foreach(t consumer_ring4 consumer_ring4_host)
  file(READ ${WORK_DIR}/consumer-build/${t}.junit.xml junit)
  string(REGEX MATCHALL "<testcase " cases "${junit}")
  list(LENGTH cases n)
  if(NOT n EQUAL 12 OR junit MATCHES "<failure") # 3 sizes x 2 collectives x 2 placements
    message(FATAL_ERROR "install_consumer: ${t}.junit.xml has ${n} testcases (want 12, none failed):\n${junit}")
  endif()
endforeach()

# 2. pkg-config: cc main.c $(pkg-config --cflags --libs ringsim).
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ringsim
  RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install_consumer: pkg-config --cflags --libs ringsim failed: ${pc_err}")
endif()
message(STATUS "pkg-config ringsim: ${pc_flags}")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
step("compile consumer (pkg-config)"
  ${C_COMPILER} -std=c11 ${extra_flags} ${CONSUMER_SRC}/main.c ${pc_flags}
    -o ${WORK_DIR}/consumer-pc)
step("run consumer (pkg-config)" ${WORK_DIR}/consumer-pc)
