// ndkct/model/translate.hpp: what a driver reads from NDK arguments, in the model's terms.
//
// The reference provider (it is the model) and the oracle harness (it judges a provider by the
// model) both turn real NDK call arguments into model calls. The parts that read memory
// structures live here, once: MDL chains, SGE lists, inline payloads, socket addresses.
#pragma once

#include <vector>

#include "ndkct/model/calls.hpp"
#include "ndkct/ndkpi.h"

namespace ndkct::model {

// The first `length` bytes of an MDL chain as a driver sees them (contiguity, pages, FBO).
MdlView view_mdl(const MDL* chain, uint64_t length);

std::vector<Sge> view_sgl(const NDK_SGE* sgl, ULONG count);

// The bytes an NDK_OP_FLAG_INLINE request carries (read through the SGEs' virtual addresses,
// as the provider does during the call: SGE-03, SGE-06).
std::vector<std::byte> inline_payload(const NDK_SGE* sgl, ULONG count);

SocketAddress view_address(const SOCKADDR* address, ULONG length);

inline Context context_of(const void* pointer) {
    return reinterpret_cast<uintptr_t>(pointer);
}
inline void* pointer_of(Context context) {
    return reinterpret_cast<void*>(context);
}

}  // namespace ndkct::model
