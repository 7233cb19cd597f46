// NdkRegisterMr returns STATUS_SUCCESS and then also calls the completion callback (from its
// completion thread): a request finished inline must get no callback (GEN-ASYNC-03).
#include <mutex>
#include <thread>
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::vector<std::thread> g_threads;

void join_all() {
    std::vector<std::thread> threads;
    {
        std::lock_guard lock(g_mutex);
        threads.swap(g_threads);
    }
    for (auto& t : threads)
        t.join();
}

struct JoinAtExit {
    ~JoinAtExit() { join_all(); }
} g_join_at_exit;

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    join_all();  // the callbacks of earlier calls have long run
    NTSTATUS status = base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (status == STATUS_SUCCESS && completion) {  // the fault: a callback for an inline result
        std::lock_guard lock(g_mutex);
        g_threads.emplace_back(completion, context, STATUS_SUCCESS);
    }
    return status;
}

// Its late callbacks have come before an MR closes: after that they would reach a later session
// of the test process, whose oracle could only name a Context no request had (GEN-CB-03), not
// this fault's rule (found under CI load, conformance.bites_properties.callback_after_success).
NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    join_all();
    return base().mr.NdkCloseMr(object, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkCloseMr = close_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr calls its completion callback after returning STATUS_SUCCESS",
                   ndkct::faulty::install);
