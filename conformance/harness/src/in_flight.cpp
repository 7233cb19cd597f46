// The call-in-flight record and the crash handler: see in_flight.hpp.
#include "ndkct/conformance/in_flight.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace ndkct::conformance::in_flight {

namespace {

constexpr size_t kTotal = kHeaderSize + kSlots * kSlotSize;
constexpr size_t kTestAt = 256;    // "test=..." lines in the header
constexpr size_t kCrashAt = 2048;  // "crash=1" and what follows, written by the handler
constexpr size_t kStateAt = 8;     // "S\nstate=" is 8 bytes: the state word's 4 bytes follow

alignas(4096) char g_private[kTotal];
char* g_base = g_private;
std::atomic<unsigned> g_next_slot{0};
std::atomic<uint64_t> g_called{0};
std::atomic<const char*> g_names[64];

thread_local int t_slot = -1;
thread_local pid_t t_tid = 0;
thread_local int t_depth = 0;  // nested calls on this thread (a hook inside a callback)

pid_t thread_id() {
    if (!t_tid) t_tid = gettid();
    return t_tid;
}

char* my_slot() {
    if (t_slot < 0) {
        unsigned n = g_next_slot.fetch_add(1, std::memory_order_relaxed);
        t_slot = static_cast<int>(n < kSlots ? n : kSlots - 1);  // the last one is shared
    }
    return g_base + kHeaderSize + static_cast<size_t>(t_slot) * kSlotSize;
}

uint64_t monotonic_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);  // vDSO: no system call
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

void header_line() {
    std::snprintf(g_base, kTestAt, "ndkct-flight/1 slots=%zu slot_size=%zu header=%zu pid=%d\n",
                  kSlots, kSlotSize, kHeaderSize, static_cast<int>(getpid()));
}

// Rewrites the thread's slot: 'w' first (a reader after a kill mid-write knows it is torn).
void write_slot(const char* state, const char* function, const char* object, const char* rules,
                const char* text) {
    char* s = my_slot();
    s[0] = 'w';
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::snprintf(s + 1, kSlotSize - 1,
                  "\nstate=%s\nthread=%d\nsince_ns=%llu\nfunction=%s\nobject=%s\nrules=%s\n"
                  "call=%s\n",
                  state, static_cast<int>(thread_id()),
                  static_cast<unsigned long long>(monotonic_ns()), function, object, rules, text);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    s[0] = 'S';
}

void set_state(const char* four) {
    char* s = my_slot();
    if (s[0] != 'S') return;
    std::memcpy(s + kStateAt, four, 4);
}

// Saves the slot of an outer call while a nested one (a hook's call inside a callback that the
// provider made on the calling thread) uses it.
thread_local char t_saved[4][kSlotSize];

void push() {
    if (t_depth > 0 && t_depth <= 4) std::memcpy(t_saved[t_depth - 1], my_slot(), kSlotSize);
    ++t_depth;
}

bool pop() {  // true when an outer call's slot was restored
    --t_depth;
    if (t_depth > 0 && t_depth <= 4) {
        std::memcpy(my_slot(), t_saved[t_depth - 1], kSlotSize);
        return true;
    }
    return false;
}

// ---- The crash handler: async-signal-safe writes only (no malloc, no stdio) ----

struct Writer {
    char* at;
    char* end;
    void text(const char* s) {
        while (s && *s && at < end - 1)
            *at++ = *s++;
        *at = 0;
    }
    void number(unsigned long long v, unsigned base = 10) {
        char digits[24];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[v % base];
            v /= base;
        } while (v && n < 24);
        if (base == 16) text("0x");
        while (n > 0 && at < end - 1)
            *at++ = digits[--n];
        *at = 0;
    }
};

void write_frame(Writer& w, void* address) {
    Dl_info info{};
    w.text("frame=");
    if (dladdr(address, &info) && info.dli_fname) {
        w.text(info.dli_fname);
        w.text(" +");
        w.number(reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_fbase),
                 16);
        if (info.dli_sname) {
            w.text(" ");
            w.text(info.dli_sname);
            w.text("+");
            w.number(
                reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_saddr),
                16);
        }
    } else {
        w.text("? ");
        w.number(reinterpret_cast<uintptr_t>(address), 16);
    }
    w.text("\n");
}

void on_crash(int sig, siginfo_t* info, void* context) {
    alarm(10);  // a handler stuck (in the loader's lock, say) still ends the process
    Writer w{g_base + kCrashAt, g_base + kHeaderSize};
    w.text("crash=1\nsignal=");
    w.number(static_cast<unsigned>(sig));
    w.text("\nsignal_name=");
    w.text(sigabbrev_np(sig));
    w.text("\ncode=");  // > 0: the kernel's (a fault); <= 0: sent (raise, kill, abort)
    int code = info ? info->si_code : 0;
    if (code < 0) w.text("-");
    w.number(static_cast<unsigned>(code < 0 ? -code : code));
    w.text("\naddress=");
    w.number(reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr), 16);
    w.text("\nthread=");
    w.number(static_cast<unsigned>(thread_id()));
    w.text("\n");
    // The interrupted instruction first, then its callers.
    void* pc = nullptr;
#if defined(__x86_64__)
    if (context)
        pc = reinterpret_cast<void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
#else
    (void)context;
#endif
    void* frames[40];
    int n = backtrace(frames, 40);
    int first = 2;  // the handler and the kernel's signal trampoline
    for (int i = 0; i < n; ++i)
        if (frames[i] == pc) first = i + 1;
    if (pc) write_frame(w, pc);
    for (int i = first; i < n; ++i)
        write_frame(w, frames[i]);
    w.text("end=1\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

}  // namespace

bool open_file(const char* path, std::string& error) {
    int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(kTotal)) != 0) {
        error = std::string(path) + ": " + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return false;
    }
    void* map = mmap(nullptr, kTotal, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
        error = std::string(path) + ": mmap: " + std::strerror(errno);
        return false;
    }
    std::memcpy(map, g_base, kTotal);
    g_base = static_cast<char*>(map);
    header_line();
    return true;
}

void set_test(std::string_view name) {
    header_line();
    std::snprintf(g_base + kTestAt, kCrashAt - kTestAt, "test=%.*s\ntest_thread=%d\n",
                  static_cast<int>(std::min<size_t>(name.size(), 1500)), name.data(),
                  static_cast<int>(thread_id()));
}

void note_function(unsigned index, const char* name) {
    if (index >= 64) return;
    if (!g_names[index].load(std::memory_order_relaxed))
        g_names[index].store(name, std::memory_order_relaxed);
    g_called.fetch_or(uint64_t{1} << index, std::memory_order_relaxed);
}

std::vector<std::string> functions_called() {
    std::vector<std::string> out;
    uint64_t bits = g_called.load(std::memory_order_relaxed);
    for (unsigned i = 0; i < 64; ++i)
        if ((bits >> i) & 1u)
            if (const char* name = g_names[i].load(std::memory_order_relaxed)) out.push_back(name);
    return out;
}

void reset_functions_called() {
    g_called.store(0, std::memory_order_relaxed);
}

Call::Call(const char* function, const std::string& object, const std::string& rules,
           const std::string& text) {
    push();
    write_slot("call", function, object.c_str(), rules.c_str(), text.c_str());
}

Call::~Call() {
    if (!pop()) set_state("idle");
}

Wait::Wait(const char* function, const std::string& object, const char* rules, const char* what) {
    push();
    write_slot("wait", function, object.c_str(), rules, what);
}

Wait::~Wait() {
    if (!pop()) set_state("idle");
}

void install_crash_handler() {
#if defined(__SANITIZE_ADDRESS__)
    return;  // AddressSanitizer reports crashes itself, better
#else
    static char alternate_stack[64 * 1024];
    stack_t stack{};
    stack.ss_sp = alternate_stack;
    stack.ss_size = sizeof alternate_stack;
    sigaltstack(&stack, nullptr);
    void* warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not inside the handler
    struct sigaction action {};
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        sigaction(sig, &action, nullptr);
#endif
}

}  // namespace ndkct::conformance::in_flight
