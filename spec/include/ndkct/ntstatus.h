/*
 * ndkct/ntstatus.h: every NTSTATUS value the NDKPI documentation uses, plus the few that ndkct
 * itself returns (each marked as ours). Numeric values are the published Windows values.
 *
 * Also declares ndkct_status_name(), which maps a value to its symbolic name for messages.
 */
#ifndef NDKCT_NTSTATUS_H
#define NDKCT_NTSTATUS_H

#include "ndkct/kernel_types.h"

/* X-macro table: name, value. One place, so that names and values cannot drift apart. */
#define NDKCT_NTSTATUS_TABLE(X)                                                         \
    X(STATUS_SUCCESS, 0x00000000)                                                       \
    X(STATUS_PENDING, 0x00000103)                                                       \
    X(STATUS_BUFFER_OVERFLOW, 0x80000005) /* CQ overrun (warning severity)    */        \
    X(STATUS_INVALID_PARAMETER, 0xC000000D)                                             \
    X(STATUS_INVALID_PARAMETER_MIX, 0xC0000030)                                         \
    X(STATUS_ACCESS_VIOLATION, 0xC0000005)                                              \
    X(STATUS_INSUFFICIENT_RESOURCES, 0xC000009A)                                        \
    X(STATUS_BUFFER_TOO_SMALL, 0xC0000023)                                              \
    X(STATUS_NOT_SUPPORTED, 0xC00000BB)                                                 \
    X(STATUS_CONNECTION_INVALID, 0xC000023A)                                            \
    X(STATUS_IMPLEMENTATION_LIMIT, 0xC000042B)                                          \
    X(STATUS_CANCELLED, 0xC0000120)                                                     \
    X(STATUS_INTERNAL_ERROR, 0xC00000E5)                                                \
    X(STATUS_REMOTE_RESOURCES, 0xC000013D)                                              \
    X(STATUS_IO_TIMEOUT, 0xC00000B5)                                                    \
    X(STATUS_CONNECTION_REFUSED, 0xC0000236)                                            \
    X(STATUS_CONNECTION_ABORTED, 0xC0000241)                                            \
    X(STATUS_NETWORK_UNREACHABLE, 0xC000023C)                                           \
    X(STATUS_HOST_UNREACHABLE, 0xC000023D)                                              \
    X(STATUS_SHARING_VIOLATION, 0xC0000043)                                             \
    X(STATUS_INVALID_ADDRESS, 0xC0000141)                                               \
    X(STATUS_TOO_MANY_ADDRESSES, 0xC0000209)                                            \
    X(STATUS_ADDRESS_ALREADY_EXISTS, 0xC000020A)                                        \
    X(NDIS_STATUS_BAD_VERSION, 0xC0010004)                                              \
    X(NDIS_STATUS_ADAPTER_NOT_READY, 0xC0010011)                                        \
    /* Not in the NDKPI pages; used where the docs leave the status open (labelled). */ \
    X(STATUS_NOT_IMPLEMENTED, 0xC0000002)                                               \
    X(STATUS_INVALID_DEVICE_STATE, 0xC0000184)                                          \
    X(STATUS_INVALID_DEVICE_REQUEST, 0xC0000010)                                        \
    X(STATUS_DATA_ERROR, 0xC000003E)                                                    \
    X(STATUS_CONNECTION_RESET, 0xC000020D)                                              \
    X(STATUS_CONNECTION_DISCONNECTED, 0xC000020C)                                       \
    X(STATUS_INVALID_BUFFER_SIZE, 0xC0000206)                                           \
    X(STATUS_DEVICE_BUSY, 0x80000011)

/* Enumerators rather than macros so that the names survive into debuggers; the cast keeps the
 * Windows bit patterns (error codes are negative as NTSTATUS). */
#define NDKCT_DEFINE_STATUS(name, value) name = (NTSTATUS)(value##u),
enum ndkct_ntstatus_value { NDKCT_NTSTATUS_TABLE(NDKCT_DEFINE_STATUS) };
#undef NDKCT_DEFINE_STATUS

/* NDIS_STATUS_RESOURCES is the same value as STATUS_INSUFFICIENT_RESOURCES. */
#define NDIS_STATUS_RESOURCES STATUS_INSUFFICIENT_RESOURCES

NDKCT_EXTERN_C_BEGIN

/* "STATUS_PENDING" for 0x103; NULL for a value ndkct does not know. Thread-safe, no allocation. */
const char* ndkct_status_name(NTSTATUS Status);

NDKCT_EXTERN_C_END

#endif /* NDKCT_NTSTATUS_H */
