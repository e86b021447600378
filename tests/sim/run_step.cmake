# run_step.cmake — included by the tests' -P scripts: run_step(COMMAND...) runs one command, shows it
# with its output and exit status, and fails the script (named by RUN_STEP_NAME) unless it exits 0.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " shown "${ARGN}")
  message("$ ${shown}\n--- stdout ---\n${out}--- stderr ---\n${err}--- exit status ${rc} ---")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${RUN_STEP_NAME}: exit status ${rc}, expected 0")
  endif()
endfunction()
