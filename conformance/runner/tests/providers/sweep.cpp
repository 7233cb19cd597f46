// The "harness never crashes" sweep's provider: the reference provider in which one NDK function,
// named at run time, answers badly (conformance/runner/tests/sweep.py runs the suite against it
// for every function in turn). NDKCT_SWEEP="Function:mode" (model function names, as the
// harness's in-flight record and the event stream name them: NdkCreatePd, NdkCloseObject, ...):
//   not_implemented  returns STATUS_NOT_IMPLEMENTED (a VOID entry does nothing; a count or token
//                    entry returns 0)
//   error            returns STATUS_INTERNAL_ERROR (a count entry 0, a token 0xFFFFFFFF)
//   null             succeeds with no output: a create gives a NULL object, an entry with output
//                    parameters leaves them unwritten, NdkGetCqResults gives one zeroed result, a
//                    token is 0 (other entries work normally)
//   late             every completion callback of the function comes from another thread 2 ms
//                    later, a call that finished inline pends instead (other entries work
//                    normally)
// Without NDKCT_SWEEP, or for every other function, it is the reference provider.
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

enum class Mode { none, not_implemented, error, null, late };

struct Config {
    std::string function;
    Mode mode = Mode::none;
};

const Config& config() {
    static const Config c = [] {
        Config out;
        const char* text = std::getenv("NDKCT_SWEEP");
        if (!text) return out;
        std::string s = text;
        auto colon = s.find(':');
        if (colon == std::string::npos) return out;
        out.function = s.substr(0, colon);
        std::string mode = s.substr(colon + 1);
        out.mode = mode == "not_implemented" ? Mode::not_implemented
                   : mode == "error"         ? Mode::error
                   : mode == "null"          ? Mode::null
                   : mode == "late"          ? Mode::late
                                             : Mode::none;
        return out;
    }();
    return c;
}

// ---- Late callbacks: one thread runs them 2 ms after they were due ----

class Later {
  public:
    static Later& get() {
        static Later* later = new Later;  // never destroyed: callbacks may be due at exit
        return *later;
    }
    void run(std::function<void()> f) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(
                {std::chrono::steady_clock::now() + std::chrono::milliseconds(2), std::move(f)});
        }
        ready_.notify_one();
    }

  private:
    struct Item {
        std::chrono::steady_clock::time_point due;
        std::function<void()> f;
    };
    Later() {
        std::thread([this] {
            for (;;) {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [&] { return !queue_.empty(); });
                Item item = std::move(queue_.front());
                queue_.pop_front();
                lock.unlock();
                std::this_thread::sleep_until(item.due);
                item.f();
            }
        }).detach();
    }
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Item> queue_;
};

// A late completion's record: the consumer's callback and context.
template <typename Fn>
struct Forward {
    Fn* completion;
    void* context;
};

void late_request(void* context, NTSTATUS status) {
    auto* f = static_cast<Forward<NDK_FN_REQUEST_COMPLETION>*>(context);
    Later::get().run([f, status] {
        f->completion(f->context, status);
        delete f;
    });
}

void late_create(void* context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    auto* f = static_cast<Forward<NDK_FN_CREATE_COMPLETION>*>(context);
    Later::get().run([f, status, object] {
        f->completion(f->context, status, object);
        delete f;
    });
}

void late_close(void* context) {
    auto* f = static_cast<Forward<NDK_FN_CLOSE_COMPLETION>*>(context);
    Later::get().run([f] {
        f->completion(f->context);
        delete f;
    });
}

// ---- The entry that answers badly, for any dispatch member ----

template <typename Table>
const Table& base_table();
template <>
const NDK_ADAPTER_DISPATCH& base_table() {
    return base().adapter;
}
template <>
const NDK_PD_DISPATCH& base_table() {
    return base().pd;
}
template <>
const NDK_CQ_DISPATCH& base_table() {
    return base().cq;
}
template <>
const NDK_MR_DISPATCH& base_table() {
    return base().mr;
}
template <>
const NDK_MW_DISPATCH& base_table() {
    return base().mw;
}
template <>
const NDK_QP_DISPATCH& base_table() {
    return base().qp;
}
template <>
const NDK_SRQ_DISPATCH& base_table() {
    return base().srq;
}
template <>
const NDK_CONNECTOR_DISPATCH& base_table() {
    return base().connector;
}
template <>
const NDK_LISTENER_DISPATCH& base_table() {
    return base().listener;
}
template <>
const NDK_SHARED_ENDPOINT_DISPATCH& base_table() {
    return base().shared_endpoint;
}

template <typename T>
constexpr bool is_completion =
    std::is_same_v<T, NDK_FN_REQUEST_COMPLETION*> || std::is_same_v<T, NDK_FN_CREATE_COMPLETION*> ||
    std::is_same_v<T, NDK_FN_CLOSE_COMPLETION*>;

template <typename T>
constexpr bool is_object_out = std::is_pointer_v<T>&& std::is_pointer_v<std::remove_pointer_t<T>>;

template <auto Member>
struct Bad;

template <typename Table, typename R, typename Object, typename... Args,
          R (*Table::*Member)(Object*, Args...)>
struct Bad<Member> {
    using Tuple = std::tuple<Args...>;
    static constexpr size_t N = sizeof...(Args);

    static R real(Object* o, Args... a) { return (base_table<Table>().*Member)(o, a...); }

    // The index of the completion argument, or N.
    template <size_t I = 0>
    static constexpr size_t completion_index() {
        if constexpr (I >= N)
            return N;
        else if constexpr (is_completion<std::tuple_element_t<I, Tuple>>)
            return I;
        else
            return completion_index<I + 1>();
    }

    static R call(Object* o, Args... a) {
        switch (config().mode) {
            case Mode::not_implemented:
                if constexpr (std::is_same_v<R, NTSTATUS>)
                    return STATUS_NOT_IMPLEMENTED;
                else if constexpr (!std::is_void_v<R>)
                    return 0;
                else
                    return;
            case Mode::error:
                if constexpr (std::is_same_v<R, NTSTATUS>)
                    return STATUS_INTERNAL_ERROR;
                else if constexpr (std::is_same_v<R, UINT32>)
                    return 0xFFFFFFFFu;
                else if constexpr (!std::is_void_v<R>)
                    return 0;
                else
                    return;
            case Mode::null:
                return null(o, a...);
            case Mode::late:
                return late(o, a...);
            default:
                return real(o, a...);
        }
    }

    static R null(Object* o, Args... a) {
        Tuple args{a...};
        if constexpr (std::is_void_v<R>) {
            return;  // NdkGetPrivilegedMemoryRegionToken: *pToken unwritten; others: nothing
        } else if constexpr (!std::is_same_v<R, NTSTATUS>) {
            if constexpr (N == 2) {  // NdkGetCqResults(Ex): one zeroed result
                auto* results = std::get<0>(args);
                if (std::get<1>(args) == 0) return 0;
                std::memset(static_cast<void*>(results), 0, sizeof *results);
                return 1;
            } else {
                return 0;  // a token
            }
        } else if constexpr (N > 0 && is_object_out<std::tuple_element_t<N - 1, Tuple>>) {
            *std::get<N - 1>(args) = nullptr;  // a create: success, no object
            return STATUS_SUCCESS;
        } else if constexpr (std::is_same_v<Table, NDK_ADAPTER_DISPATCH> ||
                             std::is_same_v<Table, NDK_CONNECTOR_DISPATCH> ||
                             std::is_same_v<Table, NDK_LISTENER_DISPATCH> ||
                             std::is_same_v<Table, NDK_SHARED_ENDPOINT_DISPATCH>) {
            return STATUS_SUCCESS;  // an entry with outputs: success, outputs unwritten
        } else {
            return real(o, a...);
        }
    }

    static R late(Object* o, Args... a) {
        constexpr size_t at = completion_index();
        if constexpr (at >= N || !std::is_same_v<R, NTSTATUS>) {
            return real(o, a...);
        } else {
            Tuple args{a...};
            using Fn = std::remove_pointer_t<std::tuple_element_t<at, Tuple>>;
            Fn* completion = std::get<at>(args);
            if (!completion) return real(o, a...);
            auto* forward = new Forward<Fn>{completion, std::get<at + 1>(args)};
            if constexpr (std::is_same_v<Fn, NDK_FN_REQUEST_COMPLETION>)
                std::get<at>(args) = late_request;
            else if constexpr (std::is_same_v<Fn, NDK_FN_CREATE_COMPLETION>)
                std::get<at>(args) = late_create;
            else
                std::get<at>(args) = late_close;
            std::get<at + 1>(args) = forward;
            // A create's output must stay unwritten if the call now pends: keep its value.
            using Last = std::tuple_element_t<N - 1, Tuple>;
            void* before = nullptr;
            if constexpr (is_object_out<Last>) before = *std::get<N - 1>(args);
            NTSTATUS status =
                std::apply([&](auto... b) { return (base_table<Table>().*Member)(o, b...); }, args);
            if (status == STATUS_PENDING) return status;  // the late trampoline owns `forward`
            // Finished inline: pend instead, and complete later (allowed for these calls).
            if constexpr (std::is_same_v<Fn, NDK_FN_REQUEST_COMPLETION>) {
                late_request(forward, status);
            } else if constexpr (std::is_same_v<Fn, NDK_FN_CREATE_COMPLETION>) {
                NDK_OBJECT_HEADER* object = nullptr;
                if constexpr (is_object_out<Last>) {
                    object = reinterpret_cast<NDK_OBJECT_HEADER*>(*std::get<N - 1>(args));
                    *std::get<N - 1>(args) = static_cast<std::remove_pointer_t<Last>>(before);
                }
                late_create(forward, status, object);
            } else {
                late_close(forward);
            }
            return STATUS_PENDING;
        }
    }
};

#define NDKCT_SWEEP_ENTRY(table, Type, member, name) \
    if (config().function == name) t.table.member = Bad<&Type::member>::call

// Called once per object type on a copy of the reference's tables: points the named function's
// entries (in every table that has it) at the bad answer.
void install(Tables& t) {
    if (config().mode == Mode::none) return;
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkQueryExtension,
                      "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkQueryAdapterInfo, "NdkQueryAdapterInfo");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkCreateCq, "NdkCreateCq");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkCreatePd, "NdkCreatePd");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkCreateSharedEndpoint,
                      "NdkCreateSharedEndpoint");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkCreateConnector, "NdkCreateConnector");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkCreateListener, "NdkCreateListener");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkBuildLAM, "NdkBuildLam");
    NDKCT_SWEEP_ENTRY(adapter, NDK_ADAPTER_DISPATCH, NdkReleaseLAM, "NdkReleaseLam");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkClosePd, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkCreateMr, "NdkCreateMr");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkCreateMw, "NdkCreateMw");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkCreateSrq, "NdkCreateSrq");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkCreateQp, "NdkCreateQp");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkCreateQpWithSrq, "NdkCreateQpWithSrq");
    NDKCT_SWEEP_ENTRY(pd, NDK_PD_DISPATCH, NdkGetPrivilegedMemoryRegionToken,
                      "NdkGetPrivilegedMemoryRegionToken");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkCloseCq, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkResizeCq, "NdkResizeCq");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkArmCq, "NdkArmCq");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkGetCqResults, "NdkGetCqResults");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkControlCqInterruptModeration,
                      "NdkControlCqInterruptModeration");
    NDKCT_SWEEP_ENTRY(cq, NDK_CQ_DISPATCH, NdkGetCqResultsEx, "NdkGetCqResultsEx");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkCloseMr, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkRegisterMr, "NdkRegisterMr");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkDeregisterMr, "NdkDeregisterMr");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkInitializeFastRegisterMr,
                      "NdkInitializeFastRegisterMr");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkGetRemoteTokenFromMr, "NdkGetRemoteTokenFromMr");
    NDKCT_SWEEP_ENTRY(mr, NDK_MR_DISPATCH, NdkGetLocalTokenFromMr, "NdkGetLocalTokenFromMr");
    NDKCT_SWEEP_ENTRY(mw, NDK_MW_DISPATCH, NdkCloseMw, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(mw, NDK_MW_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(mw, NDK_MW_DISPATCH, NdkGetRemoteTokenFromMw, "NdkGetRemoteTokenFromMw");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkCloseQp, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkFlush, "NdkFlush");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkSend, "NdkSend");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkReceive, "NdkReceive");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkBind, "NdkBind");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkFastRegister, "NdkFastRegister");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkInvalidate, "NdkInvalidate");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkRead, "NdkRead");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkWrite, "NdkWrite");
    NDKCT_SWEEP_ENTRY(qp, NDK_QP_DISPATCH, NdkSendAndInvalidate, "NdkSendAndInvalidate");
    NDKCT_SWEEP_ENTRY(srq, NDK_SRQ_DISPATCH, NdkCloseSrq, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(srq, NDK_SRQ_DISPATCH, NdkQueryExtension, "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(srq, NDK_SRQ_DISPATCH, NdkModifySrq, "NdkModifySrq");
    NDKCT_SWEEP_ENTRY(srq, NDK_SRQ_DISPATCH, NdkSrqReceive, "NdkSrqReceive");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkCloseConnector, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkQueryExtension,
                      "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkConnect, "NdkConnect");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkConnectWithSharedEndpoint,
                      "NdkConnectWithSharedEndpoint");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkCompleteConnect, "NdkCompleteConnect");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkAccept, "NdkAccept");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkReject, "NdkReject");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkGetConnectionData,
                      "NdkGetConnectionData");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkGetLocalAddress, "NdkGetLocalAddress");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkGetPeerAddress, "NdkGetPeerAddress");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkDisconnect, "NdkDisconnect");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkCompleteConnectEx,
                      "NdkCompleteConnectEx");
    NDKCT_SWEEP_ENTRY(connector, NDK_CONNECTOR_DISPATCH, NdkAcceptEx, "NdkAcceptEx");
    NDKCT_SWEEP_ENTRY(listener, NDK_LISTENER_DISPATCH, NdkCloseListener, "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(listener, NDK_LISTENER_DISPATCH, NdkQueryExtension,
                      "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(listener, NDK_LISTENER_DISPATCH, NdkListen, "NdkListen");
    NDKCT_SWEEP_ENTRY(listener, NDK_LISTENER_DISPATCH, NdkGetLocalAddress, "NdkGetLocalAddress");
    NDKCT_SWEEP_ENTRY(listener, NDK_LISTENER_DISPATCH, NdkControlConnectEvents,
                      "NdkControlConnectEvents");
    NDKCT_SWEEP_ENTRY(shared_endpoint, NDK_SHARED_ENDPOINT_DISPATCH, NdkCloseSharedEndpoint,
                      "NdkCloseObject");
    NDKCT_SWEEP_ENTRY(shared_endpoint, NDK_SHARED_ENDPOINT_DISPATCH, NdkQueryExtension,
                      "NdkQueryExtensionInterface");
    NDKCT_SWEEP_ENTRY(shared_endpoint, NDK_SHARED_ENDPOINT_DISPATCH, NdkGetLocalAddress,
                      "NdkGetLocalAddress");
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("one NDK function (NDKCT_SWEEP=Function:mode) answers badly",
                   ndkct::faulty::install);
