# How long the longest tests take (seconds, a fresh-clone `.ci/run` at load about 2), given to
# ctest as COST: `ctest -j` starts the costliest first. A fresh clone has no timing history
# (Testing/Temporary/CTestCostData.txt), so without these ctest starts in test order, and these
# few, numbered last, ran after the 1,500 short tests: three Python fault shards of ~200 s and
# the device tests (one guest at a time: RESOURCE_LOCK rxe_guest) made a tail of ~400 s on two
# cores. Started first, they overlap the short tests. Only the order changes: a stale figure
# costs time, never a result.
#
# Every guest test has one (each guest lane runs one guest at a time, below): without, a short
# guest test waited for ctest to reach its number among the host tests while its lane stood idle
# (pybindings.statemachine.verbs_on_device, numbered near the end, started ~150 tests after the
# lane's previous test had ended). Started by cost, a lane runs back to back. The two-guest run
# (~220-300 s) is given more than the reliability run so that it starts first.
set(NDKCT_TEST_COSTS
  adapters.verbs.reliability 250
  pybindings.statemachine.faulty.0 210
  pybindings.statemachine.faulty.1 200
  pybindings.statemachine.faulty.2 200
  conformance.twonode.on_two_guests 260
  conformance.verbs_on_device 85
  pybindings.statemachine.verbs_on_device 52
  trace.proof.definition 50
  conformance.properties.verbs_on_device_seed2 50
  conformance.properties.verbs_on_device_seed1 30
  rxe.run_in_guest_contract 33
  trace.proof.faults 32
  rxe.selfcheck 25
  rxe.two_guests 21
  trace.proof.replay_on_verbs 21
  adapters.verbs.smoke 15
  conformance.twonode.bench_quick 12
  adapters.verbs.bench_quick 9
  trace.bench_verbs_latency 8
  adapters.verbs.no_alloc_no_lock 6)

# How much of the machine a test keeps busy, in ctest PROCESSORS: `./ndkct test` runs
# `ctest -j` with four times the cores, so one PROCESSORS unit is about a quarter of a core. A
# test not listed takes one: most host tests wait more than they compute (callback timeouts,
# drains, quiet periods: the 152 conformance.bites took 7 s of CPU in 68 s at -j2, 53 of the
# property bites 15 s in 69 s). A Python fault shard takes two (68 s of CPU in 172 s). A guest
# takes three (qemu's software emulation: adapters.verbs.smoke took 13 s of CPU in 17 s), the
# host tests that compute all the time four (the property searches on the reference provider,
# the trace proofs' parallel runs). Every guest test takes the same three: a guest test that
# needed more would wait for its lane's end, as the host tests fill each unit the moment it
# frees (the two-guest run at more than a single guest's share started last, alone, ~300 s).
set(NDKCT_GUEST_PROCESSORS 3)
set(NDKCT_TEST_PROCESSORS
  # guests started by their own scripts, not ndkct_add_device_test (two guests of one vCPU each)
  conformance.twonode.on_two_guests ${NDKCT_GUEST_PROCESSORS}
  conformance.twonode.bench_quick ${NDKCT_GUEST_PROCESSORS}
  rxe.two_guests ${NDKCT_GUEST_PROCESSORS}
  pybindings.statemachine.faulty.0 2
  pybindings.statemachine.faulty.1 2
  pybindings.statemachine.faulty.2 2
  # host tests that compute
  conformance.bites.control_no_fault 4
  conformance.bites_properties.control_no_fault 4
  conformance.properties.host_reuse 4
  conformance.properties.host_reuse_with_a_fault 4
  conformance.properties.shared_library_provider 4
  conformance.properties.replay_connect_refused_then_qp_closed 4
  pybindings.statemachine.model 4
  trace.proof.definition 4
  trace.proof.faults 4)
foreach(_seed RANGE 1 8)
  list(APPEND NDKCT_TEST_PROCESSORS conformance.properties.model_seed${_seed} 4)
endforeach()

# The guest tests run in two lanes, one guest (or one two-guest run) in each at a time: lane A
# holds RESOURCE_LOCK rxe_guest (the default of ndkct_add_device_test), lane B rxe_guest_b (these
# tests). One lane was the ctest phase's longest path: ~800 s of guests at load 2, the host tests
# done minutes before it ended, a core idle meanwhile. The lanes are balanced by the costs above
# (A: the two-guest tests, property seed 1, the run-in-guest contract, smoke and no-alloc tests;
# B: the directed suite on the device, the reliability run, property seed 2, the Python machine,
# the trace replay, the self-check and the two device benchmarks' smoke runs); the two-guest run
# costs most, so it starts first, beside the directed suite (a fixture setup, started first).
# Guests share nothing but the prepared kernel (adapters/rxe/prepare takes a lock to make it):
# each picks its own link ports, run-in-guest's contract checks its own scratch folder.
set(NDKCT_GUEST_LANE_B
  conformance.verbs_on_device
  adapters.verbs.reliability
  conformance.properties.verbs_on_device_seed2
  pybindings.statemachine.verbs_on_device
  trace.proof.replay_on_verbs
  rxe.selfcheck
  adapters.verbs.bench_quick
  trace.bench_verbs_latency)

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
  set(_processors ${NDKCT_TEST_PROCESSORS})
  while(_processors)
    list(POP_FRONT _processors _name _count)
    if(TEST ${_name})
      set_tests_properties(${_name} PROPERTIES PROCESSORS ${_count})
    endif()
  endwhile()
  foreach(_name IN LISTS NDKCT_GUEST_LANE_B)
    if(TEST ${_name})
      set_tests_properties(${_name} PROPERTIES RESOURCE_LOCK rxe_guest_b)
    endif()
  endforeach()
endfunction()
