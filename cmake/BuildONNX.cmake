# The ONNX C++ library (protobuf classes, checker, shape inference), built
# once per build directory from the `onnx` source distribution on PyPI.
# Debian's libonnx is 1.12 (opsets up to 17); the PyTorch exporter writes
# opset 18 and later. The library is built at configure time, as static PIC
# libraries against Debian's protobuf, into ${TTT_ONNX_PREFIX}; a later
# configure finds it there and builds nothing (the first build takes a few
# minutes; see README.md).
set(TTT_ONNX_VERSION 1.23.2)
set(TTT_ONNX_URL "https://files.pythonhosted.org/packages/3f/62/bc2dfadb63ecf04cb2d65a6b17751863039d36c65de51d6a3128ab35f1e7/onnx-${TTT_ONNX_VERSION}.tar.gz")
set(TTT_ONNX_SHA256 008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8)
# ONNX's CMakeLists needs CMake 3.26. Debian 12 has 3.25: `pip install .`
# configures with PyPI's CMake (pyproject.toml asks for >= 3.26), and `make`,
# which configures with the system's, runs ONNX's build with the CMake of
# PyPI's `cmake` package in the Python that configures (scripts/setup.sh
# installs it). Nothing here installs anything.
set(TTT_ONNX_PREFIX "${CMAKE_BINARY_DIR}/_deps/onnx-${TTT_ONNX_VERSION}"
  CACHE PATH "Where ONNX is built and installed (another build directory's may be reused)")

set(_onnx_install "${TTT_ONNX_PREFIX}/install")
set(_onnx_stamp "${_onnx_install}/.ttt-complete")
if(NOT EXISTS "${_onnx_stamp}")
  message(STATUS "ONNX ${TTT_ONNX_VERSION}: building it once into ${TTT_ONNX_PREFIX}")
  set(_archive "${TTT_ONNX_PREFIX}/onnx-${TTT_ONNX_VERSION}.tar.gz")
  if(NOT EXISTS "${_archive}")
    file(DOWNLOAD "${TTT_ONNX_URL}" "${_archive}.part"
      EXPECTED_HASH SHA256=${TTT_ONNX_SHA256} STATUS _status TLS_VERIFY ON)
    list(GET _status 0 _code)
    if(NOT _code EQUAL 0)
      list(GET _status 1 _why)
      message(FATAL_ERROR "ONNX: cannot download ${TTT_ONNX_URL}: ${_why}")
    endif()
    file(RENAME "${_archive}.part" "${_archive}")
  endif()
  file(REMOVE_RECURSE "${TTT_ONNX_PREFIX}/src" "${TTT_ONNX_PREFIX}/build")
  file(ARCHIVE_EXTRACT INPUT "${_archive}" DESTINATION "${TTT_ONNX_PREFIX}/src")

  set(_cmake "${CMAKE_COMMAND}")
  if(CMAKE_VERSION VERSION_LESS 3.26)
    set(_cmake "")
    if(NOT Python3_EXECUTABLE)
      find_program(Python3_EXECUTABLE NAMES python3)
    endif()
    if(Python3_EXECUTABLE)
      # Not from sys.path's '' (the working directory): the source tree's
      # cmake/ would be imported instead.
      execute_process(
        COMMAND "${Python3_EXECUTABLE}" -c
          "import sys; sys.path.remove(''); import cmake; print(cmake.CMAKE_BIN_DIR)"
        OUTPUT_VARIABLE _bin OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
        RESULT_VARIABLE _rc)
      if(_rc EQUAL 0 AND EXISTS "${_bin}/cmake")
        execute_process(COMMAND "${_bin}/cmake" --version
          OUTPUT_VARIABLE _version ERROR_QUIET RESULT_VARIABLE _rc)
        string(REGEX MATCH "[0-9]+\\.[0-9]+(\\.[0-9]+)?" _version "${_version}")
        if(_rc EQUAL 0 AND _version VERSION_GREATER_EQUAL 3.26)
          set(_cmake "${_bin}/cmake")
        endif()
      endif()
    endif()
    if(NOT _cmake)
      message(FATAL_ERROR "ONNX's build needs CMake >= 3.26 (this is ${CMAKE_VERSION}): "
        "pip install 'cmake>=3.26' for ${Python3_EXECUTABLE} (scripts/setup.sh does)")
    endif()
    message(STATUS "ONNX: building it with ${_cmake} (${_version})")
  endif()

  cmake_host_system_information(RESULT _jobs QUERY NUMBER_OF_LOGICAL_CORES)
  # ONNX_ML on: the generated headers are onnx-ml.pb.h, as the definitions
  # in TTT_ONNX_DEFINITIONS say. A unity build halves the compile time.
  execute_process(
    COMMAND "${_cmake}" -G "${CMAKE_GENERATOR}"
      -S "${TTT_ONNX_PREFIX}/src/onnx-${TTT_ONNX_VERSION}"
      -B "${TTT_ONNX_PREFIX}/build"
      -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
      -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
      -DCMAKE_INSTALL_PREFIX=${_onnx_install}
      -DCMAKE_INSTALL_LIBDIR=lib
      -DCMAKE_POSITION_INDEPENDENT_CODE=ON
      -DBUILD_SHARED_LIBS=OFF
      -DONNX_ML=ON
      -DONNX_NAMESPACE=onnx
      -DONNX_BUILD_PYTHON=OFF
      -DONNX_BUILD_TESTS=OFF
      -DONNX_GEN_PB_TYPE_STUBS=OFF
      -DONNX_USE_PROTOBUF_SHARED_LIBS=ON
      -DONNX_USE_UNITY_BUILD=ON
    OUTPUT_FILE "${TTT_ONNX_PREFIX}/configure.log"
    ERROR_FILE "${TTT_ONNX_PREFIX}/configure.log"
    RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "ONNX: configuring it failed; see ${TTT_ONNX_PREFIX}/configure.log")
  endif()
  execute_process(
    COMMAND "${_cmake}" --build "${TTT_ONNX_PREFIX}/build" --target install
      --parallel ${_jobs}
    OUTPUT_FILE "${TTT_ONNX_PREFIX}/build.log"
    ERROR_FILE "${TTT_ONNX_PREFIX}/build.log"
    RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "ONNX: building it failed; see ${TTT_ONNX_PREFIX}/build.log")
  endif()
  # The sources and objects are not needed once installed.
  file(REMOVE_RECURSE "${TTT_ONNX_PREFIX}/src" "${TTT_ONNX_PREFIX}/build")
  file(TOUCH "${_onnx_stamp}")
endif()

# In script mode, `cd build && cmake -DCMAKE_GENERATOR=Ninja ... -P
# ../cmake/BuildONNX.cmake` builds the library ahead of the configure (a
# script's CMAKE_BINARY_DIR is the working directory, so _deps/ lands there).
if(CMAKE_SCRIPT_MODE_FILE)
  return()
endif()

# FindProtobuf must run before the ONNX package config, which refers to
# protobuf::libprotobuf. Only this ONNX, never a system one.
find_package(Protobuf REQUIRED)
find_package(ONNX ${TTT_ONNX_VERSION} EXACT CONFIG REQUIRED
  PATHS "${_onnx_install}" NO_DEFAULT_PATH)
message(STATUS "Using ONNX ${ONNX_VERSION} from ${_onnx_install}")
