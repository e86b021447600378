# zmq.cmake — the ZeroMQ backend (one process per rank), included OPTIONALly by firmware/CMakeLists.txt.
if(TARGET PkgConfig::ZMQ)
  add_library(ncl_zmq STATIC ${CMAKE_CURRENT_LIST_DIR}/ncl_zmq.c)
  target_link_libraries(ncl_zmq PUBLIC ncl ncl_wire PkgConfig::ZMQ PRIVATE ncl_backend)
  set_target_properties(ncl_zmq PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(ringsim::ncl_zmq ALIAS ncl_zmq)
endif()
