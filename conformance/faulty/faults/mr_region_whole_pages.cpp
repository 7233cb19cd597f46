// NdkRegisterMr registers whole pages: it rounds the region's end up to the end of its last page
// (the page is in the MDL's PFN array whatever the chain's byte counts say), so accesses past
// VA + Length inside that page reach memory the consumer never registered, where they must fail
// and touch nothing (RMR-ACC-03).
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

// The chains the fault made (copies of the consumer's, whose last MDL reaches its last page's
// end); kept for the process, as a driver would keep the MDL it registered.
struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{alignof(MDL)}); }
};
std::mutex copies_lock;
std::deque<std::unique_ptr<std::byte[], Free>> copies;

MDL* copy_of(const MDL* m) {
    auto* bytes =
        static_cast<std::byte*>(::operator new[](size_t(m->Size), std::align_val_t{alignof(MDL)}));
    std::memcpy(bytes, m, size_t(m->Size));
    std::lock_guard<std::mutex> hold(copies_lock);
    copies.emplace_back(bytes);
    return reinterpret_cast<MDL*>(bytes);
}

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (mdl && length) {
        SIZE_T chain = 0;
        for (const MDL* m = mdl; m; m = m->Next)
            chain += MmGetMdlByteCount(m);
        const SIZE_T offset = MmGetMdlByteOffset(mdl);
        const SIZE_T page_end = (offset + length + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE - offset;
        if (length <= chain && page_end > length) {  // the fault: to the end of the last page
            if (page_end > chain) {
                // The chain ends inside that page: its last MDL is stretched to the page's end
                // (its PFN array already holds the page).
                MDL* head = copy_of(mdl);
                MDL* last = head;
                while (last->Next) {
                    last->Next = copy_of(last->Next);
                    last = last->Next;
                }
                last->ByteCount += ULONG(page_end - chain);
                mdl = head;
            }
            length = page_end;
        }
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr registers to the end of the region's last page",
                   ndkct::faulty::install);
