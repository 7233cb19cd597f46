// NdkGetConnectionData copies the private data in 16-byte blocks, rounding the caller's
// *pPrivateDataLength up: a short buffer is written past its end (CONN-PD-03).
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS get_connection_data(NDK_CONNECTOR* connector, ULONG* inbound, ULONG* outbound, PVOID data,
                             ULONG* length) {
    ULONG given = length ? *length : 0;
    NTSTATUS status =
        base().connector.NdkGetConnectionData(connector, inbound, outbound, data, length);
    if (!data || !length || (status != STATUS_SUCCESS && status != STATUS_BUFFER_TOO_SMALL))
        return status;
    ULONG rds = *length;
    std::vector<unsigned char> all(rds);
    ULONG all_length = rds;
    if (base().connector.NdkGetConnectionData(connector, nullptr, nullptr, all.data(),
                                              &all_length) != STATUS_SUCCESS)
        return status;
    ULONG rounded = (given + 15) / 16 * 16;  // the fault: whole blocks, past the buffer
    for (ULONG i = 0; i < rounded && i < rds; ++i)
        static_cast<unsigned char*>(data)[i] = all[i];
    return status;
}

void install(Tables& t) {
    t.connector.NdkGetConnectionData = get_connection_data;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkGetConnectionData writes past a short buffer (copies in 16-byte blocks)",
                   ndkct::faulty::install);
