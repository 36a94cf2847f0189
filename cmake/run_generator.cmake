# Runs a test-data generator once per build tree: cmake -DPYTHON=... -DSCRIPT=... -DOUT=...
# [-DARGS="--a 1 --b 2"] -P run_generator.cmake  ->  ${PYTHON} ${SCRIPT} ${OUT} ${ARGS}
#
# The output is reused while ${OUT}.stamp holds the same key: a hash of every tests/data/*.py
# (the generator and the helpers it may import) and the arguments. The stamp sits beside the
# output, not in it, so tests that list the directory see only generated files. A failed run
# removes the output and fails (the ctest fixture then fails and names the generator).
# A generator that does not exist yet is reported and skipped, not failed.
#
# -DCARRIED=1: OUT was generated on another machine and carried here (SLUICE_TEST_DATA_FROM,
# scripts/device-prepare.sh): nothing is generated; a folder that was not carried is reported,
# and the tests that read it fail on their own, naming what they could not open.
if(CARRIED)
    if(IS_DIRECTORY "${OUT}")
        message(STATUS "test data: ${OUT} (carried)")
    else()
        message(STATUS "test data: ${OUT} was not carried; the tests that read it will fail")
    endif()
    return()
endif()
foreach(var PYTHON SCRIPT OUT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run_generator.cmake: -D${var}=... is required")
    endif()
endforeach()

if(NOT EXISTS "${SCRIPT}")
    message(STATUS "test data: ${SCRIPT} does not exist yet; skipping ${OUT}")
    return()
endif()

separate_arguments(ARGS UNIX_COMMAND "${ARGS}")
get_filename_component(dir "${SCRIPT}" DIRECTORY)
file(GLOB_RECURSE inputs "${dir}/*.py")
list(SORT inputs)
set(key "${PYTHON};${SCRIPT};${ARGS}")
foreach(f IN LISTS inputs)
    file(SHA256 "${f}" h)
    string(APPEND key ";${h}")
endforeach()
string(SHA256 key "${key}")

if(EXISTS "${OUT}.stamp" AND IS_DIRECTORY "${OUT}")
    file(READ "${OUT}.stamp" old)
    if(old STREQUAL key)
        message(STATUS "test data: ${OUT} is up to date")
        return()
    endif()
endif()

file(REMOVE_RECURSE "${OUT}")
file(REMOVE "${OUT}.stamp")
list(JOIN ARGS " " shown)
message(STATUS "test data: ${PYTHON} ${SCRIPT} ${OUT} ${shown}")
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${OUT}" ${ARGS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE "${OUT}")
    message(FATAL_ERROR "test data: ${SCRIPT} failed (${rc})")
endif()
file(WRITE "${OUT}.stamp" "${key}")
