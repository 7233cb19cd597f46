// A provider that hangs: the reference provider whose NdkWrite never returns. The runner must
// give the test that posts the write a timeout verdict, kill it, and go on with the next tests.
#include <unistd.h>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS write(NDK_QP*, PVOID, const NDK_SGE*, ULONG, UINT64, UINT32, ULONG) {
    for (;;)
        pause();  // until a signal kills the process
}

void install(Tables& t) {
    t.qp.NdkWrite = write;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkWrite never returns", ndkct::faulty::install);
