# The project's one Python interpreter (scripts/python-env.sh picks it and
# scripts/build.sh passes it as -DPython3_EXECUTABLE). lit's %python, the
# pytest entry, the ONNX importer's proto lookup and the CUDA step tests all
# use Python3_EXECUTABLE; configure fails unless that interpreter holds every
# package pinned in python/requirements.txt, so that no test ever runs
# against an environment the scripts did not make.
find_package(Python3 COMPONENTS Interpreter REQUIRED)

option(MSAMP_CHECK_PYTHON_PACKAGES
  "Fail configure unless Python3_EXECUTABLE has python/requirements.txt" ON)
set(MSAMP_PYTHON_REQUIREMENTS ${PROJECT_SOURCE_DIR}/python/requirements.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${MSAMP_PYTHON_REQUIREMENTS})
if(MSAMP_CHECK_PYTHON_PACKAGES)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_python_env.py
            --requirements ${MSAMP_PYTHON_REQUIREMENTS}
    RESULT_VARIABLE MSAMP_PYTHON_CHECK
    ERROR_VARIABLE MSAMP_PYTHON_CHECK_MESSAGE)
  if(NOT MSAMP_PYTHON_CHECK EQUAL 0)
    message(FATAL_ERROR "${MSAMP_PYTHON_CHECK_MESSAGE}"
      "(-DMSAMP_CHECK_PYTHON_PACKAGES=OFF builds without the check; the "
      "tests then fail on whatever is missing.)")
  endif()
endif()

# The environment's prefix: lit refuses to run under an interpreter of
# another environment (test/lit.cfg.py).
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import sys; print(sys.prefix)"
  OUTPUT_VARIABLE MSAMP_PYTHON_PREFIX
  OUTPUT_STRIP_TRAILING_WHITESPACE)
message(STATUS "msamp: Python ${Python3_EXECUTABLE} (environment ${MSAMP_PYTHON_PREFIX})")
