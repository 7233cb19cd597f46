// Whether an MDL chain holds Length bytes that are not virtually contiguous (a hole, a misaligned
// joint): the chains RMR-MDL-01 and LAM-MDL-01 say a provider must refuse. Shared by the faults
// that accept them (mr_noncontiguous_mdl, lam_maps_broken_chain); and whether a chain is broken
// only past Length (mr_checks_whole_chain refuses those).
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

// Whether a chain is virtually contiguous for its first Length bytes but not over all of its
// bytes: a valid chain (RMR-MDL-04, LAM-MDL-04), which a provider that checks every joint of the
// chain refuses (mr_checks_whole_chain).
inline bool broken_only_past_length(const MDL* mdl, SIZE_T length) {
    SIZE_T bytes = 0;
    for (const MDL* m = mdl; m; m = m->Next)
        bytes += MmGetMdlByteCount(m);
    return mdl && length > 0 && length < bytes && platform::chain_pages(mdl, length).contiguous &&
           !platform::chain_pages(mdl, bytes).contiguous;
}

}  // namespace ndkct::faulty
