// ndkct/conformance/capture_host.hpp: the capture library (capture/) hosted by the harness.
//
// With NDKCT_CAPTURE_DIR set (./ndkct run --capture DIR), every Session puts the capture
// library between itself and the provider: the provider's real tables are what run, and every
// call and callback of the session goes into one trace file, named after the test that opened
// the session (set_capture_label; the test executables' main sets it per test). The host gives
// the library what it asks of one (capture.h): memory at set-up, a file to write, a clock (the
// TSC), thread numbers, and the arena's pages for the data digests.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "ndkct/capture.h"
#include "ndkct/host_memory.h"

namespace ndkct::conformance {

struct CaptureSettings {
    std::string directory;     // empty: no capture
    uint32_t flags = 0;        // NDKCAP_* (NDKCT_CAPTURE_BYTES=1: source and landed bytes)
    uint32_t block_bytes = 0;  // NDKCT_CAPTURE_BLOCK_KB: ring blocks (0: the library's 256 KiB)
    // NDKCT_CAPTURE_DIGEST_LIMIT: data blocks of more bytes are not read (0: every one is).
    uint32_t digest_limit = 0;
    static CaptureSettings from_environment();
};

// The name the next sessions' traces take (the running test's ID); thread-safe.
void set_capture_label(const std::string& label);
std::string capture_label();

class CaptureHost {
  public:
    struct Description {
        std::string provider_name, provider_version, provider_description, provider_spec;
        std::string profile, profile_json, label;
        uint64_t seed = 0;
        const NDKCT_HOST_MEMORY* memory = nullptr;
    };
    // Opens the capture and its file (DIR/<label>.ndktrace, or .2, .3 ... when taken).
    // Throws std::runtime_error naming what failed.
    CaptureHost(const CaptureSettings& settings, const Description& description);
    ~CaptureHost();
    CaptureHost(const CaptureHost&) = delete;
    CaptureHost& operator=(const CaptureHost&) = delete;

    void attach(NDK_ADAPTER* adapter);
    void adapter_closing();
    void drained(const void* qp);  // NdkCaptureDrained: the consumer drained the QP
    // NdkCaptureOverdue: `arrived` of `expected` owed completions came within `waited`.
    void overdue(const void* cq, size_t expected, size_t arrived, std::chrono::milliseconds waited);
    // NdkCaptureUnnotified: no notification of the CQ came within `waited`.
    void unnotified(const void* cq, std::chrono::milliseconds waited);
    void adapter_closed();
    // Writes the rest and the END record; the adapter must be closed. Idempotent.
    NDKCAP_STATS close();
    const std::string& path() const { return path_; }

    // The host callbacks, also used by the benchmark with another sink.
    static NDKCAP_HOST host(void* context, LONG (*write)(PVOID, const VOID*, SIZE_T),
                            const NDKCT_HOST_MEMORY* memory);
    static uint64_t ticks_per_second();

  private:
    NDKCAP* capture_ = nullptr;
    void* context_ = nullptr;  // the host callbacks' context (capture_host.cpp)
    std::FILE* file_ = nullptr;
    std::string path_;
    std::thread drainer_;
    std::atomic<bool> stop_{false};
    NDKCAP_STATS stats_{};
};

}  // namespace ndkct::conformance
