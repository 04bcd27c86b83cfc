# Test helpers. Labels: unit, integration, root, fuzz.
#
# btape_add_unit_test(NAME SOURCES f.c... [LIBS l...])
#   a cmocka program, label "unit".
# btape_add_integration_test(NAME COMMAND cmd... [LABELS l...] [TIMEOUT s])
#   a program or script returning 0 pass, 1 fail, 77 skip (CTest SKIP_RETURN_CODE 77).
#   Scripts get BIOTAPE=<path of the biotape binary> and BIOTAPE_SRC=<source dir> in the env.
# btape_add_fuzz(NAME SOURCES f.c... [LIBS l...])
#   a libFuzzer target fuzz_NAME with BIOTAPE_FUZZ=ON (run by .ci/run over its corpus
#   tests/fuzz/corpus/NAME); otherwise a regression test that feeds every corpus file once.
function(btape_add_unit_test name)
	cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
	add_executable(${name} ${T_SOURCES})
	target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
	add_test(NAME ${name} COMMAND ${name})
	set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 300
		ENVIRONMENT "BIOTAPE_SRC=${PROJECT_SOURCE_DIR}")
endfunction()

function(btape_add_integration_test name)
	cmake_parse_arguments(T "" "TIMEOUT" "COMMAND;LABELS" ${ARGN})
	if(NOT T_TIMEOUT)
		set(T_TIMEOUT 600)
	endif()
	add_test(NAME ${name} COMMAND ${T_COMMAND})
	set_tests_properties(${name} PROPERTIES LABELS "integration;${T_LABELS}"
		SKIP_RETURN_CODE 77 TIMEOUT ${T_TIMEOUT}
		ENVIRONMENT "BIOTAPE=$<TARGET_FILE:biotape>;BIOTAPE_SRC=${PROJECT_SOURCE_DIR};BIOTAPE_BIN_DIR=${CMAKE_BINARY_DIR}/bin")
endfunction()

function(btape_add_fuzz name)
	cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
	set(corpus ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/${name})
	if(BIOTAPE_FUZZ)
		add_executable(fuzz_${name} ${T_SOURCES})
		target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
		target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
		target_link_libraries(fuzz_${name} PRIVATE ${T_LIBS})
	else()
		add_executable(fuzz_${name} ${T_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/standalone_main.c)
		target_link_libraries(fuzz_${name} PRIVATE ${T_LIBS})
		add_test(NAME fuzz_corpus_${name} COMMAND fuzz_${name} ${corpus})
		set_tests_properties(fuzz_corpus_${name} PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)
	endif()
endfunction()
