// ndkct/trace/reader.hpp: reading an ndkct trace (spec/TRACE.md), bytes in, records out.
//
// The Reader is incremental: feed() bytes as they arrive (a file read in pieces, a socket), and
// next() hands out each record once the frame that holds it is complete and its CRC checks. It
// never throws on bad input and never reads outside what it was given: a truncated, corrupt or
// future-version trace stops it with a Problem naming the byte offset and what is wrong, and
// every record before that point has been handed out. `read_trace()` does the same over a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ndkct/ndkinfo.h"
#include "ndkct/trace_format.h"

namespace ndkct::trace {

// The trace header: what the writer said about the provider and the capture.
struct Header {
    uint16_t major = 0, minor = 0;
    uint32_t bytes = 0;  // the header's size in the file
    NDK_VERSION ndk_version{0, 0};
    std::string provider_name, provider_version, provider_description, provider_spec;
    std::string profile, writer, label, platform;
    std::string profile_json;  // the profile itself, when the writer included it
    std::optional<NDK_ADAPTER_INFO> adapter_info;  // padded with zeros when shorter
    uint32_t adapter_info_size = 0;
    uint32_t page_size = 4096;
    uint64_t pfn_space = 0, ticks_per_second = 0, adapter = 0, seed = 0;
    uint32_t capture_flags = 0;
    uint32_t digest_limit = 0;  // 1.3: DATA blocks of more bytes were not read (0: none)
    uint16_t af_inet = 2, af_inet6 = 10;
    size_t unknown_tags = 0;
};

struct RecordHeader {
    uint16_t kind = 0;
    uint8_t flags = 0;
    uint32_t size = 0;
    uint32_t thread = 0;
    uint8_t irql = NDKT_IRQL_UNKNOWN;
    uint16_t parent = 0;
    uint64_t seq = 0, time = 0;
    uint32_t return_delta = 0, duration = 0;
};

// One record. `body` points into the Reader's buffer: valid until the next feed() or next().
struct Record {
    RecordHeader head;
    const uint8_t* body = nullptr;
    uint32_t body_size = 0;
    uint64_t offset = 0;  // of the record in the file
    uint64_t index = 0;   // 0-based record number
};

struct Problem {
    enum class Kind { not_a_trace, version, truncated, corrupt, io } kind = Kind::corrupt;
    uint64_t offset = 0;
    std::string what;
    std::string describe() const;  // "offset 4096: truncated: ..."
};

class Reader {
  public:
    // Limits that keep a corrupt length field from asking for absurd memory.
    static constexpr uint32_t kMaxHeaderBytes = 1u << 20;
    static constexpr uint32_t kMaxFrameBytes = 256u << 20;

    void feed(const void* data, size_t size);
    void feed(std::span<const uint8_t> bytes) { feed(bytes.data(), bytes.size()); }
    // The whole trace at once, read where it lies (no copy): the bytes must outlive the reader
    // and the records it hands out. Then finish() is implied; nothing more may be fed.
    void borrow(std::span<const uint8_t> bytes);
    // No more bytes will come: what is left over is a truncation.
    void finish();

    enum class Next { record, more, end, error };
    // `more`: feed more bytes; `end`: finished and every byte was read; `error`: problem().
    Next next(Record& out);

    bool has_header() const { return has_header_; }
    const Header& header() const { return header_; }
    const std::optional<Problem>& problem() const { return problem_; }
    uint64_t records() const { return records_; }
    uint64_t consumed() const { return base_ + position_; }  // bytes read and accepted
    bool ended() const { return ended_; }                    // an END record was read

  private:
    bool parse_header();
    bool parse_frame();
    Next fail(Problem::Kind kind, uint64_t offset, std::string what);

    const uint8_t* data() const { return view_ ? view_ : buffer_.data(); }
    size_t size() const { return view_ ? view_size_ : buffer_.size(); }

    std::vector<uint8_t> buffer_;
    const uint8_t* view_ = nullptr;  // borrow(): the bytes read in place of buffer_
    size_t view_size_ = 0;
    size_t position_ = 0;  // next unread byte in buffer_
    uint64_t base_ = 0;    // file offset of buffer_[0]
    bool finished_ = false;
    bool has_header_ = false;
    bool ended_ = false;
    Header header_;
    std::optional<Problem> problem_;
    // The frame being handed out.
    bool in_frame_ = false;
    size_t frame_end_ = 0;  // in buffer_
    uint32_t frame_records_ = 0, frame_seen_ = 0;
    uint64_t frame_offset_ = 0;
    uint64_t records_ = 0;
};

// ---- Reading record bodies ----

// A cursor over a record's body. Reads past the end return zeros and clear ok().
class Body {
  public:
    explicit Body(const Record& r) : p_(r.body), end_(r.body + r.body_size) {}
    Body(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    uint8_t u8() { return get<uint8_t>(); }
    uint16_t u16() { return get<uint16_t>(); }
    uint32_t u32() { return get<uint32_t>(); }
    uint64_t u64() { return get<uint64_t>(); }
    int32_t i32() { return static_cast<int32_t>(u32()); }
    // n bytes, then the padding to 8.
    std::span<const uint8_t> bytes(size_t n);
    void skip(size_t n);
    bool ok() const { return ok_; }
    size_t left() const { return static_cast<size_t>(end_ - p_); }
    const uint8_t* position() const { return p_; }

  private:
    bool take(size_t n) {
        if (ok_ && static_cast<size_t>(end_ - p_) >= n) return true;
        ok_ = false;
        p_ = end_;
        return false;
    }
    template <typename T>
    T get() {
        if (!take(sizeof(T))) return 0;
        T v;
        std::memcpy(&v, p_, sizeof v);
        p_ += sizeof v;
        return v;
    }
    const uint8_t* p_;
    const uint8_t* end_;
    bool ok_ = true;
};

// The common blocks of record bodies.
struct Blob {
    uint32_t length = 0;
    bool present = false;
    std::span<const uint8_t> bytes;
};
Blob read_blob(Body& b);

struct Address {
    uint32_t length = 0;  // as passed (or as returned)
    bool present = false;
    std::span<const uint8_t> bytes;  // what was captured (at most 128)
};
Address read_address(Body& b);

struct Piece {
    uint64_t pfn = 0;
    uint32_t offset = 0, size = 0;
};

// A DATA block's pieces, read in place from the record (no copy).
class Pieces {
  public:
    Pieces() = default;
    explicit Pieces(std::span<const uint8_t> raw) : raw_(raw) {}
    size_t size() const { return raw_.size() / 16; }
    bool empty() const { return raw_.empty(); }
    Piece operator[](size_t i) const;
    struct iterator {
        const Pieces* of;
        size_t i;
        Piece operator*() const { return (*of)[i]; }
        iterator& operator++() {
            ++i;
            return *this;
        }
        bool operator!=(const iterator& o) const { return i != o.i; }
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

  private:
    std::span<const uint8_t> raw_;
};

struct Data {
    uint8_t role = 0, flags = 0;
    uint32_t length = 0;
    uint64_t digest = 0;
    Pieces pieces;
    std::span<const uint8_t> bytes;  // with NDKT_DATA_BYTES
    bool resolved() const { return !(flags & NDKT_DATA_UNRESOLVED); }
    bool over_limit() const { return flags & NDKT_DATA_OVER_LIMIT; }  // 1.3: not read
};
Data read_data(Body& b);
std::optional<Data> read_dataopt(Body& b);

struct MdlRecord {
    uint64_t start_va = 0, mapped_system_va = 0;
    uint32_t byte_count = 0, byte_offset = 0;
    uint16_t mdl_flags = 0, size = 0;
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // first PFN, count
};
struct MdlChainRecord {
    uint32_t flags = 0;
    std::vector<MdlRecord> mdls;
};
MdlChainRecord read_mdl_chain(Body& b);

struct ObjRecord {
    uint64_t handle = 0;
    NDK_VERSION version{0, 0};
    uint32_t object_type = 0;
    uint16_t null_member = NDKT_NO_MEMBER;
    bool reserved_nonzero = false;
    bool dispatch_null = false;
};
ObjRecord read_obj(Body& b);

struct LamOut {
    uint32_t size_out = 0, fbo_out = 0xFFFFFFFF, chain_changed = 0;
    std::vector<uint64_t> pages;
};
LamOut read_lamout(Body& b);

struct Sge {
    uint64_t address = 0;
    uint32_t length = 0, token = 0;
};
std::vector<Sge> read_sgl(Body& b, uint32_t count);
void read_sgl(Body& b, uint32_t count, std::vector<Sge>& out);  // into `out` (its capacity kept)

// ---- Names ----
const char* kind_name(uint16_t kind);          // "NdkWrite", "CqNotification", "Loss", ...
const char* function_name(uint32_t function);  // NDKT_FN_* -> "NdkWrite"
// "entry" or "return": where a call's record stands in the order (spec/TRACE.md).
bool recorded_at_entry(uint32_t function);

// A whole file's bytes (false, with why, when it cannot be read).
bool read_file(const std::string& path, std::vector<uint8_t>& bytes, std::string& why);

// The NDKT64 digest (spec/TRACE.md).
uint64_t digest(std::span<const uint8_t> bytes);
// CRC-32C (Castagnoli), as frames and the header carry it.
uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc = 0);

}  // namespace ndkct::trace
