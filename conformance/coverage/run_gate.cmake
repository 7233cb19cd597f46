# Writes the suite's rule coverage, then judges it (ctest runs this: one test, two steps).
execute_process(COMMAND ${CONFORMANCE_TESTS} --coverage=${OUT} RESULT_VARIABLE listed
                ERROR_VARIABLE summary)
if(NOT listed EQUAL 0)
  message(FATAL_ERROR "conformance_tests --coverage failed (${listed}): ${summary}")
endif()
execute_process(COMMAND ${GATE} --coverage=${OUT} --exemptions=${EXEMPTIONS}
                RESULT_VARIABLE judged)
if(NOT judged EQUAL 0)
  message(FATAL_ERROR "the coverage gate failed (see above)")
endif()
