# Real --json output (two experiments: plain run and a preset would need
# locks; a plain run with two locks and two thread counts covers every
# field) validated against the schema.
execute_process(COMMAND ${LOCKBENCH} --list OUTPUT_VARIABLE list)
if(NOT list MATCHES "(^|\n)pthread-rwlock ")
  message("LOCKBENCH_SKIP: lock pthread-rwlock is not registered")
  return()
endif()
execute_process(COMMAND ${LOCKBENCH} --json -w futex -d 0.05 -t 1,2 -r 2
                        -x pthread-rwlock,pthread-mutex
  RESULT_VARIABLE status OUTPUT_FILE ${OUT})
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lockbench --json failed with status ${status}")
endif()
execute_process(COMMAND ${PYTHON} ${VALIDATOR} ${SCHEMA} ${OUT}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lockbench --json output does not match ${SCHEMA}")
endif()
