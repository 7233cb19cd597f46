# How long the longest tests take (seconds, a fresh-clone `.ci/run` at load about 2), given to
# ctest as COST: `ctest -j` starts the costliest first. A fresh clone has no timing history
# (Testing/Temporary/CTestCostData.txt), so without these ctest starts in test order, and these
# few, numbered last, ran after the 1,500 short tests: three Python fault shards of ~200 s and
# the device tests (one guest at a time: RESOURCE_LOCK rxe_guest) made a tail of ~400 s on two
# cores. Started first, they overlap the short tests. Only the order changes: a stale figure
# costs time, never a result.
set(NDKCT_TEST_COSTS
  adapters.verbs.reliability 250
  pybindings.statemachine.faulty.0 210
  pybindings.statemachine.faulty.1 200
  pybindings.statemachine.faulty.2 200
  conformance.twonode.on_two_guests 190
  conformance.verbs_on_device 85
  trace.proof.definition 50
  conformance.properties.verbs_on_device_seed2 50
  conformance.properties.verbs_on_device_seed1 30
  rxe.run_in_guest_contract 33
  trace.proof.faults 32)

# Called at the end of a CMakeLists.txt that adds some of them (CMake before 3.28 sets a test's
# properties only in the directory that added it).
function(ndkct_apply_test_costs)
  set(_costs ${NDKCT_TEST_COSTS})
  while(_costs)
    list(POP_FRONT _costs _name _seconds)
    if(TEST ${_name})
      set_tests_properties(${_name} PROPERTIES COST ${_seconds})
    endif()
  endwhile()
endfunction()
