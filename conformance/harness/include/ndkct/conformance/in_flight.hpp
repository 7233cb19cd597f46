// ndkct/conformance/in_flight.hpp: which NDK call is running, readable after the process died.
//
// When a provider crashes or hangs, the runner must say which call it was in without relying on
// anything the provider prints. The harness therefore keeps a small record in a memory-mapped
// file (--ndkct_flight=FILE; a private buffer without it): one slot per thread that calls the
// provider, rewritten around every provider call with plain stores (no system call), holding
// the NDK function, the object, the call in NDK syntax with its arguments, the rules the call
// is judged by, the thread and since when. A timeout's SIGKILL leaves the slots as they were;
// a crash also leaves the signal, the faulting address, the crashing thread and the top frames
// (written by the handler install_crash_handler() puts in the test executables).
//
// The file is text in fixed-size, NUL-padded blocks (read by conformance/runner, flight.py):
//   block 0 (kHeaderSize): "ndkct-flight/1 slots=N slot_size=S\n", then "test=...",
//            "test_thread=...", and, after a crash, "crash=1", "signal=...", "frame=..." lines;
//   blocks 1..N (kSlotSize): "state=call|wait|idle", "thread=", "since_ns=", "function=",
//            "object=", "rules=", "call=" lines. Its first byte is 'w' while being rewritten.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ndkct::conformance::in_flight {

constexpr size_t kHeaderSize = 8192;
constexpr size_t kSlotSize = 1024;
constexpr size_t kSlots = 32;

// Maps `path` (created or truncated) as the record. Returns false with the reason in `error`.
bool open_file(const char* path, std::string& error);

// The test now running (and its thread: the one calling this), or none.
void set_test(std::string_view name);

// The NDK functions called since the last reset, by name (for the per-test event).
std::vector<std::string> functions_called();
void reset_functions_called();
// The index of an NDK function name in the set functions_called() reports (0..63).
void note_function(unsigned index, const char* name);

// One provider call on this thread: from construction to destruction, the thread's slot says
// "state=call" with the function, object, rules and call text. wait() marks the harness waiting
// for the call's completion callback instead (the call itself has returned).
class Call {
  public:
    Call(const char* function, const std::string& object, const std::string& rules,
         const std::string& text);
    ~Call();
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
};

// The harness on this thread waits for what `function` owes: a completion callback (the call
// has returned), completions on a CQ, a connect event; `rules` say what owes it.
class Wait {
  public:
    Wait(const char* function, const std::string& object, const char* rules,
         const char* what = "(waiting for its completion callback)");
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;
};

// Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT that write the signal, the
// faulting address, the thread and the top frames (module, offset, symbol) into the record,
// then let the signal kill the process as it would have. Only for test executables: a library
// user keeps its own handlers.
void install_crash_handler();

}  // namespace ndkct::conformance::in_flight
