// The ordering the device gives, told to ThreadSanitizer.
//
// A request's slot is written by the thread that posts it and read by the thread that reaps its
// completion. What orders the two is the device: the request travels through the send queue it
// reads, the completion through the CQ it writes, both inside libibverbs and the provider
// library, which are not instrumented. ThreadSanitizer cannot see that, and would report every
// slot read on the poll path as a race with its post. The post path releases the slot just
// before handing it to the device, the poll path acquires it where the device hands it back:
// exactly the happens-before the hardware provides, and no more (a field written after the post
// is still a race, and reported). Outside TSan builds both are nothing.
#pragma once

#ifdef NDKCT_SANITIZER_thread
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace ndkct::adapters::verbs {

inline void device_release([[maybe_unused]] const void* slot) {
#ifdef NDKCT_SANITIZER_thread
    __tsan_release(const_cast<void*>(slot));
#endif
}

inline void device_acquire([[maybe_unused]] const void* slot) {
#ifdef NDKCT_SANITIZER_thread
    __tsan_acquire(const_cast<void*>(slot));
#endif
}

}  // namespace ndkct::adapters::verbs
