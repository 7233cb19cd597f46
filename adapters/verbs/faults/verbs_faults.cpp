// libndkct_verbs_faults.so: an LD_PRELOAD interposer over libibverbs and librdmacm that fails
// chosen calls on their N-th use and keeps count of the device objects each device context and
// rdma_cm event channel holds (verbs_faults.h; README.md in this folder).
//
// Exported verbs functions are interposed by name (the dynamic linker binds every caller,
// librdmacm's own calls included, to the first definition: this library). The data-path verbs
// are inline functions of <infiniband/verbs.h> that call through the context's ops table
// (ibv_post_send, ibv_post_recv, ibv_post_srq_recv, ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw,
// ibv_req_notify_cq): ibv_open_device replaces those entries of each context it opens with
// wrappers that count and fail, keeping the provider library's own for the real work.
#include "verbs_faults.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

// <infiniband/verbs.h> makes these function-like macros (choosing the IOVA variant by the
// access flags); the interposer defines the exported functions themselves.
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace {

// ---------------------------------------------------------------- the functions and faults

enum Fn : int {
#define NDKCT_FN(name) name##_fn,
#include "verbs_faults_functions.inc"
#undef NDKCT_FN
    kFunctions
};
constexpr const char* kNames[] = {
#define NDKCT_FN(name) #name,
#include "verbs_faults_functions.inc"
#undef NDKCT_FN
};

struct Fault {
    std::atomic<unsigned long> calls{0};
    // Calls numbered first .. first+count-1 fail with error (0: disarmed).
    std::atomic<unsigned long> first{0};
    std::atomic<unsigned long> count{0};
    std::atomic<int> error{0};
};
Fault g_faults[kFunctions];
std::atomic<unsigned long> g_fired{0};
std::atomic<unsigned long> g_leaks{0};
bool g_quiet = false;

// Counts a call; returns the errno to fail it with, or 0.
int should_fail(Fn fn) {
    Fault& f = g_faults[fn];
    unsigned long n = f.calls.fetch_add(1) + 1;
    unsigned long first = f.first.load();
    if (first == 0 || n < first || n >= first + f.count.load()) return 0;
    int error = f.error.load();
    g_fired.fetch_add(1);
    if (!g_quiet)
        std::fprintf(stderr, "ndkct-verbs-faults: %s call %lu fails with %s\n", kNames[fn], n,
                     strerrorname_np(error) ? strerrorname_np(error) : "?");
    return error;
}

int function_named(std::string_view name) {
    for (int i = 0; i < kFunctions; ++i)
        if (name == kNames[i]) return i;
    return -1;
}

int errno_named(const std::string& text) {
    for (int e = 1; e < 256; ++e)
        if (const char* n = strerrorname_np(e); n && text == n) return e;
    return std::atoi(text.c_str());
}

void arm(int fn, unsigned long first_from_start, int error, unsigned long count) {
    Fault& f = g_faults[fn];
    f.first.store(0);  // disarmed while changing
    f.error.store(error);
    f.count.store(count ? count : 1);
    f.first.store(first_from_start);
}

// NDKCT_VERBS_FAULTS="fn:N:errno[:count],...", counted from the start of the process.
__attribute__((constructor)) void arm_from_environment() {
    const char* quiet = std::getenv("NDKCT_VERBS_FAULTS_QUIET");
    g_quiet = quiet && *quiet && *quiet != '0';
    const char* spec = std::getenv("NDKCT_VERBS_FAULTS");
    if (!spec) return;
    std::string all(spec);
    size_t at = 0;
    while (at < all.size()) {
        size_t end = all.find(',', at);
        if (end == std::string::npos) end = all.size();
        std::string item = all.substr(at, end - at);
        at = end + 1;
        std::string parts[4];
        size_t k = 0, p = 0;
        for (; k < 4; ++k) {
            size_t colon = item.find(':', p);
            parts[k] = item.substr(p, colon == std::string::npos ? std::string::npos : colon - p);
            if (colon == std::string::npos) break;
            p = colon + 1;
        }
        int fn = function_named(parts[0]);
        unsigned long nth = std::strtoul(parts[1].c_str(), nullptr, 10);
        int error = errno_named(parts[2]);
        if (fn < 0 || nth == 0 || error <= 0) {
            std::fprintf(stderr,
                         "ndkct-verbs-faults: NDKCT_VERBS_FAULTS item '%s' is not function:N:errno"
                         "[:count] with a known function\n",
                         item.c_str());
            std::abort();
        }
        arm(fn, nth, error, k >= 3 ? std::strtoul(parts[3].c_str(), nullptr, 10) : 1);
    }
}

// ---------------------------------------------------------------- the real functions

// The library's own definition: the next one in the global scope, or, when the library was
// loaded privately (a provider dlopen()ed with RTLD_LOCAL brings libibverbs and librdmacm in
// its own scope, where RTLD_NEXT does not look), the one in that library itself.
template <typename T>
T real(const char* name) {
    void* f = dlsym(RTLD_NEXT, name);
    for (const char* library : {"libibverbs.so.1", "librdmacm.so.1"}) {
        if (f) break;
        if (void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD)) f = dlsym(handle, name);
    }
    if (!f) {
        std::fprintf(stderr, "ndkct-verbs-faults: %s not found behind the interposer\n", name);
        std::abort();
    }
    return reinterpret_cast<T>(f);
}
#define REAL(name) static auto real_##name = real<decltype(&::name)>(#name)

// ---------------------------------------------------------------- object accounting

// Every device object this process holds, with the context it belongs to; rdma_cm ids with
// their event channel.
std::mutex g_mutex;
std::map<const void*, const void*> g_objects;  // object -> ibv_context or event channel
std::map<const ibv_context*, ibv_context_ops> g_ops;

void opened(const void* object, const void* owner) {
    if (!object) return;
    std::lock_guard lock(g_mutex);
    g_objects[object] = owner;
}
void closed(const void* object) {
    std::lock_guard lock(g_mutex);
    g_objects.erase(object);
}
// The owner goes: whatever it still holds leaked.
void owner_closing(const void* owner, const char* what, const char* name) {
    std::lock_guard lock(g_mutex);
    unsigned long left = 0;
    for (auto it = g_objects.begin(); it != g_objects.end();)
        if (it->second == owner) {
            ++left;
            it = g_objects.erase(it);
        } else {
            ++it;
        }
    if (left) {
        g_leaks.fetch_add(1);
        std::fprintf(stderr, "ndkct-verbs-faults: leak: %s(%s) with %lu object(s) still open\n",
                     what, name, left);
    }
}

const ibv_context_ops& ops_of(const ibv_context* context) {
    std::lock_guard lock(g_mutex);
    return g_ops.at(context);
}

// NDKCT_VERBS_FAULTS_REPORT=FILE: at exit, one JSON object with every function's call count,
// the failures injected, the leaks seen and the objects still open (the fault sweep reads it).
__attribute__((destructor)) void write_report() {
    const char* path = std::getenv("NDKCT_VERBS_FAULTS_REPORT");
    if (!path || !*path) return;
    FILE* f = std::fopen(path, "w");
    if (!f) return;
    std::fprintf(f, "{\"calls\": {");
    for (int i = 0; i < kFunctions; ++i)
        std::fprintf(f, "%s\"%s\": %lu", i ? ", " : "", kNames[i], g_faults[i].calls.load());
    unsigned long live;
    {
        std::lock_guard lock(g_mutex);
        live = g_objects.size();
    }
    std::fprintf(f, "}, \"fired\": %lu, \"leaks\": %lu, \"live\": %lu}\n", g_fired.load(),
                 g_leaks.load(), live);
    std::fclose(f);
}

// ---------------------------------------------------------------- ops wrappers (inline verbs)

int wrap_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
    if (int e = should_fail(ibv_post_send_fn)) {
        *bad = wr;  // the whole list refused, from its first request
        return e;
    }
    return ops_of(qp->context).post_send(qp, wr, bad);
}
int wrap_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    if (int e = should_fail(ibv_post_recv_fn)) {
        *bad = wr;
        return e;
    }
    return ops_of(qp->context).post_recv(qp, wr, bad);
}
int wrap_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
    if (int e = should_fail(ibv_post_srq_recv_fn)) {
        *bad = wr;
        return e;
    }
    return ops_of(srq->context).post_srq_recv(srq, wr, bad);
}
ibv_mw* wrap_alloc_mw(ibv_pd* pd, ibv_mw_type type) {
    if (int e = should_fail(ibv_alloc_mw_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_mw* mw = ops_of(pd->context).alloc_mw(pd, type);
    opened(mw, pd->context);
    return mw;
}
int wrap_dealloc_mw(ibv_mw* mw) {
    ibv_context* context = mw->context;
    int rc = ops_of(context).dealloc_mw(mw);
    if (rc == 0) closed(mw);
    return rc;
}
int wrap_bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind) {
    if (int e = should_fail(ibv_bind_mw_fn)) return e;
    return ops_of(qp->context).bind_mw(qp, mw, bind);
}
int wrap_req_notify_cq(ibv_cq* cq, int solicited_only) {
    if (int e = should_fail(ibv_req_notify_cq_fn)) return e;
    return ops_of(cq->context).req_notify_cq(cq, solicited_only);
}

}  // namespace

// ---------------------------------------------------------------- the control functions

extern "C" {

int ndkct_verbs_fault_arm(const char* function, unsigned long nth, int error, unsigned long count) {
    int fn = function ? function_named(function) : -1;
    if (fn < 0) return -1;
    if (nth == 0) {
        g_faults[fn].first.store(0);
        return 0;
    }
    arm(fn, g_faults[fn].calls.load() + nth, error, count);
    return 0;
}

void ndkct_verbs_fault_disarm_all(void) {
    for (auto& f : g_faults)
        f.first.store(0);
}

unsigned long ndkct_verbs_fault_calls(const char* function) {
    int fn = function ? function_named(function) : -1;
    return fn < 0 ? 0 : g_faults[fn].calls.load();
}

unsigned long ndkct_verbs_fault_fired(void) {
    return g_fired.load();
}

unsigned long ndkct_verbs_fault_live_objects(void) {
    std::lock_guard lock(g_mutex);
    return g_objects.size();
}

unsigned long ndkct_verbs_fault_leaks(void) {
    return g_leaks.load();
}

const char* ndkct_verbs_fault_functions(void) {
    static const std::string all = [] {
        std::string s;
        for (const char* n : kNames)
            s += std::string(n) + "\n";
        return s;
    }();
    return all.c_str();
}

// ---------------------------------------------------------------- libibverbs

ibv_context* ibv_open_device(ibv_device* device) {
    REAL(ibv_open_device);
    if (int e = should_fail(ibv_open_device_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_context* context = real_ibv_open_device(device);
    if (!context) return nullptr;
    {
        std::lock_guard lock(g_mutex);
        g_ops[context] = context->ops;
    }
    // The inline verbs go through these entries; the originals stay in g_ops.
    context->ops.post_send = wrap_post_send;
    context->ops.post_recv = wrap_post_recv;
    if (context->ops.post_srq_recv) context->ops.post_srq_recv = wrap_post_srq_recv;
    if (context->ops.alloc_mw) context->ops.alloc_mw = wrap_alloc_mw;
    if (context->ops.dealloc_mw) context->ops.dealloc_mw = wrap_dealloc_mw;
    if (context->ops.bind_mw) context->ops.bind_mw = wrap_bind_mw;
    context->ops.req_notify_cq = wrap_req_notify_cq;
    return context;
}

int ibv_close_device(ibv_context* context) {
    REAL(ibv_close_device);
    owner_closing(context, "ibv_close_device", ibv_get_device_name(context->device));
    {
        std::lock_guard lock(g_mutex);
        g_ops.erase(context);
    }
    return real_ibv_close_device(context);
}

ibv_pd* ibv_alloc_pd(ibv_context* context) {
    REAL(ibv_alloc_pd);
    if (int e = should_fail(ibv_alloc_pd_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_pd* pd = real_ibv_alloc_pd(context);
    opened(pd, context);
    return pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
    REAL(ibv_dealloc_pd);
    int rc = real_ibv_dealloc_pd(pd);
    if (rc == 0) closed(pd);
    return rc;
}

#define NDKCT_REG_MR(fn_id, call)           \
    if (int e = should_fail(fn_id)) {       \
        errno = e;                          \
        return nullptr;                     \
    }                                       \
    ibv_mr* mr = call;                      \
    opened(mr, pd ? pd->context : nullptr); \
    return mr;

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
    REAL(ibv_reg_mr);
    NDKCT_REG_MR(ibv_reg_mr_fn, real_ibv_reg_mr(pd, addr, length, access))
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
    REAL(ibv_reg_mr_iova);
    NDKCT_REG_MR(ibv_reg_mr_iova_fn, real_ibv_reg_mr_iova(pd, addr, length, iova, access))
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                         unsigned int access) {
    REAL(ibv_reg_mr_iova2);
    NDKCT_REG_MR(ibv_reg_mr_iova2_fn, real_ibv_reg_mr_iova2(pd, addr, length, iova, access))
}

int ibv_dereg_mr(ibv_mr* mr) {
    REAL(ibv_dereg_mr);
    int rc = real_ibv_dereg_mr(mr);
    if (rc == 0) closed(mr);
    return rc;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
    REAL(ibv_create_comp_channel);
    if (int e = should_fail(ibv_create_comp_channel_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_comp_channel* channel = real_ibv_create_comp_channel(context);
    opened(channel, context);
    return channel;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
    REAL(ibv_destroy_comp_channel);
    int rc = real_ibv_destroy_comp_channel(channel);
    if (rc == 0) closed(channel);
    return rc;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                      int comp_vector) {
    REAL(ibv_create_cq);
    if (int e = should_fail(ibv_create_cq_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_cq* cq = real_ibv_create_cq(context, cqe, cq_context, channel, comp_vector);
    opened(cq, context);
    return cq;
}

int ibv_resize_cq(ibv_cq* cq, int cqe) {
    REAL(ibv_resize_cq);
    if (int e = should_fail(ibv_resize_cq_fn)) return e;
    return real_ibv_resize_cq(cq, cqe);
}

int ibv_destroy_cq(ibv_cq* cq) {
    REAL(ibv_destroy_cq);
    int rc = real_ibv_destroy_cq(cq);
    if (rc == 0) closed(cq);
    return rc;
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
    REAL(ibv_create_srq);
    if (int e = should_fail(ibv_create_srq_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_srq* srq = real_ibv_create_srq(pd, attr);
    opened(srq, pd->context);
    return srq;
}

int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
    REAL(ibv_modify_srq);
    if (int e = should_fail(ibv_modify_srq_fn)) return e;
    return real_ibv_modify_srq(srq, attr, mask);
}

int ibv_destroy_srq(ibv_srq* srq) {
    REAL(ibv_destroy_srq);
    int rc = real_ibv_destroy_srq(srq);
    if (rc == 0) closed(srq);
    return rc;
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
    REAL(ibv_create_qp);
    if (int e = should_fail(ibv_create_qp_fn)) {
        errno = e;
        return nullptr;
    }
    ibv_qp* qp = real_ibv_create_qp(pd, attr);
    opened(qp, pd->context);
    return qp;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
    REAL(ibv_modify_qp);
    if (int e = should_fail(ibv_modify_qp_fn)) return e;
    return real_ibv_modify_qp(qp, attr, mask);
}

int ibv_destroy_qp(ibv_qp* qp) {
    REAL(ibv_destroy_qp);
    int rc = real_ibv_destroy_qp(qp);
    if (rc == 0) closed(qp);
    return rc;
}

// ---------------------------------------------------------------- librdmacm

rdma_event_channel* rdma_create_event_channel(void) {
    REAL(rdma_create_event_channel);
    if (int e = should_fail(rdma_create_event_channel_fn)) {
        errno = e;
        return nullptr;
    }
    return real_rdma_create_event_channel();
}

void rdma_destroy_event_channel(rdma_event_channel* channel) {
    REAL(rdma_destroy_event_channel);
    owner_closing(channel, "rdma_destroy_event_channel", "cm");
    real_rdma_destroy_event_channel(channel);
}

int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context,
                   rdma_port_space ps) {
    REAL(rdma_create_id);
    if (int e = should_fail(rdma_create_id_fn)) {
        errno = e;
        return -1;
    }
    int rc = real_rdma_create_id(channel, id, context, ps);
    if (rc == 0 && channel) opened(*id, channel);
    return rc;
}

int rdma_destroy_id(rdma_cm_id* id) {
    REAL(rdma_destroy_id);
    closed(id);
    return real_rdma_destroy_id(id);
}

// Ids of incoming connections are made inside librdmacm: they are counted when their connect
// request is handed out.
int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
    REAL(rdma_get_cm_event);
    int rc = real_rdma_get_cm_event(channel, event);
    if (rc == 0 && (*event)->event == RDMA_CM_EVENT_CONNECT_REQUEST) opened((*event)->id, channel);
    return rc;
}

#define NDKCT_RDMA_CALL(name, params, args)   \
    int name params {                         \
        REAL(name);                           \
        if (int e = should_fail(name##_fn)) { \
            errno = e;                        \
            return -1;                        \
        }                                     \
        return real_##name args;              \
    }

NDKCT_RDMA_CALL(rdma_bind_addr, (rdma_cm_id * id, sockaddr* addr), (id, addr))
NDKCT_RDMA_CALL(rdma_resolve_addr, (rdma_cm_id * id, sockaddr* src, sockaddr* dst, int timeout_ms),
                (id, src, dst, timeout_ms))
NDKCT_RDMA_CALL(rdma_resolve_route, (rdma_cm_id * id, int timeout_ms), (id, timeout_ms))
NDKCT_RDMA_CALL(rdma_listen, (rdma_cm_id * id, int backlog), (id, backlog))
NDKCT_RDMA_CALL(rdma_connect, (rdma_cm_id * id, rdma_conn_param* param), (id, param))
NDKCT_RDMA_CALL(rdma_accept, (rdma_cm_id * id, rdma_conn_param* param), (id, param))
NDKCT_RDMA_CALL(rdma_establish, (rdma_cm_id * id), (id))
NDKCT_RDMA_CALL(rdma_disconnect, (rdma_cm_id * id), (id))

}  // extern "C"
