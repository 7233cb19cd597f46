// Providers that misbehave while being opened (the runner must give one line and exit 2 for a
// crash or a hang there, and must not mind a provider that prints): the reference provider
// whose NdkctOpenAdapter, as it wraps the adapter (the fault's install), does NDKCT_OPEN_MODE:
//   print  writes JSON-like lines to stdout (and again on every NdkWrite), then works normally
//   crash  dies of SIGSEGV
//   hang   never returns
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
               UINT32 token, ULONG flags) {
    std::printf("{\"event\": \"end\", \"test\": \"a provider's lie\", \"result\": \"passed\"}\n");
    std::fflush(stdout);
    return base().qp.NdkWrite(qp, context, sgl, count, address, token, flags);
}

// Called once per object type, the adapter's first (at open).
void install(Tables& t) {
    static bool opened = false;
    t.qp.NdkWrite = NDKCT_OPEN_MODE[0] == 'p' ? write : t.qp.NdkWrite;
    if (opened) return;
    opened = true;
    if (NDKCT_OPEN_MODE[0] == 'p') {
        std::printf("{\"identity\": {\"name\": \"not me\"}}\nhello from the provider\n");
        std::fflush(stdout);
    } else if (NDKCT_OPEN_MODE[0] == 'c') {
        std::raise(SIGSEGV);
    } else {
        for (;;)
            pause();
    }
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("misbehaves while being opened: " NDKCT_OPEN_MODE, ndkct::faulty::install);
