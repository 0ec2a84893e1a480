# CTest's cpu/install/consumer: installs the build into a scratch prefix,
# then configures and builds examples/library as a project of its own
# against that prefix (find_package(gpudict)), so that the package, its
# headers and its exported target are what a user would get.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... -DCUDA_COMPILER=... -DCXX_COMPILER=... -P install_test.cmake
foreach(var BUILD_DIR SOURCE_DIR WORK CUDA_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${step} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK}/prefix)
foreach(f include/gpudict/btree_map.hpp include/gpudict/btree_ref.cuh include/gpudict/slab_hash_map.hpp
          include/gpudict/core/btree/btree_map.hpp lib/cmake/gpudict/gpudictConfig.cmake bin/gpudict)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "install test: ${f} is not installed")
  endif()
endforeach()
run("configuring the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/library -B ${WORK}/consumer
    -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
file(STRINGS ${WORK}/consumer/CMakeCache.txt found REGEX "^gpudict_DIR:")
if(NOT found MATCHES "${WORK}/prefix")
  message(FATAL_ERROR "install test: the consumer found gpudict elsewhere (${found})")
endif()
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer -j2)
foreach(exe gpudict_host_api gpudict_user_kernel)
  if(NOT EXISTS ${WORK}/consumer/${exe})
    message(FATAL_ERROR "install test: ${exe} was not built")
  endif()
endforeach()
message(STATUS "install test: examples/library built against ${WORK}/prefix")
