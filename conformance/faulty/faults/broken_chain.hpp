// Whether an MDL chain holds Length bytes that are not virtually contiguous (a hole, a misaligned
// joint): the chains RMR-MDL-01 and LAM-MDL-01 say a provider must refuse. Shared by the faults
// that accept them (mr_noncontiguous_mdl, lam_maps_broken_chain).
#pragma once
#include "faulty.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::faulty {

inline bool broken_chain(const MDL* mdl, SIZE_T length) {
    SIZE_T bytes = 0;
    for (const MDL* m = mdl; m; m = m->Next)
        bytes += MmGetMdlByteCount(m);
    return mdl && length <= bytes && !platform::chain_pages(mdl, length).contiguous;
}

}  // namespace ndkct::faulty
