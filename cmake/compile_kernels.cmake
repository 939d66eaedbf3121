# Install step (CMakeLists.txt): compile the kernels into numba's cache of the installed package
# (ambf_collision/ros/compile_kernels.py), so that a node started after the build finds them
# compiled. Runs after the package's files are installed or linked (colcon build, with or without
# --symlink-install), with the install tree first on PYTHONPATH: numba keys its cache by the path
# a module was imported from. Seconds when nothing changed; 1-3 minutes cold. Set by the caller:
# AMBF_PYTHON, AMBF_SITE (the installed site-packages), AMBF_DEMO (the demo scene's folder),
# AMBF_WORKDIR (a folder that is not the source tree: `-m` puts the working folder first).
if(DEFINED ENV{DESTDIR} AND NOT "$ENV{DESTDIR}" STREQUAL "")
  # a staged install (a distribution package): the cache would be keyed by the staging path
  message(STATUS "ambf_collision: DESTDIR set, kernels not compiled (the first start compiles)")
  return()
endif()
message(STATUS "ambf_collision: compiling the collision kernels (numba cache; 1-3 min cold)")
if(DEFINED ENV{PYTHONPATH} AND NOT "$ENV{PYTHONPATH}" STREQUAL "")
  set(_path "${AMBF_SITE}:$ENV{PYTHONPATH}")
else()
  set(_path "${AMBF_SITE}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${_path}"
    "${AMBF_PYTHON}" -m ambf_collision.ros.compile_kernels "${AMBF_DEMO}/demo_arm.yaml"
    --probes "${AMBF_DEMO}/demo_probes.yaml"
  WORKING_DIRECTORY "${AMBF_WORKDIR}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_rc EQUAL 0)
  message(STATUS "${_out}")
else()
  message(WARNING "ambf_collision: compiling the kernels failed (the node's first start "
    "compiles them instead):\n${_err}")
endif()
