// Fuzz target: a trace file (spec/TRACE.md) read by conformance/trace's Reader, as the runner's
// check-trace, dump and replay read it. The input's first 4 bytes choose how the rest arrives:
// in pieces whose sizes a small generator seeded by them draws (feed() with next() drained
// after every piece, as bytes come from a socket), or whole (borrow(), read in place). Every
// record is decoded (decode(), a Return's outcome, the definition-driven dump). The only
// acceptable outcome: records, then at most one Problem naming an offset inside the input;
// never a crash, a hang, a record outside the input or not equal to its bytes there, and no
// more memory than the input justifies (a corrupt length field must not buy an allocation).
#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "ndkct/trace/decode.hpp"
#include "ndkct/trace/dump.hpp"
#include "ndkct/trace/reader.hpp"

// ---- Bytes allocated through operator new, live and at their peak ----
// Every non-aligned form is replaced (libFuzzer's nothrow ones too), so that each block is freed
// by the same pair that made it (ASan checks); the aligned forms are left to the runtime.
namespace {
size_t live_bytes = 0, peak_bytes = 0;

void* counted(size_t size) {
    void* p = std::malloc(size ? size : 1);
    if (!p) throw std::bad_alloc();
    live_bytes += malloc_usable_size(p);
    if (live_bytes > peak_bytes) peak_bytes = live_bytes;
    return p;
}
void uncounted(void* p) {
    if (!p) return;
    live_bytes -= malloc_usable_size(p);
    std::free(p);
}
}  // namespace

void* operator new(size_t size) {
    return counted(size);
}
void* operator new[](size_t size) {
    return counted(size);
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted(size);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
    try {
        return counted(size);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    uncounted(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    uncounted(p);
}
void operator delete(void* p) noexcept {
    uncounted(p);
}
void operator delete[](void* p) noexcept {
    uncounted(p);
}
void operator delete(void* p, size_t) noexcept {
    uncounted(p);
}
void operator delete[](void* p, size_t) noexcept {
    uncounted(p);
}

namespace {

using ndkct::trace::Reader;
using ndkct::trace::Record;

[[noreturn]] void finding(const char* what, uint64_t a = 0, uint64_t b = 0) {
    std::fprintf(stderr, "trace fuzz: %s (%llu, %llu)\n", what, static_cast<unsigned long long>(a),
                 static_cast<unsigned long long>(b));
    std::abort();
}

struct Run {
    const uint8_t* trace;
    size_t size;
    Reader reader;
    ndkct::trace::Decoded decoded;
    std::string why;
    uint64_t records = 0;
    bool failed = false;
    std::string problem;

    // Every record the reader has ready; false once it stops (end or error).
    bool drain(bool finished) {
        for (;;) {
            Record r;
            auto next = reader.next(r);
            if (next == Reader::Next::record) {
                if (failed) finding("a record after the problem");
                check(r);
                continue;
            }
            if (next == Reader::Next::more) {
                if (finished) finding("more bytes asked for after finish()");
                return true;
            }
            if (next == Reader::Next::end) {
                if (reader.consumed() != size)
                    finding("end before every byte", reader.consumed(), size);
                return false;
            }
            // error: exactly one Problem, inside the input, the same if asked again
            if (!reader.problem()) finding("an error without a Problem");
            const auto& p = *reader.problem();
            if (p.offset > size) finding("a Problem past the end of the input", p.offset, size);
            if (p.what.empty()) finding("a Problem that names nothing");
            std::string said = p.describe();
            if (failed && said != problem) finding("a second Problem");
            failed = true;
            problem = said;
            if (reader.next(r) != Reader::Next::error)
                finding("the reader went on after its Problem");
            return false;
        }
    }

    void check(const Record& r) {
        if (r.index != records) finding("records out of order", r.index, records);
        ++records;
        uint64_t at = r.offset + NDKT_RECORD_HEADER_BYTES;
        if (r.offset > size || at + r.body_size > size)
            finding("a record outside the input", r.offset, r.body_size);
        if (r.body_size && std::memcmp(r.body, trace + at, r.body_size) != 0)
            finding("a record body not the input's bytes", r.offset);
        uint16_t kind = r.head.kind;
        uint16_t cls = NDKT_KIND_CLASS(kind);
        if (cls == NDKT_KIND_CALL || cls == NDKT_KIND_CALLBACK) {
            (void)ndkct::trace::decode(r, decoded, why);
        } else if (kind == NDKT_META_RETURN) {
            ndkct::trace::Body b(r);
            b.u64();
            uint32_t function = b.u32();
            b.u32();
            (void)ndkct::trace::decode_outcome(function, b, decoded);
        }
        (void)ndkct::trace::dump_record(r);  // never throws: says what it cannot decode
    }
};

// xorshift32: the piece sizes, from the input's first 4 bytes.
uint32_t draw(uint32_t& state) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 4) return 0;
    // The dump's definition (parsed once per process, kept) is not the input's doing.
    static const bool warm = [] {
        Record mark;
        mark.head.kind = NDKT_META_MARK;
        (void)ndkct::trace::dump_record(mark);
        return true;
    }();
    (void)warm;
    uint32_t seed;
    std::memcpy(&seed, data, 4);
    size_t base = live_bytes;
    peak_bytes = live_bytes;
    {
        Run run{data + 4, size - 4};
        if (seed & 0x80000000u) {
            run.reader.borrow({run.trace, run.size});
            run.drain(true);
        } else {
            // pieces of 1 .. 2^k bytes, k from the seed: every byte alone up to whole frames
            uint32_t state = seed | 1;
            uint32_t shift = seed % 13;
            size_t at = 0;
            bool going = true;
            while (at < run.size && going) {
                size_t piece = 1 + draw(state) % (size_t{1} << shift);
                if (piece > run.size - at) piece = run.size - at;
                run.reader.feed(run.trace + at, piece);
                at += piece;
                going = run.drain(false);
            }
            run.reader.finish();
            if (going) run.drain(true);
        }
        (void)ndkct::trace::dump_header(run.reader.header());
    }
    // What the input justifies: the reader's copy of it (a vector: up to twice), the decoded
    // fields (a few times the body bytes that hold them), a fixed amount for text and tables.
    size_t used = peak_bytes - base;
    if (used > 8 * size + (256u << 10))
        finding("memory beyond what the input justifies", used, size);
    return 0;
}
