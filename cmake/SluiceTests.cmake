# Tests: one executable and one ctest entry per tests/c/test_*.c.
#
# - Every other tests/c/*.c (the shared C test library: harness, helpers) is compiled once into
#   the static library sluice_testlib and linked into each test.
# - Tests link sluice_static (they use internal sl__ symbols) and cmocka; they may include
#   private headers from src/ and helpers from tests/c/.
# - Label from the name: test_exec*, test_pipeline* -> exec; test_op_*, test_codec*,
#   test_reader*, test_decoder*, test_cmn*, test_random* -> ops; test_cuda* -> gpu;
#   test_cli* -> cli; anything else -> unit.
# - test_cuda*: registered twice — `test_cuda_x` on the real device (it exits 77, SKIP, saying
#   why, when the build has no CUDA or the machine no GPU) and `test_cuda_x.emulated` with
#   SLUICE_GPU_EMULATE=1 (the GPU stage emulated on the host, src/cuda/gpu.h), which runs
#   wherever the build has CUDA.
# - TIMEOUT 120 s (300 s for test_exec*, which run slowly under TSan; 900 s for test_soak, three
#   1,000-batch soaks); SKIP_RETURN_CODE 77.
# - scripts/check-toolchains.sh is the ctest entry `toolchains` (label portability).
# - Environment: SLUICE_TEST_DATA (make_images.py output), SLUICE_TEST_TREE (make_tree.py
#   output), SLUICE_CLI (the sluice executable), SLUICE_SOURCE_DIR, SLUICE_BUILD_DIR.
# - Fixture `testdata`: generated once per build tree (cached by a hash of tests/data/*.py and
#   the arguments), required by every test; or carried from another machine
#   (SLUICE_TEST_DATA_FROM).

pkg_check_modules(sluice_cmocka IMPORTED_TARGET cmocka)
if(NOT sluice_cmocka_FOUND)
    message(FATAL_ERROR "cmocka not found (apt-get install libcmocka-dev, or scripts/setup.sh); "
                        "configure with -DSLUICE_BUILD_TESTS=OFF to build without tests")
endif()

# Generating the test data needs Debian's wallpaper photos (tests/data/photos.py); a machine
# without them (the lent GPU machine) uses data generated elsewhere and carried:
# -DSLUICE_TEST_DATA_FROM=DIR with DIR/testdata, DIR/testtree and DIR/testcases (any of them may
# be missing; scripts/device-prepare.sh makes such a folder).
set(SLUICE_TEST_DATA_FROM "" CACHE PATH
    "Folder of test data generated on another machine (testdata/, testtree/, testcases/)")
if(SLUICE_TEST_DATA_FROM)
    set(sluice_data_root "${SLUICE_TEST_DATA_FROM}")
    set(sluice_carried 1)
else()
    set(sluice_data_root "${PROJECT_BINARY_DIR}")
    set(sluice_carried 0)
endif()
set(SLUICE_TEST_DATA "${sluice_data_root}/testdata")
set(SLUICE_TEST_TREE "${sluice_data_root}/testtree")
set(SLUICE_TEST_CASES "${sluice_data_root}/testcases")
set(sluice_test_env
    "SLUICE_TEST_DATA=${SLUICE_TEST_DATA}"
    "SLUICE_TEST_TREE=${SLUICE_TEST_TREE}"
    "SLUICE_TEST_CASES=${SLUICE_TEST_CASES}"
    "SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "SLUICE_BUILD_DIR=${PROJECT_BINARY_DIR}")
if(TARGET sluice_cli)
    list(APPEND sluice_test_env "SLUICE_CLI=$<TARGET_FILE:sluice_cli>")
endif()

# --- fixture: test data -----------------------------------------------------------------------
set(sluice_gen "${PROJECT_SOURCE_DIR}/cmake/run_generator.cmake")
add_test(NAME fixture.testdata.images
         COMMAND ${CMAKE_COMMAND} "-DPYTHON=${SLUICE_PYTHON}"
                 "-DSCRIPT=${PROJECT_SOURCE_DIR}/tests/data/make_images.py"
                 "-DOUT=${SLUICE_TEST_DATA}" "-DCARRIED=${sluice_carried}" -P "${sluice_gen}")
add_test(NAME fixture.testdata.tree
         COMMAND ${CMAKE_COMMAND} "-DPYTHON=${SLUICE_PYTHON}"
                 "-DSCRIPT=${PROJECT_SOURCE_DIR}/tests/data/make_tree.py"
                 "-DOUT=${SLUICE_TEST_TREE}" "-DCARRIED=${sluice_carried}"
                 "-DARGS=--classes 4 --per-class 25 --seed 1" -P "${sluice_gen}")
add_test(NAME fixture.testdata.cases
         COMMAND ${CMAKE_COMMAND} "-DPYTHON=${SLUICE_PYTHON}"
                 "-DSCRIPT=${PROJECT_SOURCE_DIR}/tests/data/make_cases.py"
                 "-DOUT=${SLUICE_TEST_CASES}" "-DCARRIED=${sluice_carried}" -P "${sluice_gen}")
set_tests_properties(fixture.testdata.images fixture.testdata.tree fixture.testdata.cases PROPERTIES
                     FIXTURES_SETUP testdata LABELS fixture TIMEOUT 300)

# --- the C test library -----------------------------------------------------------------------
file(GLOB sluice_test_all CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/c/*.c")
set(sluice_test_mains "")
set(sluice_test_lib_sources "")
foreach(src IN LISTS sluice_test_all)
    get_filename_component(name "${src}" NAME_WE)
    if(name MATCHES "^test_")
        list(APPEND sluice_test_mains "${src}")
    else()
        list(APPEND sluice_test_lib_sources "${src}")
    endif()
endforeach()

add_library(sluice_test_deps INTERFACE)
target_include_directories(sluice_test_deps INTERFACE
                           "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests/c")
target_link_libraries(sluice_test_deps INTERFACE sluice_static PkgConfig::sluice_cmocka
                      ${SLUICE_DEPS})
if(sluice_test_lib_sources)
    add_library(sluice_testlib STATIC ${sluice_test_lib_sources})
    set_target_properties(sluice_testlib PROPERTIES LINKER_LANGUAGE C)
    target_link_libraries(sluice_testlib PUBLIC sluice_test_deps)
    set(sluice_test_link sluice_testlib)
else()
    set(sluice_test_link sluice_test_deps)
endif()

# --- one executable per test ------------------------------------------------------------------
foreach(src IN LISTS sluice_test_mains)
    get_filename_component(name "${src}" NAME_WE)
    if(name MATCHES "^test_(exec|pipeline)")
        set(label exec)
    elseif(name MATCHES "^test_(op_|codec|reader|decoder|cmn|random|resize|crop|flip|warp|color|image)")
        set(label ops)
    elseif(name MATCHES "^test_cuda")
        set(label gpu)
    elseif(name MATCHES "^test_cli")
        set(label cli)
    else()
        set(label unit)
    endif()
    if(name MATCHES "^test_exec")
        set(timeout 300)
    elseif(name STREQUAL "test_soak")
        # 3 x 1,000 batches (one soak per bad-sample policy); under skip and replace every
        # damaged file is decoded until it fails (a 257-scan JPEG, a zTXt bomb): slow under ASan
        set(timeout 900)
    else()
        set(timeout 120)
    endif()

    add_executable(${name} "${src}")
    target_link_libraries(${name} PRIVATE ${sluice_test_link})
    # LINKER_LANGUAGE C: link like any C program would (sluice_static carries CUDA objects when
    # SLUICE_CUDA is on, which would otherwise make CMake link through nvcc).
    set_target_properties(${name} PROPERTIES
        RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/tests" LINKER_LANGUAGE C)
    if(label STREQUAL "cli" AND TARGET sluice_cli)
        add_dependencies(${name} sluice_cli)
    endif()

    add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
    set_tests_properties(${name} PROPERTIES
        LABELS ${label}
        TIMEOUT ${timeout}
        SKIP_RETURN_CODE 77
        FIXTURES_REQUIRED testdata
        ENVIRONMENT "${sluice_test_env}")
    if(label STREQUAL "gpu")
        add_test(NAME ${name}.emulated COMMAND ${name} WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
        set_tests_properties(${name}.emulated PROPERTIES
            LABELS gpu-emulated
            TIMEOUT ${timeout}
            SKIP_RETURN_CODE 77
            FIXTURES_REQUIRED testdata
            ENVIRONMENT "${sluice_test_env};SLUICE_GPU_EMULATE=1")
    endif()
endforeach()

# The hybrid decoder with its device entropy decoding off (SLUICE_HYBRID_DEVICE_HUFF=0, read
# once per process): the same tests, every sample entropy-decoded on the CPU.
if(TARGET test_cuda_hybrid)
    add_test(NAME test_cuda_hybrid.emulated_off COMMAND test_cuda_hybrid
             WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
    set_tests_properties(test_cuda_hybrid.emulated_off PROPERTIES
        LABELS gpu-emulated
        TIMEOUT 120
        SKIP_RETURN_CODE 77
        FIXTURES_REQUIRED testdata
        ENVIRONMENT "${sluice_test_env};SLUICE_GPU_EMULATE=1;SLUICE_HYBRID_DEVICE_HUFF=0")
    # and with chunks of 16 bytes (many per test image) after 0 and 2 rounds: the fixup doing
    # all, and the kernels' record sets the other way round (SLUICE_HYBRID_CHUNK, hybrid.cu)
    foreach(way 16:0 16:2)
        string(REPLACE ":" "_" suffix "${way}")
        add_test(NAME test_cuda_hybrid.emulated_chunks_${suffix} COMMAND test_cuda_hybrid
                 WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
        set_tests_properties(test_cuda_hybrid.emulated_chunks_${suffix} PROPERTIES
            LABELS gpu-emulated
            TIMEOUT 120
            SKIP_RETURN_CODE 77
            FIXTURES_REQUIRED testdata
            ENVIRONMENT "${sluice_test_env};SLUICE_GPU_EMULATE=1;SLUICE_HYBRID_CHUNK=${way}")
    endforeach()
endif()

# --- the toolchains users have: jpeg7/jpeg8 API headers, no C11 atomics behind a .cu file ------
# (scripts/check-toolchains.sh; SKIP when the .cu half has no nvcc). Not in sanitizer builds:
# it compiles sources, it runs none of the library.
if(NOT SLUICE_SANITIZE)
    add_test(NAME toolchains
             COMMAND "${PROJECT_SOURCE_DIR}/scripts/check-toolchains.sh" "${CMAKE_CUDA_COMPILER}")
    set_tests_properties(toolchains PROPERTIES LABELS portability TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "CC=${CMAKE_C_COMPILER}")
endif()

# --- Python tests (pytest), once tests/python has any ---------------------------------------
# They import the package the build assembles in ${build}/python/sluice (python/CMakeLists.txt).
file(GLOB sluice_py_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/python/test_*.py")
if(sluice_py_tests)
    add_test(NAME python
             COMMAND "${SLUICE_PYTHON}" -m pytest -q -p no:cacheprovider
                     "${PROJECT_SOURCE_DIR}/tests/python"
             WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(python PROPERTIES
        LABELS python
        TIMEOUT 900
        SKIP_RETURN_CODE 77
        FIXTURES_REQUIRED testdata
        ENVIRONMENT "${sluice_test_env};SLUICE_LIBRARY=$<TARGET_FILE:sluice>;PYTHONPATH=${PROJECT_BINARY_DIR}/python")
endif()

# --- the installed library, used as a user would (README's examples/validate.c) -------------
# Not in sanitizer builds: a plain consumer cannot link an instrumented libsluice.a.
if(NOT SLUICE_SANITIZE)
    add_test(NAME install_consumer
             COMMAND "${PROJECT_SOURCE_DIR}/tests/install_consumer.sh" "${PROJECT_BINARY_DIR}"
                     "${PROJECT_SOURCE_DIR}" "${SLUICE_TEST_TREE}")
    set_tests_properties(install_consumer PROPERTIES
        LABELS cli TIMEOUT 300 FIXTURES_REQUIRED testdata)
endif()
