// The adapter: opening a device, NdkQueryAdapterInfo, logical address mappings, the worker and
// event threads, and the object lifetime rules shared by every kind.
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ndkct/platform/mdl.hpp"
#include "verbs.hpp"

namespace ndkct::adapters::verbs {

// ================================================================ tracing

bool trace_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("NDKCT_VERBS_TRACE");
        return v && *v && *v != '0';
    }();
    return enabled;
}

void trace(const char* format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    std::fprintf(stderr, "ndkct-verbs: %s\n", line);
}

// ================================================================ Worker

void Worker::start() {
    thread_ = std::thread([this] {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
            if (tasks_.empty()) {
                if (stop_) return;
                continue;
            }
            auto task = std::move(tasks_.front());
            tasks_.pop_front();
            running_ = true;
            lock.unlock();
            task();  // a consumer callback: no lock of ours is held (GEN-CB-01)
            lock.lock();
            running_ = false;
            if (tasks_.empty()) done_.notify_all();
        }
    });
}

void Worker::stop() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Worker::post(std::function<void()> task) {
    {
        std::lock_guard lock(mutex_);
        tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
}

void Worker::drain() {
    if (on_worker_thread()) return;
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return tasks_.empty() && !running_; });
}

// ================================================================ Registration

Registration::~Registration() {
    if (mr) ibv_dereg_mr(mr);
    if (alias) munmap(alias, alias_bytes);
}

bool FastAlias::reserve(size_t count) {
    if (base && pages == count) return true;
    if (base) munmap(base, pages * PAGE_SIZE);
    base = nullptr;
    pages = 0;
    mapped.clear();
    void* at = mmap(nullptr, count * PAGE_SIZE, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return false;
    base = at;
    pages = count;
    mapped.reserve(count);
    return true;
}

bool FastAlias::map(int memfd, const PFN_NUMBER* pfns, size_t count) {
    if (count > pages) {
        errno = EINVAL;
        return false;
    }
    // The pages it holds already (the same LAM registered again): nothing to do. Pages beyond
    // `count` may hold anything: they are outside the registration.
    if (mapped.size() >= count && std::equal(pfns, pfns + count, mapped.begin())) return true;
    for (size_t i = 0; i < count;) {
        size_t run = 1;
        while (i + run < count && pfns[i + run] == pfns[i] + run)
            ++run;
        void* at = static_cast<char*>(base) + i * PAGE_SIZE;
        if (mmap(at, run * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd,
                 static_cast<off_t>(pfns[i]) << PAGE_SHIFT) == MAP_FAILED) {
            mapped.clear();  // partly remapped: unknown from now on
            return false;
        }
        i += run;
    }
    mapped.assign(pfns, pfns + count);
    return true;
}

FastAlias::~FastAlias() {
    if (base) munmap(base, pages * PAGE_SIZE);
}

Registration* register_alias(ibv_pd* pd, void* alias, uint32_t fbo, uint64_t length, uint64_t iova,
                             int access) {
    auto* r = new (std::nothrow) Registration;
    if (!r) {
        errno = ENOMEM;
        return nullptr;
    }
    r->iova = iova;
    r->length = length;
    r->mr = ibv_reg_mr_iova(pd, static_cast<char*>(alias) + fbo, length, iova, access);
    if (!r->mr) {
        int e = errno;
        delete r;
        errno = e ? e : ENOMEM;
        return nullptr;
    }
    return r;
}

Registration* register_pages(Adapter* a, ibv_pd* pd, const PFN_NUMBER* pfns, size_t count,
                             uint32_t fbo, uint64_t length, uint64_t iova, int access) {
    auto* r = new (std::nothrow) Registration;
    if (!r) {
        errno = ENOMEM;
        return nullptr;
    }
    r->alias_bytes = count * PAGE_SIZE;
    r->iova = iova;
    r->length = length;
    // Reserve a contiguous range, then map each run of consecutive PFNs over it from the arena's
    // memfd: the device sees one virtually contiguous buffer over scattered pages (RMR-VA-03).
    void* base = mmap(nullptr, r->alias_bytes, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        delete r;
        errno = e;
        return nullptr;
    }
    r->alias = base;
    for (size_t i = 0; i < count;) {
        size_t run = 1;
        while (i + run < count && pfns[i + run] == pfns[i] + run)
            ++run;
        void* at = static_cast<char*>(base) + i * PAGE_SIZE;
        void* got = mmap(at, run * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                         a->memory.MemFd, static_cast<off_t>(pfns[i]) << PAGE_SHIFT);
        if (got == MAP_FAILED) {
            int e = errno;
            delete r;
            errno = e;
            return nullptr;
        }
        i += run;
    }
    r->mr = ibv_reg_mr_iova(pd, static_cast<char*>(base) + fbo, length, iova, access);
    if (!r->mr) {
        int e = errno;
        delete r;
        errno = e ? e : ENOMEM;
        return nullptr;
    }
    return r;
}

// ================================================================ status and access tables

// The one table from verbs completion statuses to NTSTATUS. The NDKPI pages define only
// STATUS_SUCCESS and STATUS_CANCELLED (flush) for completions (CQ-CST-01/02); every other failure
// only has to be an error (CQ-CST-03), and the codes below follow ndkct's advisory table
// (MODEL-CQ-ERR-01) where verbs tells enough. ProviderErrorCode (2.1) carries the verbs status.
NTSTATUS wc_status_to_ntstatus(ibv_wc_status status, NDK_OPERATION_TYPE type) {
    // RD-05, AMB-12: NdkRead documents STATUS_REMOTE_RESOURCES for a read beyond the remote
    // region. Verbs cannot tell that case from a bad key or a missing right (the responder's NAK
    // says only "remote access error"), so every remote access error of a read gets the one code
    // NdkRead documents; for a bad key the exact code is only advisory (MODEL-CQ-ERR-01).
    if (status == IBV_WC_REM_ACCESS_ERR && type == NdkOperationTypeRead)
        return STATUS_REMOTE_RESOURCES;
    switch (status) {
        case IBV_WC_SUCCESS:
            return STATUS_SUCCESS;
        case IBV_WC_WR_FLUSH_ERR:
            return STATUS_CANCELLED;  // FLS-02, CQ-CST-02
        case IBV_WC_LOC_LEN_ERR:
            return STATUS_BUFFER_TOO_SMALL;  // receive buffer too short
        case IBV_WC_LOC_QP_OP_ERR:
            return STATUS_ACCESS_VIOLATION;  // rxe: bad lkey, short receive
        case IBV_WC_LOC_PROT_ERR:
            return STATUS_ACCESS_VIOLATION;  // local protection
        case IBV_WC_LOC_ACCESS_ERR:
            return STATUS_ACCESS_VIOLATION;
        case IBV_WC_MW_BIND_ERR:
            return STATUS_ACCESS_VIOLATION;
        case IBV_WC_REM_ACCESS_ERR:
            return STATUS_ACCESS_VIOLATION;  // remote key, right or bounds
        case IBV_WC_REM_INV_REQ_ERR:
            return STATUS_INVALID_BUFFER_SIZE;
        case IBV_WC_REM_OP_ERR:
            return STATUS_INVALID_BUFFER_SIZE;  // rxe: the peer's receive too short
        case IBV_WC_RNR_RETRY_EXC_ERR:
            return STATUS_REMOTE_RESOURCES;  // no receive at the peer
        case IBV_WC_RETRY_EXC_ERR:
            return STATUS_IO_TIMEOUT;
        case IBV_WC_RESP_TIMEOUT_ERR:
            return STATUS_IO_TIMEOUT;
        case IBV_WC_BAD_RESP_ERR:
            return STATUS_CONNECTION_ABORTED;
        case IBV_WC_REM_ABORT_ERR:
            return STATUS_CONNECTION_ABORTED;
        case IBV_WC_REM_INV_RD_REQ_ERR:
            return STATUS_CONNECTION_ABORTED;
        case IBV_WC_LOC_RDD_VIOL_ERR:
            return STATUS_ACCESS_VIOLATION;
        case IBV_WC_LOC_EEC_OP_ERR:
        case IBV_WC_INV_EECN_ERR:
        case IBV_WC_INV_EEC_STATE_ERR:
        case IBV_WC_FATAL_ERR:
        case IBV_WC_GENERAL_ERR:
        default:
            return STATUS_INTERNAL_ERROR;
    }
}

NTSTATUS errno_to_ntstatus(int error) {
    switch (error) {
        case 0:
            return STATUS_SUCCESS;
        case ENOMEM:
        case ENOSPC:
        case EAGAIN:
        case EMFILE:
        case ENFILE:
            return STATUS_INSUFFICIENT_RESOURCES;
        case EADDRINUSE:
            return STATUS_SHARING_VIOLATION;
        case EADDRNOTAVAIL:
        case EAFNOSUPPORT:
        case ENODEV:
            return STATUS_INVALID_ADDRESS;
        case ENETUNREACH:
            return STATUS_NETWORK_UNREACHABLE;
        case EHOSTUNREACH:
            return STATUS_HOST_UNREACHABLE;
        case ECONNREFUSED:
            return STATUS_CONNECTION_REFUSED;
        case ETIMEDOUT:
            return STATUS_IO_TIMEOUT;
        case ECONNABORTED:
        case ECONNRESET:
            return STATUS_CONNECTION_ABORTED;
        case EINVAL:
            return STATUS_INVALID_PARAMETER;
        default:
            return STATUS_INTERNAL_ERROR;
    }
}

// NdkRegisterMr flags -> verbs access. Remote write is the 0x4 bit (RMR-FLG-04, AMB-03); verbs
// wants local write beside it, which 0x5 carries anyway (a lone 0x4 is normalized the same way).
// RDMA_READ_SINK needs nothing on verbs (RDMA_READ_SINK_NOT_REQUIRED, RMR-SINK-02): a read sink
// needs local write, as RMR-ACC-02 says. Every registration can carry windows (MW_BIND).
int mr_access(uint32_t flags, bool mw_bind) {
    int access = 0;
    if (flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) access |= IBV_ACCESS_LOCAL_WRITE;
    if (flags & NDK_MR_FLAG_ALLOW_REMOTE_READ) access |= IBV_ACCESS_REMOTE_READ;
    if (flags & NDKCT_MR_FLAG_REMOTE_WRITE_BIT)
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (mw_bind) access |= IBV_ACCESS_MW_BIND;
    return access;
}

// NdkFastRegister / NdkBind flags -> verbs access (FR-FLG-01, FR-ACC-02: 0x10 is local write only,
// remote write is the 0x20 bit).
int op_access(uint32_t flags, bool mw_bind) {
    int access = 0;
    if (flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) access |= IBV_ACCESS_LOCAL_WRITE;
    if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) access |= IBV_ACCESS_REMOTE_READ;
    if (flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT)
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (mw_bind) access |= IBV_ACCESS_MW_BIND;
    return access;
}

// ================================================================ opening

namespace {

void explain(const NDKCT_OPEN_OPTIONS* options, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void explain(const NDKCT_OPEN_OPTIONS* options, const char* format, ...) {
    if (!options || !options->ErrorMessage || options->ErrorMessageSize == 0) return;
    int used = std::snprintf(options->ErrorMessage, options->ErrorMessageSize, "ndkct-verbs: ");
    if (used < 0 || static_cast<ULONG>(used) >= options->ErrorMessageSize) return;
    va_list args;
    va_start(args, format);
    std::vsnprintf(options->ErrorMessage + used, options->ErrorMessageSize - used, format, args);
    va_end(args);
}

void set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Device facts that need queues created at the limits: probed once per device and process.
// Only a probe that succeeded is kept: one that failed (a call refused for want of memory, say)
// is not a fact about the device, and the next open probes again.
std::mutex g_probe_mutex;
std::map<std::string, Probe> g_probes;

// A probe's verbs call, tried twice before its refusal counts: the limits are read from what
// the device refuses, and a refusal that a second try does not repeat (a transient ENOMEM, an
// injected fault) must not lower a limit for the rest of the process.
template <typename Try>
auto twice(Try attempt) -> decltype(attempt()) {
    if (auto made = attempt()) return made;
    return attempt();
}

struct ProbeResult {
    Probe probe;
    std::string failure;  // empty: the probe is sound
};

ProbeResult probe_device(ibv_context* context, const ibv_device_attr_ex& attr) {
    ProbeResult result;
    Probe& p = result.probe;
    auto failed = [&](const char* call, const char* what, int error) {
        result.failure =
            std::string(call) + " failed while probing " + what + ": " + std::strerror(error);
    };
    ibv_pd* pd = twice([&] { return ibv_alloc_pd(context); });
    if (!pd) {
        failed("ibv_alloc_pd", "the device", errno);
        return result;
    }
    ibv_cq* cq = twice([&] { return ibv_create_cq(context, 16, nullptr, nullptr, 0); });
    if (!cq) {
        failed("ibv_create_cq", "the device", errno);
        ibv_dealloc_pd(pd);
        return result;
    }
    // CQ resize (NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED only if ibv_resize_cq works).
    p.cq_resize = ibv_resize_cq(cq, 64) == 0 || ibv_resize_cq(cq, 64) == 0;
    // The largest inline size a QP accepts: the device does not report it (rxe: 512). A size
    // is too large when the device says the capability is invalid (EINVAL, twice); any other
    // failure fails the probe instead of lowering MaxInlineDataSize.
    for (uint32_t size : {1024u, 512u, 256u, 128u, 64u, 32u}) {
        ibv_qp_init_attr init{};
        init.send_cq = init.recv_cq = cq;
        init.qp_type = IBV_QPT_RC;
        init.cap.max_send_wr = init.cap.max_recv_wr = 4;
        init.cap.max_send_sge = init.cap.max_recv_sge = 1;
        init.cap.max_inline_data = size;
        ibv_qp_init_attr asked = init;
        ibv_qp* qp = twice([&] {
            init = asked;
            return ibv_create_qp(pd, &init);
        });
        if (qp) {
            p.max_inline = std::min(size, init.cap.max_inline_data);
            ibv_destroy_qp(qp);
            break;
        }
        if (errno != EINVAL) {
            failed("ibv_create_qp", "the inline data size", errno);
            break;
        }
    }
    // Queue depths that can really be created with the largest SGE count: the device's
    // max_qp_wr is not always creatable (rxe: 1,048,576 advertised, ~65,536 fit in 1 GiB). The
    // provider's queues are twice the NDK depth (room for unreaped unsignaled work), and depths
    // are capped at 16384 to keep a QP at the limit affordable. Too deep is EINVAL or ENOMEM,
    // twice; another refusal fails the probe.
    uint32_t depth = std::min<uint32_t>(16384, static_cast<uint32_t>(attr.orig_attr.max_qp_wr) / 2);
    uint32_t sge = std::min<uint32_t>(static_cast<uint32_t>(attr.orig_attr.max_sge), 32);
    while (result.failure.empty() && depth >= 64) {
        ibv_qp_init_attr init{};
        init.send_cq = init.recv_cq = cq;
        init.qp_type = IBV_QPT_RC;
        init.cap.max_send_wr = init.cap.max_recv_wr = 2 * depth;
        init.cap.max_send_sge = init.cap.max_recv_sge = sge;
        init.cap.max_inline_data = p.max_inline;
        ibv_qp_init_attr asked = init;
        if (ibv_qp* qp = twice([&] {
                init = asked;
                return ibv_create_qp(pd, &init);
            })) {
            ibv_destroy_qp(qp);
            break;
        }
        if (errno != EINVAL && errno != ENOMEM) {
            failed("ibv_create_qp", "the queue depth", errno);
            break;
        }
        depth /= 2;
    }
    p.max_queue_depth = depth;
    ibv_destroy_cq(cq);
    ibv_dealloc_pd(pd);
    if (result.failure.empty() && p.max_queue_depth < 64)
        result.failure = "no queue pair of depth 64 can be created";
    return result;
}

NDK_RDMA_TECHNOLOGY technology_of(ibv_context* context, const ibv_port_attr& port) {
    if (context->device->transport_type == IBV_TRANSPORT_IWARP) return NdkiWarp;
    if (port.link_layer == IBV_LINK_LAYER_INFINIBAND) return NdkInfiniBand;
    return NdkRoCEv2;  // Ethernet link layer: RoCE; rdma_cm uses RoCEv2 where the device has it
}

void fill_info(Adapter* a) {
    const ibv_device_attr& d = a->attr.orig_attr;
    NDK_ADAPTER_INFO& i = a->info;
    i = {};
    i.Version = a->version;
    i.VendorId = d.vendor_id;
    i.DeviceId = d.vendor_part_id;
    uint64_t arena = a->memory.PageCount * uint64_t{PAGE_SIZE};
    // What can really be registered is the arena (all host memory there is); never more than
    // the device's limit.
    i.MaxRegistrationSize = static_cast<SIZE_T>(std::min<uint64_t>(d.max_mr_size, arena));
    i.MaxWindowSize = i.MaxRegistrationSize;
    // AI-02: at least 16. IFR-APC-02: the preferred count must itself be one an MR can take,
    // so never beyond what can be registered (a small arena; found by the property tests).
    i.FRMRPageCount =
        static_cast<ULONG>(std::clamp<uint64_t>(i.MaxRegistrationSize / PAGE_SIZE, 16, 256));
    uint32_t sge = std::min<uint32_t>(static_cast<uint32_t>(d.max_sge), 32);
    i.MaxInitiatorRequestSge = sge;
    // A receive may go to an SRQ as well, whose SGE limit can be lower (rxe: 27).
    i.MaxReceiveRequestSge =
        d.max_srq ? std::min<uint32_t>(sge, static_cast<uint32_t>(d.max_srq_sge)) : sge;
    i.MaxReadRequestSge =
        std::min<uint32_t>(sge, d.max_sge_rd ? static_cast<uint32_t>(d.max_sge_rd) : sge);
    i.MaxTransferLength = static_cast<ULONG>(std::min<uint64_t>(a->port.max_msg_sz, 1u << 30));
    i.MaxInlineDataSize = a->probe.max_inline;
    i.MaxInboundReadLimit = static_cast<ULONG>(std::min(d.max_qp_rd_atom, 255));
    i.MaxOutboundReadLimit = static_cast<ULONG>(std::min(d.max_qp_init_rd_atom, 255));
    i.MaxReceiveQueueDepth = a->probe.max_queue_depth;
    i.MaxInitiatorQueueDepth = a->probe.max_queue_depth;
    i.MaxSrqDepth = d.max_srq ? std::min<uint32_t>(a->probe.max_queue_depth,
                                                   static_cast<uint32_t>(d.max_srq_wr))
                              : 0;
    // The device CQ is twice the NDK depth plus room for hidden entries (see create_cq).
    i.MaxCqDepth = static_cast<ULONG>(std::max(0, d.max_cqe - 64) / 2);
    i.LargeRequestThreshold = 8192;
    // rdma_cm private data: REQ carries 56 bytes after the rdma_cm header; REP 196 and REJ 148,
    // and one limit covers both accept and reject.
    i.MaxCallerData = 56;
    i.MaxCalleeData = 148;
    i.AdapterFlags =
        NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED |  // read sinks need local write only
        NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
    if (a->probe.cq_resize) i.AdapterFlags |= NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED;
    i.RdmaTechnology = technology_of(a->context, a->port);
}

}  // namespace

NTSTATUS open_adapter(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                      NDK_ADAPTER** out) {
    if (!options || options->Size < offsetof(NDKCT_OPEN_OPTIONS, ErrorMessageSize) + sizeof(ULONG))
        return STATUS_INVALID_PARAMETER;
    if (!memory || memory->Size < sizeof(NDKCT_HOST_MEMORY) || !memory->PhysicalBase || !out) {
        explain(options, "no host memory given");
        return STATUS_INVALID_PARAMETER;
    }
    // VER-02, VER-04, VER-05: major 1 runs at 1.2, major 2 at 2.1 (our highest minors); a major
    // of 0 means "the provider's default".
    NDK_VERSION want = options->Version;
    NDK_VERSION version{};
    if (want.Major == 0 || want.Major == 2) {
        if (want.Major == 2 && want.Minor > 1) {
            explain(options, "NDKPI 2.%u is not implemented (2.1 is the highest)", want.Minor);
            return NDIS_STATUS_BAD_VERSION;
        }
        version = NDKCT_MAKE_VERSION(2, 1);
    } else if (want.Major == 1) {
        if (want.Minor > 2) {
            explain(options, "NDKPI 1.%u is not implemented (1.2 is the highest 1.x)", want.Minor);
            return NDIS_STATUS_BAD_VERSION;
        }
        version = NDKCT_MAKE_VERSION(1, 2);
    } else {
        explain(options, "NDKPI %u.%u is not implemented (1.1, 1.2, 2.1 are)", want.Major,
                want.Minor);
        return NDIS_STATUS_BAD_VERSION;
    }

    // The device: Options->DeviceName, or the first.
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    if (!list || count == 0) {
        if (list) ibv_free_device_list(list);
        explain(options,
                "no RDMA device: ibv_get_device_list found none (is rdma_rxe loaded and a "
                "link added, e.g. 'rdma link add rxe0 type rxe netdev lo'?)");
        return NDIS_STATUS_ADAPTER_NOT_READY;  // ADP-OPEN-02
    }
    const char* wanted =
        options->DeviceName && options->DeviceName[0] ? options->DeviceName : nullptr;
    ibv_device* device = nullptr;
    std::string names;
    for (int k = 0; k < count; ++k) {
        const char* name = ibv_get_device_name(list[k]);
        names += (names.empty() ? "" : ", ") + std::string(name);
        if (!device && (!wanted || std::strcmp(name, wanted) == 0)) device = list[k];
    }
    if (!device) {
        explain(options, "no RDMA device: '%s' is not among the devices (%s)", wanted,
                names.c_str());
        ibv_free_device_list(list);
        return NDIS_STATUS_ADAPTER_NOT_READY;
    }
    auto* a = new (std::nothrow) Adapter{};
    if (!a) {
        ibv_free_device_list(list);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    a->device_name = ibv_get_device_name(device);
    a->context = ibv_open_device(device);
    ibv_free_device_list(list);
    auto fail = [&](NTSTATUS status) {
        if (a->cm_channel) rdma_destroy_event_channel(a->cm_channel);
        if (a->channel) ibv_destroy_comp_channel(a->channel);
        if (a->wake_fd >= 0) close(a->wake_fd);
        if (a->context) ibv_close_device(a->context);
        delete a;
        return status;
    };
    if (!a->context) {
        explain(options, "no RDMA device: ibv_open_device(%s) failed: %s", a->device_name.c_str(),
                std::strerror(errno));
        return fail(NDIS_STATUS_ADAPTER_NOT_READY);
    }
    if (ibv_query_device_ex(a->context, nullptr, &a->attr) != 0 &&
        ibv_query_device(a->context, &a->attr.orig_attr) != 0) {
        explain(options, "ibv_query_device(%s) failed: %s", a->device_name.c_str(),
                std::strerror(errno));
        return fail(NDIS_STATUS_ADAPTER_NOT_READY);
    }
    if (ibv_query_port(a->context, a->port_num, &a->port) != 0 ||
        a->port.state != IBV_PORT_ACTIVE) {
        explain(options, "no RDMA device: port %u of %s is not active", a->port_num,
                a->device_name.c_str());
        return fail(NDIS_STATUS_ADAPTER_NOT_READY);
    }
    a->mw_type2 = a->attr.orig_attr.device_cap_flags &
                  (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B);
    // NDKCT_VERBS_FR_WINDOWS=1: fast registrations are exposed through a type 2 window, so a
    // peer's NdkSendAndInvalidate can invalidate them (SAI-01), at the price of type 2 windows'
    // QP binding: the token is then reachable only through the QP that posted NdkFastRegister,
    // where NDKPI makes it reachable through every QP of the PD. Off by default (README.md).
    if (const char* v = std::getenv("NDKCT_VERBS_FR_WINDOWS"); v && *v && *v != '0')
        a->fr_windows = a->mw_type2;
    // The fast-registration cache (README "Fast registration"): needs windows (the remote token
    // is a type 1 window's key) and device keys below Adapter::kFrTokenBit (keys are
    // index << 8 | variant). Not with NDKCT_VERBS_FR_WINDOWS, which has its own remote tokens.
    {
        const char* v = std::getenv("NDKCT_VERBS_FR_CACHE");
        bool cache_wanted = !(v && *v == '0');
        bool keys_fit = uint64_t(a->attr.orig_attr.max_mr) << 8 < Adapter::kFrTokenBit;
        if (cache_wanted && keys_fit && !a->fr_windows &&
            (a->attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW)) {
            a->fr_cache = true;
            a->fr_tokens.reset(new std::atomic<uint64_t>[Adapter::kFrTokenSlots]);
            for (uint32_t k = 0; k < Adapter::kFrTokenSlots; ++k)
                a->fr_tokens[k].store(0, std::memory_order_relaxed);
            a->fr_free_slots.reserve(Adapter::kFrTokenSlots);
            for (uint32_t k = Adapter::kFrTokenSlots; k-- > 0;)
                a->fr_free_slots.push_back(k);
        }
    }
    // NDKCT_VERBS_LOOPBACK_ALIAS=0: loopback addresses go to rdma_cm as they are (which cannot
    // route them); the two-node path uses the link's real addresses only (conformance/twonode).
    if (const char* v = std::getenv("NDKCT_VERBS_LOOPBACK_ALIAS"); v && *v == '0')
        a->loopback_alias = false;
    a->version = version;
    a->memory = *memory;
    {
        std::lock_guard lock(g_probe_mutex);
        auto it = g_probes.find(a->device_name);
        if (it == g_probes.end()) {
            ProbeResult probed = probe_device(a->context, a->attr);
            if (!probed.failure.empty()) {  // not kept: the next open probes again
                explain(options, "%s: %s", a->device_name.c_str(), probed.failure.c_str());
                return fail(STATUS_INSUFFICIENT_RESOURCES);
            }
            it = g_probes.emplace(a->device_name, probed.probe).first;
        }
        a->probe = it->second;
    }
    fill_info(a);
    // The device's IP addresses, from its GIDs: ::ffff:a.b.c.d is IPv4 a.b.c.d; any other
    // non-link-local GID is an IPv6 address (RoCE v2).
    for (int k = 0; k < a->port.gid_tbl_len; ++k) {
        ibv_gid gid{};
        if (ibv_query_gid(a->context, a->port_num, k, &gid) != 0) break;
        const uint8_t* g = gid.raw;
        static const uint8_t zero[16] = {};
        if (std::memcmp(g, zero, 16) == 0) continue;
        bool mapped = std::memcmp(g, zero, 10) == 0 && g[10] == 0xff && g[11] == 0xff;
        if (mapped && !a->has_ipv4) {
            a->has_ipv4 = true;
            a->ipv4.sin_family = AF_INET;
            std::memcpy(&a->ipv4.sin_addr, g + 12, 4);
        } else if (!mapped && !(g[0] == 0xfe && (g[1] & 0xc0) == 0x80) && !a->has_ipv6) {
            a->has_ipv6 = true;
            a->ipv6.sin6_family = AF_INET6;
            std::memcpy(&a->ipv6.sin6_addr, g, 16);
        }
    }

    a->channel = ibv_create_comp_channel(a->context);
    a->cm_channel = rdma_create_event_channel();  // NULL: no rdma_cm (connections will fail)
    a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!a->channel || a->wake_fd < 0) {
        explain(options, "cannot create event channels: %s", std::strerror(errno));
        return fail(STATUS_INSUFFICIENT_RESOURCES);
    }
    set_nonblocking(a->channel->fd);
    set_nonblocking(a->context->async_fd);
    if (a->cm_channel) set_nonblocking(a->cm_channel->fd);

    // ADP-OPEN-01, GEN-CREATE-06/07, VER-03.
    a->ndk.Header.Version = version;
    a->ndk.Header.ObjectType = NdkObjectTypeAdapter;
    std::memset(&a->ndk.Header.NdkReserved, 0, sizeof a->ndk.Header.NdkReserved);
    a->ndk.Dispatch = &kAdapterDispatch;
    a->worker.start();
    a->event_thread = std::thread([a] { a->event_loop(); });
    *out = &a->ndk;
    return STATUS_SUCCESS;
}

void close_adapter(NDK_ADAPTER* ndk) {
    if (!ndk) return;
    auto* a = reinterpret_cast<Adapter*>(ndk);
    // CLOSE-ADP-01: blocks until every callback has returned; none follows.
    {
        std::lock_guard lock(a->mutex);
        a->closing = true;  // schedule() drops callbacks from now on
    }
    a->worker.drain();
    a->stopping = true;
    uint64_t one = 1;
    if (write(a->wake_fd, &one, sizeof one) < 0) {
    }
    if (a->event_thread.joinable()) a->event_thread.join();
    a->force_close_all();  // AMB-36: leftovers (objects, LAMs) are released without callbacks
    a->worker.stop();
    if (a->cm_channel) rdma_destroy_event_channel(a->cm_channel);
    if (a->channel) ibv_destroy_comp_channel(a->channel);
    close(a->wake_fd);
    ibv_close_device(a->context);
    delete a;
}

const NDKCT_PROVIDER_IDENTITY* provider_identity() {
    static const NDKCT_PROVIDER_IDENTITY identity = {
        sizeof(NDKCT_PROVIDER_IDENTITY),
        NDKCT_PROVIDER_ABI_VERSION,
        "ndkct-verbs",
        "0.1.0",
        NDK_VERSION_2_1,
        "NDKPI on rdma-core (libibverbs + librdmacm): RC queue pairs, rdma_cm connections",
    };
    return &identity;
}

// ================================================================ NDK_ADAPTER_DISPATCH

NTSTATUS verbs_query_extension(NDK_OBJECT_HEADER*, GUID*, NDK_VERSION, NDK_EXTENSION_INTERFACE*) {
    return STATUS_NOT_SUPPORTED;  // EXT-01: no extension is offered
}

NTSTATUS verbs_query_adapter_info(NDK_ADAPTER* ndk, NDK_ADAPTER_INFO* info, ULONG* size) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    if (!size) return STATUS_INVALID_PARAMETER;
    // AI-05, AMB-23: a buffer of the older 96-byte layout is accepted (without RdmaTechnology).
    ULONG given = *size;
    ULONG written = given >= sizeof(NDK_ADAPTER_INFO)   ? ULONG{sizeof(NDK_ADAPTER_INFO)}
                    : given >= NDK_ADAPTER_INFO_V1_SIZE ? NDK_ADAPTER_INFO_V1_SIZE
                                                        : 0;
    if (written == 0 || !info) {
        *size = sizeof(NDK_ADAPTER_INFO);
        return STATUS_BUFFER_TOO_SMALL;
    }
    std::memcpy(info, &a->info, written);  // AI-06
    *size = written;
    return STATUS_SUCCESS;
}

// NdkBuildLam: logical addresses inside each PD's whole-arena registration (iova kLogicalBase):
// page n of the arena is kLogicalBase + n * PAGE_SIZE, PAGE_SIZE-aligned (LAM-PAGE-01). Always
// finishes inline.
NTSTATUS verbs_build_lam(NDK_ADAPTER* ndk, MDL* mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION*,
                         PVOID, NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* lam_size, ULONG* fbo) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    if (!lam_size || !mdl || length == 0)
        return STATUS_INVALID_PARAMETER;                              // AMB: zero length rejected
    platform::ChainPages pages = platform::chain_pages(mdl, length);  // reads the MDL, never its VA
    if (!pages.contiguous) return STATUS_INVALID_PARAMETER;           // LAM-MDL-01
    for (PFN_NUMBER pfn : pages.pfns)
        if (pfn >= a->memory.PageCount) return STATUS_INVALID_PARAMETER;  // not host memory
    SIZE_T needed = NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages.pfns.size());  // LAM-SIZE-02
    if (needed > 0xFFFFFFFFu) return STATUS_INVALID_PARAMETER;
    if (!lam || *lam_size < needed) {  // LAM-SIZE-01/04, AMB-14: NULL is a size probe
        *lam_size = static_cast<ULONG>(needed);
        if (fbo) *fbo = pages.first_byte_offset;
        return STATUS_BUFFER_TOO_SMALL;
    }
    lam->AdapterContext = a;  // ours (LAM-OUT-01)
    lam->AdapterPageCount = static_cast<ULONG>(pages.pfns.size());
    for (size_t k = 0; k < pages.pfns.size(); ++k)
        lam->AdapterPageArray[k].QuadPart =
            static_cast<LONG64>(a->logical_of(pages.pfns[k]));  // LAM-PAGE-02
    *lam_size = static_cast<ULONG>(needed);                     // LAM-OUT-02
    if (fbo) *fbo = pages.first_byte_offset;                    // LAM-OUT-03
    a->live_lams.fetch_add(1, std::memory_order_relaxed);
    return STATUS_SUCCESS;  // LAM-ST-01: inline, the callback is never called
}

void verbs_release_lam(NDK_ADAPTER* ndk, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    // RLAM-01. The whole-arena registration stays: a released mapping's addresses are the
    // consumer's to stop using (the MDL is untouched, LAM-REL-02).
    if (lam && lam->AdapterContext == a) a->live_lams.fetch_sub(1, std::memory_order_relaxed);
}

// ================================================================ lifetime

void Adapter::adopt(Life* o, std::initializer_list<Life*> antecedents) {
    std::lock_guard lock(mutex);
    adopt_locked(o, antecedents);
}

void Adapter::adopt_locked(Life* o, std::initializer_list<Life*> antecedents) {
    o->next = objects;
    if (objects) objects->prev = o;
    objects = o;
    for (Life* x : antecedents)
        if (x) link_antecedent(o, x);
}

void Adapter::link_antecedent(Life* o, Life* x) {
    for (Life*& slot : o->antecedents)
        if (!slot) {
            slot = x;
            ++x->successors;
            return;
        }
}

void Adapter::unlink_antecedent(Life* o, Life* x) {
    for (Life*& slot : o->antecedents)
        if (slot == x) {
            slot = nullptr;
            --x->successors;
            break;
        }
}

bool Adapter::schedule(Life* o, std::function<void()> callback, bool even_when_closing) {
    if (closing) return false;
    if (o && o->closing && !even_when_closing) return false;
    if (o) ++o->busy;
    worker.post([this, o, callback = std::move(callback)] {
        callback();
        std::unique_lock lock(mutex);
        if (o) {
            --o->busy;
            maybe_finish_close(o, lock);
        }
    });
    return true;
}

namespace {

void unlink_from_list(Adapter* a, Life* o) {
    if (o->prev)
        o->prev->next = o->next;
    else if (a->objects == o)
        a->objects = o->next;
    if (o->next) o->next->prev = o->prev;
    o->prev = o->next = nullptr;
}

}  // namespace

// Called with the lock held whenever a closing object may have become closable: no successor
// open (CLOSE-02) and nothing pending or running for it (CLOSE-03, CLOSE-07). The rest happens on
// the worker, after every callback queued before it (CLOSE-05: a successor's close completion
// runs before the close of its antecedent can finish).
void Adapter::maybe_finish_close(Life* o, std::unique_lock<std::mutex>&) {
    if (!o->closing || o->successors > 0 || o->busy > 0 || closing) return;
    o->busy = 1 << 20;  // never again
    unlink_from_list(this, o);
    worker.post([this, o] {
        Life copy = *o;
        destroy(o);
        // CLOSE-05: the close completion returns before the antecedents learn that this
        // successor is gone, so none of their closes (inline ones on another thread included)
        // can complete while it runs.
        if (copy.close_pended && copy.close_completion) copy.close_completion(copy.close_context);
        std::unique_lock lock(mutex);
        for (Life* x : copy.antecedents)
            if (x) {
                --x->successors;
                maybe_finish_close(x, lock);
            }
    });
}

NTSTATUS Adapter::close(Life* o, NDK_FN_CLOSE_COMPLETION* completion, void* context) {
    std::unique_lock lock(mutex);
    o->closing = true;
    o->close_completion = completion;
    o->close_context = context;
    begin_close_connection(o);  // CLOSE-08: cancel what would otherwise never finish
    // Objects that need no worker to close (no successor, nothing pending, no callbacks that may
    // still run for them) close inline: STATUS_SUCCESS, and no NdkCloseCompletion (CLOSE-01).
    bool has_events =
        o->kind == Kind::connector || o->kind == Kind::listener || o->kind == Kind::shared_endpoint;
    if (o->successors == 0 && o->busy == 0 && !has_events) {
        o->busy = 1 << 20;
        unlink_from_list(this, o);
        Life copy = *o;
        lock.unlock();
        destroy(o);
        lock.lock();
        for (Life* x : copy.antecedents)
            if (x) {
                --x->successors;
                maybe_finish_close(x, lock);
            }
        return STATUS_SUCCESS;
    }
    o->close_pended = true;
    maybe_finish_close(o, lock);
    return STATUS_PENDING;
}

void Adapter::destroy(Life* o) {
    switch (o->kind) {
        case Kind::pd:
            destroy_pd(
                reinterpret_cast<Pd*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_PD>, life)));
            break;
        case Kind::cq:
            destroy_cq(
                reinterpret_cast<Cq*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_CQ>, life)));
            break;
        case Kind::mr:
            destroy_mr(
                reinterpret_cast<Mr*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_MR>, life)));
            break;
        case Kind::mw:
            destroy_mw(
                reinterpret_cast<Mw*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_MW>, life)));
            break;
        case Kind::qp:
            destroy_qp(
                reinterpret_cast<Qp*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_QP>, life)));
            break;
        case Kind::srq:
            destroy_srq(reinterpret_cast<Srq*>(reinterpret_cast<char*>(o) -
                                               offsetof(Object<NDK_SRQ>, life)));
            break;
        case Kind::connector:
            destroy_connector(reinterpret_cast<Connector*>(reinterpret_cast<char*>(o) -
                                                           offsetof(Object<NDK_CONNECTOR>, life)));
            break;
        case Kind::listener:
            destroy_listener(reinterpret_cast<Listener*>(reinterpret_cast<char*>(o) -
                                                         offsetof(Object<NDK_LISTENER>, life)));
            break;
        case Kind::shared_endpoint:
            destroy_shared_endpoint(reinterpret_cast<SharedEndpoint*>(
                reinterpret_cast<char*>(o) - offsetof(Object<NDK_SHARED_ENDPOINT>, life)));
            break;
    }
}

// NdkctCloseAdapter with objects still open: destroy them, successors first, without callbacks.
void Adapter::force_close_all() {
    static constexpr Kind order[] = {Kind::connector, Kind::listener, Kind::shared_endpoint,
                                     Kind::qp,        Kind::srq,      Kind::mw,
                                     Kind::mr,        Kind::cq,       Kind::pd};
    for (Kind kind : order) {
        for (;;) {
            Life* victim = nullptr;
            {
                std::lock_guard lock(mutex);
                for (Life* o = objects; o; o = o->next)
                    if (o->kind == kind) {
                        victim = o;
                        break;
                    }
                if (victim) unlink_from_list(this, victim);
            }
            if (!victim) break;
            destroy(victim);
        }
    }
}

NTSTATUS verbs_close_object(NDK_OBJECT_HEADER* header, NDK_FN_CLOSE_COMPLETION* completion,
                            PVOID context) {
    Life* life = life_of(header);
    return life->adapter->close(life, completion, context);  // CLOSE-01: SUCCESS or PENDING
}

// ================================================================ events

void Adapter::event_loop() {
    pollfd fds[4] = {};
    fds[0] = {wake_fd, POLLIN, 0};
    fds[1] = {channel->fd, POLLIN, 0};
    fds[2] = {context->async_fd, POLLIN, 0};
    fds[3] = {cm_channel ? cm_channel->fd : -1, POLLIN, 0};
    while (!stopping.load()) {
        int n = poll(fds, 4, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents) {
            uint64_t value;
            while (read(wake_fd, &value, sizeof value) > 0) {
            }
            if (stopping.load()) break;
        }
        if (fds[1].revents) {
            ibv_cq* cq = nullptr;
            void* cq_context = nullptr;
            while (ibv_get_cq_event(channel, &cq, &cq_context) == 0) {
                on_cq_event(static_cast<Cq*>(cq_context));
                ibv_ack_cq_events(cq, 1);
            }
        }
        if (fds[2].revents) {
            ibv_async_event event;
            while (ibv_get_async_event(context, &event) == 0) {
                on_async_event(event);
                ibv_ack_async_event(&event);
            }
        }
        if (fds[3].revents && cm_channel) {
            rdma_cm_event* event = nullptr;
            while (rdma_get_cm_event(cm_channel, &event) == 0)
                on_cm_event(event);  // acks it
        }
    }
}

}  // namespace ndkct::adapters::verbs
