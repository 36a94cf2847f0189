# Runs a command and writes its standard output to a file:
#   cmake -DOUT=file -P run_to_file.cmake -- command [arguments...]
# The output goes to ${OUT}.tmp first and is renamed when the command succeeded, so a failed
# run leaves no half-written file (and the build step fails, naming the command). Used by the
# `docs` target (docs/ops.md from `sluice ops --markdown`).
if(NOT DEFINED OUT)
    message(FATAL_ERROR "run_to_file.cmake: -DOUT=... is required")
endif()

# The command: every argument after "--" (CMAKE_ARGV0 is cmake itself).
set(cmd "")
set(seen_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
    if(seen_dashes)
        list(APPEND cmd "${CMAKE_ARGV${i}}")
    elseif(CMAKE_ARGV${i} STREQUAL "--")
        set(seen_dashes TRUE)
    endif()
endforeach()
if("${cmd}" STREQUAL "")
    message(FATAL_ERROR "run_to_file.cmake: no command after --")
endif()

get_filename_component(dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
execute_process(COMMAND ${cmd} OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    file(REMOVE "${OUT}.tmp")
    list(JOIN cmd " " shown)
    message(FATAL_ERROR "${shown} failed (${rc})")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
