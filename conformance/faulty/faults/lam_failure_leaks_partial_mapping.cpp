// NdkBuildLam takes its range's translation entries before it checks the output buffer and
// forgets them when the request then fails (a buffer too small for the page list, a broken
// chain): each failed request leaks its pages, until requests the adapter had room for are
// refused with STATUS_INSUFFICIENT_RESOURCES. A failing request must release what it built
// (LAM-ERR-01).
#include "lam_leak.hpp"

using LeakFault = ndkct::faulty::LamLeakFault<ndkct::faulty::LamLeak::failed_request, 64>;

NDKCT_DEFINE_FAULT("NdkBuildLam keeps the translation entries of a request that fails",
                   LeakFault::install, LeakFault::on_object);
