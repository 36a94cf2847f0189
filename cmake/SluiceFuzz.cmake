# Fuzz targets: tests/fuzz/fuzz_<name>.c, each defining LLVMFuzzerTestOneInput over the public C
# API (docs/fuzzing.md), built two ways from the same source:
#
# - SLUICE_FUZZ (clang, `make fuzz`): build/fuzz_<name>, a libFuzzer program (-fsanitize=fuzzer
#   on top of the whole build's ASan+UBSan and coverage); scripts/fuzz.sh runs them.
# - SLUICE_BUILD_TESTS (any compiler, every test build): build/tests/fuzz_replay_<name>, the same
#   source with tests/fuzz/replay.c as main, registered as the ctest entry fuzz_replay.<name>
#   (label unit, so the ASan+UBSan build runs it too) over tests/fuzz/regressions/<name>/ and the
#   generated seeds of that target: every past finding and every seed is checked in every CI
#   run, with or without clang. tests/fuzz/pending/ (findings not fixed yet) is not replayed.
#
# Both ways build fuzz_seeds (tests/fuzz/seeds.c), which writes the seed corpora from the test
# images (tests/data/make_images.py) and the operator registry: FUZZ_SEEDS_OUT/<name>/ and the
# spec target's dictionary FUZZ_SEEDS_OUT/spec.dict. In test builds the fixture fuzz_seeds runs
# it into build/fuzz-seeds after the test-data fixture.
# Every other tests/fuzz/*.c (fuzzutil.c) is linked into every target. The targets see src/ as
# well as the public headers for fuzz_hybrid.c alone (the hybrid decoder's CPU half, below the
# public API: see its header); the others use include/sluice only.

file(GLOB sluice_fuzz_targets CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_*.c")
set(sluice_fuzz_util "${PROJECT_SOURCE_DIR}/tests/fuzz/fuzzutil.c")
set(sluice_fuzz_dir "${PROJECT_SOURCE_DIR}/tests/fuzz")

add_executable(fuzz_seeds "${sluice_fuzz_dir}/seeds.c")
target_link_libraries(fuzz_seeds PRIVATE sluice_static ${SLUICE_DEPS})
set_target_properties(fuzz_seeds PROPERTIES LINKER_LANGUAGE C)

if(SLUICE_FUZZ)
    foreach(src IN LISTS sluice_fuzz_targets)
        get_filename_component(name "${src}" NAME_WE)
        add_executable(${name} "${src}" "${sluice_fuzz_util}")
        target_include_directories(${name} PRIVATE "${sluice_fuzz_dir}"
                                   "${PROJECT_SOURCE_DIR}/src")
        target_link_libraries(${name} PRIVATE sluice_static ${SLUICE_DEPS})
        target_link_options(${name} PRIVATE -fsanitize=fuzzer)
        set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
    endforeach()
endif()

if(SLUICE_BUILD_TESTS AND NOT SLUICE_FUZZ)
    set(sluice_fuzz_seeds "${PROJECT_BINARY_DIR}/fuzz-seeds")
    file(GLOB sluice_fuzz_specs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/examples/*.json"
         "${PROJECT_SOURCE_DIR}/bench/specs/*.json")
    add_test(NAME fixture.fuzz_seeds
             COMMAND fuzz_seeds "${sluice_fuzz_seeds}" "${SLUICE_TEST_DATA}" ${sluice_fuzz_specs})
    set_tests_properties(fixture.fuzz_seeds PROPERTIES
        FIXTURES_SETUP fuzzseeds FIXTURES_REQUIRED testdata LABELS fixture TIMEOUT 120)

    foreach(src IN LISTS sluice_fuzz_targets)
        get_filename_component(name "${src}" NAME_WE)
        string(REGEX REPLACE "^fuzz_" "" target "${name}")
        add_executable(fuzz_replay_${target} "${src}" "${sluice_fuzz_util}"
                       "${sluice_fuzz_dir}/replay.c")
        target_include_directories(fuzz_replay_${target} PRIVATE "${sluice_fuzz_dir}"
                                   "${PROJECT_SOURCE_DIR}/src")
        target_link_libraries(fuzz_replay_${target} PRIVATE sluice_static ${SLUICE_DEPS})
        set_target_properties(fuzz_replay_${target} PROPERTIES
            RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/tests" LINKER_LANGUAGE C)
        # A target without findings yet has no regressions folder: replay.c skips a missing
        # folder (saying so) but fails when no input at all was run.
        add_test(NAME fuzz_replay.${target}
                 COMMAND fuzz_replay_${target} "${sluice_fuzz_dir}/regressions/${target}"
                         "${sluice_fuzz_seeds}/${target}"
                 WORKING_DIRECTORY "${PROJECT_BINARY_DIR}")
        set_tests_properties(fuzz_replay.${target} PROPERTIES
            LABELS unit TIMEOUT 300 FIXTURES_REQUIRED "testdata;fuzzseeds")
    endforeach()
endif()
