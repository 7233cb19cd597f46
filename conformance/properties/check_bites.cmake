# cmake -DPROGRAM=... -DPROVIDER=... -DFILTER=... -DRULE=... -DMAX_CALLS=N [-DSEED=N]
#       -P check_bites.cmake
#
# Passes only when the property run on a faulty provider fails with an oracle violation naming
# RULE and the shrunk counterexample has at most MAX_CALLS calls after the setup. Prints the
# run's output and the length found, for the record.
foreach(_var PROGRAM PROVIDER FILTER RULE MAX_CALLS)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_bites.cmake: -D${_var}=... is required")
  endif()
endforeach()
if(NOT DEFINED SEED)
  set(SEED 1)
endif()
execute_process(
  COMMAND ${PROGRAM} --provider=${PROVIDER} --gtest_filter=${FILTER} --ndkct_seed=${SEED}
          --ndkct_tests=300
          --ndkct_callback_ms=500 --ndkct_drain_ms=300 --ndkct_quiet_us=20000
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
message("${_out}${_err}")
if(_rc EQUAL 0)
  message(FATAL_ERROR "the property passed on a provider that breaks ${RULE}")
endif()
string(REGEX MATCH "oracle: [^\n]*${RULE}[,:]" _named "${_out}")
if(NOT _named)
  message(FATAL_ERROR "the property failed, but no oracle violation names ${RULE}")
endif()
string(REGEX MATCH "minimal sequence \\(([0-9]+) calls after setup\\)" _found "${_out}")
if(NOT _found)
  message(FATAL_ERROR "no minimal sequence in the output")
endif()
set(_calls ${CMAKE_MATCH_1})
if(_calls GREATER MAX_CALLS)
  message(FATAL_ERROR "the counterexample has ${_calls} calls, more than ${MAX_CALLS}")
endif()
message("caught: ${RULE}, shrunk to ${_calls} calls after the setup")
