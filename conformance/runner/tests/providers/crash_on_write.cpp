// A provider that crashes: the reference provider whose NdkWrite dies of SIGSEGV. The runner
// must give the test that posts the write a crash verdict and go on with the next tests.
#include <csignal>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS write(NDK_QP*, PVOID, const NDK_SGE*, ULONG, UINT64, UINT32, ULONG) {
    std::raise(SIGSEGV);  // as if the provider dereferenced a bad pointer
    return STATUS_INTERNAL_ERROR;
}

void install(Tables& t) {
    t.qp.NdkWrite = write;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkWrite crashes the process (SIGSEGV)", ndkct::faulty::install);
