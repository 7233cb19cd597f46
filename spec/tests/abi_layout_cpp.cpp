/*
 * spec/tests/abi_layout_cpp.cpp: ndkct/ndkpi.h seen from C++20.
 *
 * Build: C++20, -Wall -Wextra -Wpedantic -Werror. It compiles the whole of abi_layout_c.c as
 * C++ (same layout rows, same stub dispatch table built with designated initializers), so C and
 * C++ cannot drift apart, and adds what only C++ can state: that each NDK_FN_* is a function
 * type, that the table members are pointers to exactly those types, and that every NDKPI
 * structure is a plain C aggregate that can be copied and shared with C code.
 */
#define ABI_LAYOUT_SHARED_ONLY 1
#include "abi_layout_c.c"

#include <type_traits>

/* The function-type style: the typedefs name function types; the tables hold pointers. */
static_assert(std::is_function_v<NDK_FN_FAST_REGISTER>);
static_assert(std::is_function_v<NDK_FN_REQUEST_COMPLETION>);
static_assert(std::is_same_v<decltype(NDK_ADAPTER_DISPATCH::NdkBuildLAM), NDK_FN_BUILD_LAM*>);
static_assert(std::is_same_v<decltype(NDK_PD_DISPATCH::NdkCreateQp), NDK_FN_CREATE_QP*>);
static_assert(std::is_same_v<decltype(NDK_CQ_DISPATCH::NdkCloseCq), NDK_FN_CLOSE_OBJECT*>);
static_assert(std::is_same_v<decltype(NDK_MR_DISPATCH::NdkInitializeFastRegisterMr),
                             NDK_FN_INITIALIZE_FAST_REGISTER_MR*>);
static_assert(std::is_same_v<decltype(NDK_MW_DISPATCH::NdkGetRemoteTokenFromMw),
                             NDK_FN_GET_REMOTE_TOKEN_FROM_MW*>);
static_assert(std::is_same_v<decltype(NDK_QP_DISPATCH::NdkFastRegister), NDK_FN_FAST_REGISTER*>);
static_assert(std::is_same_v<decltype(NDK_SRQ_DISPATCH::NdkSrqReceive), NDK_FN_SRQ_RECEIVE*>);
static_assert(std::is_same_v<decltype(NDK_CONNECTOR_DISPATCH::NdkAcceptEx), NDK_FN_ACCEPT_EX*>);
static_assert(std::is_same_v<decltype(NDK_LISTENER_DISPATCH::NdkGetLocalAddress),
                             NDK_FN_GET_LISTENER_LOCAL_ADDRESS*>);
static_assert(std::is_same_v<decltype(NDK_SHARED_ENDPOINT_DISPATCH::NdkGetLocalAddress),
                             NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS*>);

/* Parameter types the documented syntax fixes and that are easy to get subtly wrong. */
static_assert(std::is_same_v<NDK_FN_READ, NTSTATUS(NDK_QP*, PVOID, const NDK_SGE*, ULONG, UINT64,
                                                   UINT32, ULONG)>);
static_assert(std::is_same_v<NDK_FN_SEND_AND_INVALIDATE,
                             NTSTATUS(NDK_QP*, PVOID, const NDK_SGE*, ULONG, ULONG, UINT32)>);
static_assert(std::is_same_v<NDK_FN_GET_CQ_RESULTS, ULONG(NDK_CQ*, NDK_RESULT*, ULONG)>);
static_assert(std::is_same_v<NDK_FN_DISCONNECT_EVENT_CALLBACK_EX, VOID(PVOID, ULONG)>);

/* Plain C aggregates: trivially copyable, standard layout, the same bytes in C and C++. */
template <typename... T>
constexpr bool all_plain_v = ((std::is_trivial_v<T> && std::is_standard_layout_v<T>)&&...);
static_assert(
    all_plain_v<NDK_VERSION, NDK_ADAPTER_INFO, NDK_OBJECT_HEADER, NDK_RESULT, NDK_RESULT_EX,
                NDK_SGE, NDK_LOGICAL_ADDRESS_MAPPING, NDK_EXTENSION_INTERFACE>);
static_assert(all_plain_v<NDK_ADAPTER, NDK_PD, NDK_CQ, NDK_MR, NDK_MW, NDK_QP, NDK_SRQ,
                          NDK_CONNECTOR, NDK_LISTENER, NDK_SHARED_ENDPOINT>);
static_assert(
    all_plain_v<NDK_ADAPTER_DISPATCH, NDK_PD_DISPATCH, NDK_CQ_DISPATCH, NDK_MR_DISPATCH,
                NDK_MW_DISPATCH, NDK_QP_DISPATCH, NDK_SRQ_DISPATCH, NDK_CONNECTOR_DISPATCH,
                NDK_LISTENER_DISPATCH, NDK_SHARED_ENDPOINT_DISPATCH>);

int main() {
    return abi_layout_run("C++20");
}
