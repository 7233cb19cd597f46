// WR-08, issue #6: the provider's post and poll paths allocate nothing and take no lock.
//
// This executable interposes malloc and its relatives, and pthread_mutex_lock/trylock and
// pthread_rwlock_*lock: the provider and the C++ runtime reach them through the dynamic symbol
// table, so these definitions see every call. They count only on a thread that armed the counter,
// so the provider's own event and worker threads do not disturb the count. The NDK requests run
// through the dispatch tables (as a consumer calls them) on a connected loopback pair; raw
// libibverbs does the same work with the same count armed, so what rdma-core itself does on its
// post and poll paths is shown beside ours (the provider must add nothing to it).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstddef>
#include <cstdio>

#include "../bench/pairs.hpp"

// ---------------------------------------------------------------- the interposed functions

namespace {

struct Counts {
    long allocations = 0;
    long locks = 0;
};
thread_local bool g_armed = false;  // initial-exec TLS of the executable: no allocation
thread_local Counts g_counts;

inline void count_allocation() {
    if (g_armed) ++g_counts.allocations;
}
inline void count_lock() {
    if (g_armed) ++g_counts.locks;
}

template <typename Fn>
Fn next(const char* name) {
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {
// glibc's own entry points: no dlsym needed (dlsym itself may call calloc).
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t size) {
    count_allocation();
    return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
    count_allocation();
    return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
    count_allocation();
    return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
    count_allocation();
    void* p = __libc_memalign(alignment, size);
    if (!p) return 12;  // ENOMEM
    *out = p;
    return 0;
}

int pthread_mutex_lock(pthread_mutex_t* m) {
    static auto real = next<int (*)(pthread_mutex_t*)>("pthread_mutex_lock");
    count_lock();
    return real(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
    static auto real = next<int (*)(pthread_mutex_t*)>("pthread_mutex_trylock");
    count_lock();
    return real(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
    static auto real = next<int (*)(pthread_rwlock_t*)>("pthread_rwlock_rdlock");
    count_lock();
    return real(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
    static auto real = next<int (*)(pthread_rwlock_t*)>("pthread_rwlock_wrlock");
    count_lock();
    return real(l);
}
}

namespace {

using namespace ndkct::adapters::verbs::bench;

// Runs `work` with the counter armed on this thread; returns what it counted.
template <typename Work>
Counts counted(Work&& work) {
    g_counts = {};
    g_armed = true;
    work();
    g_armed = false;
    return g_counts;
}

class PostAndPoll : public ::testing::Test {
  protected:
    void SetUp() override {
        ndk.open(16);
        const char* device = std::getenv("NDKCT_RDMA_DEV");
        raw.open(device && *device ? device : nullptr, ndk.info, 16 * PAGE_SIZE);
        for (int k = 0; k < kReceivePool; ++k) {
            ndk.post_receive();
            raw.post_receive();
        }
        // Once untimed and uncounted: first-use paths of both libraries (lazy symbol binding
        // of the interposed lock functions, the device's doorbell pages).
        work_ndk(2);
        work_raw(2);
    }
    void TearDown() override {
        raw.close();
        ndk.close();
    }
    // Writes (signaled and silent), reads, sends with their receives, polls: every post and
    // poll a data path uses.
    void work_ndk(int rounds) {
        for (int r = 0; r < rounds; ++r) {
            ndk.write(0);
            NdkSide::wait_one(ndk.cq_a);
            for (int k = 0; k < kBatch; ++k)
                ndk.write(k == kBatch - 1 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS);
            NdkSide::wait_one(ndk.cq_a);
            ndk.read();
            NdkSide::wait_one(ndk.cq_a);
            ndk.send();
            NdkSide::wait_one(ndk.cq_a);
            NdkSide::wait_one(ndk.cq_b);
            ndk.post_receive();
            NDK_RESULT_EX none[4];
            EXPECT_EQ(table(ndk.cq_a).NdkGetCqResultsEx(ndk.cq_a, none, 4), 0u);
        }
    }
    void work_raw(int rounds) {
        for (int r = 0; r < rounds; ++r) {
            raw.write(IBV_SEND_SIGNALED);
            RawSide::wait_one(raw.cq[0]);
            for (int k = 0; k < kBatch; ++k)
                raw.write(k == kBatch - 1 ? IBV_SEND_SIGNALED : 0);
            RawSide::wait_one(raw.cq[0]);
            raw.read();
            RawSide::wait_one(raw.cq[0]);
            raw.send();
            RawSide::wait_one(raw.cq[0]);
            RawSide::wait_one(raw.cq[1]);
            raw.post_receive();
            ibv_wc none[4];
            EXPECT_EQ(ibv_poll_cq(raw.cq[0], 4, none), 0);
        }
    }
    NdkSide ndk;
    RawSide raw;
};

TEST(Interposition, CountsAllocationsAndLocksOnTheArmedThreadOnly) {
    // The counter itself must see what it claims to see, or a zero below would mean nothing.
    Counts c = counted([] {
        void* p = std::malloc(24);
        asm volatile("" : : "r"(p) : "memory");  // keep the compiler from eliding the pair
        std::free(p);
        pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
        auto* q = new int(3);  // operator new reaches malloc
        asm volatile("" : : "r"(q) : "memory");
        delete q;
    });
    EXPECT_EQ(c.allocations, 2);
    EXPECT_EQ(c.locks, 1);
    Counts quiet = counted([] {});
    EXPECT_EQ(quiet.allocations, 0);
    EXPECT_EQ(quiet.locks, 0);
}

TEST_F(PostAndPoll, NdkPostsAndPollsAllocateNothingAndTakeNoLock) {
    constexpr int kRounds = 50;  // 50 x (1 + 32 writes, 1 read, 1 send, 1 receive), and polls
    Counts theirs = counted([&] { work_raw(kRounds); });
    Counts ours = counted([&] { work_ndk(kRounds); });
    std::printf(
        "counted over %d rounds: NDK %ld allocations, %ld locks | raw libibverbs %ld "
        "allocations, %ld locks\n",
        kRounds, ours.allocations, ours.locks, theirs.allocations, theirs.locks);
    EXPECT_EQ(ours.allocations, 0) << "the post or poll path allocated (WR-08)";
    // rdma-core's own locks (if any) are counted on both sides; the provider adds none.
    EXPECT_LE(ours.locks, theirs.locks) << "the post or poll path took a lock (WR-08)";
    EXPECT_EQ(theirs.allocations, 0) << "raw libibverbs allocated: the comparison is unsound";
}

}  // namespace
