# How long the longest tests take (seconds, a fresh-clone `.ci/run` at load about 2), given to
# ctest as COST: `ctest -j` starts the costliest first. A fresh clone has no timing history
# (Testing/Temporary/CTestCostData.txt), so without these ctest starts in test order, and these
# few, numbered last, ran after the 1,500 short tests: three Python fault shards of ~200 s and
# the device tests (one guest at a time: RESOURCE_LOCK rxe_guest) made a tail of ~400 s on two
# cores. Started first, they overlap the short tests. Only the order changes: a stale figure
# costs time, never a result.
#
# Every guest test has one (adapters/rxe: one guest at a time, RESOURCE_LOCK rxe_guest): without,
# a short guest test waited for ctest to reach its number among the host tests while the guest
# lane stood idle (pybindings.statemachine.verbs_on_device, numbered near the end, started ~150
# tests after the lane's previous test had ended). Started by cost, the lane runs back to back:
# it is the ctest phase's longest path (~940 s of the 980 s in a fresh-clone CI on 2026-12-04).
set(NDKCT_TEST_COSTS
  adapters.verbs.reliability 200
  pybindings.statemachine.faulty.0 245
  pybindings.statemachine.faulty.1 257
  pybindings.statemachine.faulty.2 212
  conformance.twonode.on_two_guests 280
  conformance.verbs_on_device 78
  pybindings.statemachine.verbs_on_device 35
  trace.proof.definition 44
  conformance.properties.verbs_on_device_seed2 98
  conformance.properties.verbs_on_device_seed1 89
  rxe.run_in_guest_contract 30
  trace.proof.faults 34
  rxe.selfcheck 14
  rxe.two_guests 9
  trace.proof.replay_on_verbs 9
  adapters.verbs.smoke 9
  conformance.twonode.bench_quick 6
  adapters.verbs.bench_quick 4
  trace.bench_verbs_latency 5
  adapters.verbs.no_alloc_no_lock 3)

# How much of the machine a test keeps busy, in ctest PROCESSORS: `./ndkct test` runs
# `ctest -j` with twice the cores, so one PROCESSORS unit is about half a core. A test not listed
# takes one: most host tests wait more than they compute (callback timeouts, drains, quiet
# periods: the 152 conformance.bites took 7 s of CPU in 68 s at -j2, 53 of the property bites 15 s
# in 69 s, a Python fault shard 68 s in 172 s). A guest takes two, a core of its own (qemu's
# software emulation: adapters.verbs.smoke took 13 s of CPU in 17 s), and so do the host tests
# that compute all the time (the property searches on the reference provider, the trace proofs'
# parallel runs): beside a guest run two waiting host tests or one computing one, never two
# computing ones (at -j2 a guest ran beside any one test). The guest lane is the ctest phase's
# longest path, so every guest test takes the same two: a guest test that needed more would wait
# for the lane's end, as the host tests fill each slot the moment it frees.
set(NDKCT_GUEST_PROCESSORS 2)
set(NDKCT_TEST_PROCESSORS
  # guests started by their own scripts, not ndkct_add_device_test (two guests of one vCPU each)
  conformance.twonode.on_two_guests ${NDKCT_GUEST_PROCESSORS}
  conformance.twonode.bench_quick ${NDKCT_GUEST_PROCESSORS}
  rxe.two_guests ${NDKCT_GUEST_PROCESSORS}
  # host tests that compute
  conformance.bites.control_no_fault 2
  conformance.bites_properties.control_no_fault 2
  conformance.properties.host_reuse 2
  conformance.properties.host_reuse_with_a_fault 2
  conformance.properties.shared_library_provider 2
  conformance.properties.replay_connect_refused_then_qp_closed 2
  pybindings.statemachine.model 2
  trace.proof.definition 2
  trace.proof.faults 2)
foreach(_seed RANGE 1 8)
  list(APPEND NDKCT_TEST_PROCESSORS conformance.properties.model_seed${_seed} 2)
endforeach()

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
endfunction()
