/* The test's handles on the stand-in (stand_in.c): what ndkcap_wdm.c cannot see. */
#ifndef NDKCT_WDM_STAND_IN_H
#define NDKCT_WDM_STAND_IN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MmGetVirtualForPhysical maps PFN p to base + p * 4096 for p < pages (an ndkct arena). */
void wdm_stand_in_map(void* base, uint64_t pages);
/* ZwWriteFile fails (STATUS_DISK_FULL) once this many bytes were written; ~0: never. */
void wdm_stand_in_fail_writes_after(uint64_t bytes);
/* Pool allocations not yet freed, and the drain threads started and not yet waited for. */
int64_t wdm_stand_in_live_allocations(void);
int64_t wdm_stand_in_live_threads(void);

#ifdef __cplusplus
}
#endif

#endif
