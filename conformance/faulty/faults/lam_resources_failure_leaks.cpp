// NdkBuildLam takes translation entries one at a time and, when the table runs out before the
// range is mapped, fails with STATUS_INSUFFICIENT_RESOURCES without giving back the entries it
// took: a request too large for the adapter leaves the table full, and requests it had room for
// are refused from then on. A request that fails for want of resources leaves no mapping
// behind (LAM-ST-03). A small adapter: 16 entries, so that a request of a few buffers' pages is
// too large for it.
#include "lam_leak.hpp"

using LeakFault = ndkct::faulty::LamLeakFault<ndkct::faulty::LamLeak::resource_shortfall, 16>;

NDKCT_DEFINE_FAULT("NdkBuildLam keeps the entries of a request it refuses for want of them",
                   LeakFault::install, LeakFault::on_object);
