// Shared by the faults of an adapter that sets NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED (any
// locally writable region is a read sink) and whose provider, needing no sink right, refuses the
// read-sink flag as one it does not handle, though the page says it must not fail a request
// because of it (RMR-SINK-02, FR-SINK-02). The reference provider opens as that adapter: the
// profile it is given gets the flag added to adapter.AdapterFlags, so the reference both reports
// it and lets reads land in regions without the sink right.
#pragma once
#include <string>

#include "faulty.hpp"

namespace ndkct::faulty {

inline std::string read_sink_not_required(const std::string& json) {
    const std::string flag = "\"RDMA_READ_SINK_NOT_REQUIRED\"";
    if (json.find(flag) != std::string::npos) return json;
    size_t key = json.find("\"AdapterFlags\"");
    size_t open = key == std::string::npos ? key : json.find('[', key);
    if (open == std::string::npos) return json;  // (the profile with defaults always has it)
    size_t next = json.find_first_not_of(" \t\r\n", open + 1);
    bool empty = next != std::string::npos && json[next] == ']';
    std::string edited = json;
    edited.insert(open + 1, empty ? flag : flag + ", ");
    return edited;
}

}  // namespace ndkct::faulty
