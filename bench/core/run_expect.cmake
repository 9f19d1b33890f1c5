# Runs lockbench with ARGS (space separated) and checks its exit status.
#   EXPECT_STATUS   required exit status
#   EXPECT_ONE_LINE 1: stderr must be exactly one line
#   EXPECT_MATCH    regex stderr must match
#   NEEDS           lock that must be registered, else print LOCKBENCH_SKIP
#                   (the test's SKIP_REGULAR_EXPRESSION turns that into a skip)
if(NEEDS)
  execute_process(COMMAND ${LOCKBENCH} --list OUTPUT_VARIABLE list)
  if(NOT list MATCHES "(^|\n)${NEEDS} ")
    message("LOCKBENCH_SKIP: lock ${NEEDS} is not registered")
    return()
  endif()
endif()
separate_arguments(argv UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${LOCKBENCH} ${argv}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
message("stderr: ${err}")
if(NOT status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "lockbench ${ARGS}: exit status ${status}, expected ${EXPECT_STATUS}")
endif()
if(EXPECT_ONE_LINE)
  string(REGEX MATCHALL "\n" nl "${err}")
  list(LENGTH nl n)
  if(NOT n EQUAL 1 OR NOT err MATCHES "^lockbench: .*try 'lockbench --help'")
    message(FATAL_ERROR "expected one 'lockbench: ...' line with a usage hint on stderr, got: ${err}")
  endif()
endif()
if(EXPECT_MATCH AND NOT err MATCHES "${EXPECT_MATCH}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_MATCH}': ${err}")
endif()
