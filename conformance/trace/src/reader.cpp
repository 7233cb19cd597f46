// The trace reader: header, frames (CRC-checked), records; typed reads of record bodies.
#include "ndkct/trace/reader.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ndkct::trace {

namespace {

template <typename T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

constexpr uint64_t align8(uint64_t n) {
    return (n + 7) & ~uint64_t{7};
}

// CRC-32C (Castagnoli) by slicing 8 bytes at a time (tables[0] is the byte-wise table).
const std::array<std::array<uint32_t, 256>, 8>& crc_tables() {
    static const auto tables = [] {
        std::array<std::array<uint32_t, 256>, 8> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t r = i;
            for (int k = 0; k < 8; ++k)
                r = (r >> 1) ^ (0x82F63B78u & (0u - (r & 1u)));
            t[0][i] = r;
        }
        for (uint32_t i = 0; i < 256; ++i)
            for (int k = 1; k < 8; ++k)
                t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
        return t;
    }();
    return tables;
}

std::string text(std::span<const uint8_t> v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

}  // namespace

#if defined(__x86_64__)
namespace {

// CRC arithmetic (reflected, polynomial 0x82F63B78): the CRC register is a polynomial over
// GF(2) and appending n zero bytes multiplies it by x^(8n) mod P. That lets three independent
// CRCs of three parts of a buffer be joined into the CRC of the whole.
uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (uint32_t bit = 1u << 31; bit; bit >>= 1) {  // x^0 is the top bit when reflected
        if (a & bit) product ^= b;
        b = (b & 1u) ? (b >> 1) ^ 0x82F63B78u : b >> 1;  // b *= x
    }
    return product;
}

// x^(8 * bytes) mod P.
uint32_t shift_of(uint64_t bytes) {
    static const auto powers = [] {  // x^(2^k) mod P
        std::array<uint32_t, 64> p{};
        p[0] = 1u << 30;  // x^1
        for (size_t k = 1; k < p.size(); ++k)
            p[k] = multiply_mod_p(p[k - 1], p[k - 1]);
        return p;
    }();
    uint32_t result = 1u << 31;  // x^0
    uint64_t exponent = bytes * 8;
    for (size_t k = 0; exponent; ++k, exponent >>= 1)
        if (exponent & 1) result = multiply_mod_p(powers[k], result);
    return result;
}

}  // namespace

// SSE4.2's crc32 instruction computes CRC-32C, 8 bytes a step with a latency of three: three
// parts of a large buffer go through it side by side and their CRCs are joined.
__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(const uint8_t* p, size_t n,
                                                           uint32_t crc) {
    uint64_t c = ~crc;
    if (n >= 3 * 1024) {
        size_t part = (n / 3) & ~size_t{7};
        const uint8_t* q = p + part;
        const uint8_t* r = p + 2 * part;
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < part; i += 8) {
            c = __builtin_ia32_crc32di(c, load<uint64_t>(p + i));
            c1 = __builtin_ia32_crc32di(c1, load<uint64_t>(q + i));
            c2 = __builtin_ia32_crc32di(c2, load<uint64_t>(r + i));
        }
        uint32_t shift = shift_of(part);
        c = multiply_mod_p(static_cast<uint32_t>(c), shift) ^ static_cast<uint32_t>(c1);
        c = multiply_mod_p(static_cast<uint32_t>(c), shift) ^ static_cast<uint32_t>(c2);
        p += 3 * part;
        n -= 3 * part;
    }
    for (; n >= 8; p += 8, n -= 8)
        c = __builtin_ia32_crc32di(c, load<uint64_t>(p));
    uint32_t c32 = static_cast<uint32_t>(c);
    for (; n; ++p, --n)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return ~c32;
}
#endif

uint32_t crc32(std::span<const uint8_t> bytes, uint32_t crc) {
#if defined(__x86_64__)
    static const bool hardware = __builtin_cpu_supports("sse4.2");
    if (hardware) return crc32c_hardware(bytes.data(), bytes.size(), crc);
#endif
    const auto& t = crc_tables();
    const uint8_t* p = bytes.data();
    size_t n = bytes.size();
    crc = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo = load<uint32_t>(p) ^ crc, hi = load<uint32_t>(p + 4);
        crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    }
    while (n--)
        crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

uint64_t digest(std::span<const uint8_t> bytes) {
    // NDKT64: four lanes, word i in lane i % 4, then the lanes mixed in order (spec/TRACE.md).
    auto mix = [](uint64_t h, uint64_t w) {
        h = (h ^ w) * NDKT_DIGEST_K2;
        return h ^ (h >> 31);
    };
    uint64_t n = bytes.size();
    uint64_t h[4] = {n * NDKT_DIGEST_K1, (n + 1) * NDKT_DIGEST_K1, (n + 2) * NDKT_DIGEST_K1,
                     (n + 3) * NDKT_DIGEST_K1};
    size_t i = 0, word = 0;
    for (; i + 32 <= n; i += 32, word += 4)
        for (size_t j = 0; j < 4; ++j)
            h[j] = mix(h[j], load<uint64_t>(bytes.data() + i + 8 * j));
    for (; i < n; i += 8, ++word) {
        uint64_t w = 0;
        std::memcpy(&w, bytes.data() + i, std::min<size_t>(8, n - i));
        h[word & 3] = mix(h[word & 3], w);
    }
    uint64_t r = h[0];
    for (size_t j = 1; j < 4; ++j)
        r = mix(r, h[j]);
    r ^= r >> 33;
    r *= NDKT_DIGEST_K1;
    r ^= r >> 29;
    return r;
}

bool read_file(const std::string& path, std::vector<uint8_t>& bytes, std::string& why) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        why = "cannot read " + path + ": " + std::strerror(errno);
        return false;
    }
    bytes.clear();
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0)
        bytes.insert(bytes.end(), chunk, chunk + n);
    bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) why = "cannot read " + path;
    return !failed;
}

std::string Problem::describe() const {
    const char* kinds[] = {"not an ndkct trace", "unsupported version", "truncated", "corrupt",
                           "cannot read"};
    return "offset " + std::to_string(offset) + ": " + kinds[static_cast<int>(kind)] + ": " + what;
}

void Reader::borrow(std::span<const uint8_t> bytes) {
    if (problem_ || finished_ || view_) return;  // the end was already given
    if (!buffer_.empty() || base_) {             // bytes were fed before: read on from a copy
        feed(bytes.data(), bytes.size());
        finish();
        return;
    }
    view_ = bytes.data();
    view_size_ = bytes.size();
    finished_ = true;
}

void Reader::feed(const void* data, size_t size) {
    if (problem_ || size == 0 || view_) return;
    // Drop what was consumed when it is most of the buffer (bodies handed out are then stale).
    if (position_ > 0 && position_ >= buffer_.size() / 2 && !in_frame_) {
        buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<ptrdiff_t>(position_));
        base_ += position_;
        position_ = 0;
    }
    const auto* p = static_cast<const uint8_t*>(data);
    buffer_.insert(buffer_.end(), p, p + size);
}

void Reader::finish() {
    finished_ = true;
}

Reader::Next Reader::fail(Problem::Kind kind, uint64_t offset, std::string what) {
    problem_ = Problem{kind, offset, std::move(what)};
    return Next::error;
}

bool Reader::parse_header() {
    size_t have = size() - position_;
    const uint8_t* p = data() + position_;
    // A file too short for a header is still no trace when what it has is not the magic's start
    // (a text file named .ndktrace is "not an ndkct trace", not "truncated").
    if (have && std::memcmp(p, NDKT_MAGIC, std::min<size_t>(have, 8)) != 0) {
        fail(Problem::Kind::not_a_trace, base_ + position_,
             "the file does not start with \"NDKTRACE\"");
        return false;
    }
    if (have < NDKT_HEADER_FIXED_BYTES) return false;
    header_.major = load<uint16_t>(p + 8);
    header_.minor = load<uint16_t>(p + 10);
    header_.bytes = load<uint32_t>(p + 12);
    if (header_.major != NDKT_VERSION_MAJOR) {
        fail(Problem::Kind::version, base_ + position_ + 8,
             "trace format " + std::to_string(header_.major) + "." + std::to_string(header_.minor) +
                 " (this reader reads " + std::to_string(NDKT_VERSION_MAJOR) +
                 ".x; a newer ndkct may read it)");
        return false;
    }
    if (header_.bytes < NDKT_HEADER_FIXED_BYTES + 8 || header_.bytes > kMaxHeaderBytes ||
        header_.bytes % 8) {
        fail(Problem::Kind::corrupt, base_ + position_ + 12,
             "the header says it is " + std::to_string(header_.bytes) +
                 " bytes long (at least 24, at most 1 MiB, a multiple of 8)");
        return false;
    }
    if (have < header_.bytes) return false;
    uint32_t stored = load<uint32_t>(p + header_.bytes - 8);
    if (crc32({p, header_.bytes - 8}) != stored) {
        fail(Problem::Kind::corrupt, base_ + position_,
             "the header's CRC does not match its bytes");
        return false;
    }
    size_t at = NDKT_HEADER_FIXED_BYTES, end = header_.bytes - 8;
    while (at < end) {
        if (end - at < 8) {
            fail(Problem::Kind::corrupt, base_ + position_ + at, "a header field is cut short");
            return false;
        }
        uint16_t tag = load<uint16_t>(p + at);
        uint32_t length = load<uint32_t>(p + at + 4);
        if (length > end - at - 8) {
            fail(Problem::Kind::corrupt, base_ + position_ + at,
                 "header field " + std::to_string(tag) + " claims " + std::to_string(length) +
                     " bytes, more than the header holds");
            return false;
        }
        std::span<const uint8_t> v{p + at + 8, length};
        auto u32 = [&] { return length >= 4 ? load<uint32_t>(v.data()) : 0u; };
        auto u64 = [&] { return length >= 8 ? load<uint64_t>(v.data()) : uint64_t{0}; };
        switch (tag) {
            case NDKT_TAG_NDK_VERSION:
                if (length >= 4)
                    header_.ndk_version = {load<uint16_t>(v.data()), load<uint16_t>(v.data() + 2)};
                break;
            case NDKT_TAG_PROVIDER_NAME:
                header_.provider_name = text(v);
                break;
            case NDKT_TAG_PROVIDER_VERSION:
                header_.provider_version = text(v);
                break;
            case NDKT_TAG_PROVIDER_DESCRIPTION:
                header_.provider_description = text(v);
                break;
            case NDKT_TAG_ADAPTER_INFO: {
                NDK_ADAPTER_INFO info{};
                std::memcpy(&info, v.data(), std::min<size_t>(length, sizeof info));
                header_.adapter_info = info;
                header_.adapter_info_size = length;
                break;
            }
            case NDKT_TAG_PAGE_SIZE:
                header_.page_size = u32();
                break;
            case NDKT_TAG_PFN_SPACE:
                header_.pfn_space = u64();
                break;
            case NDKT_TAG_PROFILE:
                header_.profile = text(v);
                break;
            case NDKT_TAG_TICKS_PER_SECOND:
                header_.ticks_per_second = u64();
                break;
            case NDKT_TAG_CAPTURE_FLAGS:
                header_.capture_flags = u32();
                break;
            case NDKT_TAG_WRITER:
                header_.writer = text(v);
                break;
            case NDKT_TAG_ADAPTER:
                header_.adapter = u64();
                break;
            case NDKT_TAG_LABEL:
                header_.label = text(v);
                break;
            case NDKT_TAG_ADDRESS_FAMILIES:
                if (length >= 4) {
                    header_.af_inet = load<uint16_t>(v.data());
                    header_.af_inet6 = load<uint16_t>(v.data() + 2);
                }
                break;
            case NDKT_TAG_PLATFORM:
                header_.platform = text(v);
                break;
            case NDKT_TAG_SEED:
                header_.seed = u64();
                break;
            case NDKT_TAG_PROVIDER_SPEC:
                header_.provider_spec = text(v);
                break;
            case NDKT_TAG_PROFILE_JSON:
                header_.profile_json = text(v);
                break;
            case NDKT_TAG_DIGEST_LIMIT:
                header_.digest_limit = u32();
                break;
            default:
                ++header_.unknown_tags;  // a later minor version's: skipped
        }
        at += 8 + align8(length);
    }
    if (header_.page_size != PAGE_SIZE) {
        fail(Problem::Kind::corrupt, base_ + position_,
             "the trace's page size is " + std::to_string(header_.page_size) +
                 " bytes; ndkct judges 4096-byte pages");
        return false;
    }
    position_ += header_.bytes;
    has_header_ = true;
    return true;
}

bool Reader::parse_frame() {
    size_t have = size() - position_;
    const uint8_t* p = data() + position_;
    if (have < NDKT_FRAME_HEADER_BYTES) return false;
    uint64_t offset = base_ + position_;
    uint32_t magic = load<uint32_t>(p);
    uint32_t payload = load<uint32_t>(p + 4);
    uint32_t count = load<uint32_t>(p + 8);
    uint32_t stored = load<uint32_t>(p + 12);
    if (magic != NDKT_FRAME_MAGIC) {
        fail(Problem::Kind::corrupt, offset, "no frame starts here (bad frame magic)");
        return false;
    }
    if (payload > kMaxFrameBytes || payload % 8 || (payload == 0) != (count == 0)) {
        fail(Problem::Kind::corrupt, offset + 4,
             "a frame of " + std::to_string(payload) + " bytes holding " + std::to_string(count) +
                 " records is not possible");
        return false;
    }
    if (have < NDKT_FRAME_HEADER_BYTES + payload) return false;
    if (crc32({p + NDKT_FRAME_HEADER_BYTES, payload}) != stored) {
        fail(Problem::Kind::corrupt, offset, "the frame's CRC does not match its bytes");
        return false;
    }
    in_frame_ = true;
    frame_offset_ = offset;
    frame_records_ = count;
    frame_seen_ = 0;
    position_ += NDKT_FRAME_HEADER_BYTES;
    frame_end_ = position_ + payload;
    return true;
}

Reader::Next Reader::next(Record& out) {
    if (problem_) return Next::error;
    for (;;) {
        if (!has_header_) {
            if (!parse_header()) {
                if (problem_) return Next::error;
                if (!finished_) return Next::more;
                return fail(Problem::Kind::truncated, base_ + position_,
                            size() == position_ ? "the file is empty: no trace header"
                                                : "the file ends inside the trace header");
            }
            continue;
        }
        if (in_frame_) {
            if (position_ == frame_end_) {
                in_frame_ = false;
                if (frame_seen_ != frame_records_)
                    return fail(Problem::Kind::corrupt, frame_offset_ + 8,
                                "the frame says it holds " + std::to_string(frame_records_) +
                                    " records, it holds " + std::to_string(frame_seen_));
                continue;
            }
            const uint8_t* p = data() + position_;
            uint64_t offset = base_ + position_;
            size_t left = frame_end_ - position_;
            if (left < NDKT_RECORD_HEADER_BYTES)
                return fail(Problem::Kind::corrupt, offset,
                            "a record header is cut by the end of its frame");
            RecordHeader h;
            h.kind = load<uint16_t>(p);
            h.flags = p[2];
            h.size = load<uint32_t>(p + 4);
            h.thread = load<uint32_t>(p + 8);
            h.irql = p[12];
            h.parent = load<uint16_t>(p + 14);
            h.seq = load<uint64_t>(p + 16);
            h.time = load<uint64_t>(p + 24);
            h.return_delta = load<uint32_t>(p + 32);
            h.duration = load<uint32_t>(p + 36);
            if (h.size < NDKT_RECORD_HEADER_BYTES || h.size % 8 || h.size > left)
                return fail(Problem::Kind::corrupt, offset + 4,
                            "a record (kind " + std::to_string(h.kind) + ") of " +
                                std::to_string(h.size) + " bytes does not fit its frame");
            if (ended_)
                return fail(Problem::Kind::corrupt, offset, "a record follows the END record");
            out.head = h;
            out.body = p + NDKT_RECORD_HEADER_BYTES;
            out.body_size = h.size - NDKT_RECORD_HEADER_BYTES;
            out.offset = offset;
            out.index = records_++;
            position_ += h.size;
            ++frame_seen_;
            if (h.kind == NDKT_META_END) ended_ = true;
            return Next::record;
        }
        if (!parse_frame()) {
            if (problem_) return Next::error;
            if (!finished_) return Next::more;
            if (size() == position_) return Next::end;
            return fail(Problem::Kind::truncated, base_ + position_,
                        "the file ends inside a frame (" + std::to_string(size() - position_) +
                            " bytes of it)");
        }
    }
}

// ---- Bodies ----

std::span<const uint8_t> Body::bytes(size_t n) {
    size_t padded = align8(n);
    if (padded < n || !take(padded)) return {};
    std::span<const uint8_t> v{p_, n};
    p_ += padded;
    return v;
}
void Body::skip(size_t n) {
    if (take(n)) p_ += n;
}

Blob read_blob(Body& b) {
    Blob v;
    v.length = b.u32();
    v.present = b.u32() != 0;
    v.bytes = b.bytes(v.length);
    return v;
}

Address read_address(Body& b) {
    Address a;
    a.length = b.u32();
    a.present = b.u16() != 0;
    uint16_t captured = b.u16();
    a.bytes = b.bytes(captured);
    return a;
}

Data read_data(Body& b) {
    Data d;
    d.role = b.u8();
    d.flags = b.u8();
    uint16_t count = b.u16();
    d.length = b.u32();
    d.digest = b.u64();
    if (static_cast<size_t>(count) * 16 > b.left()) {
        b.skip(b.left() + 1);  // cannot hold them: the body is short
        return d;
    }
    d.pieces = Pieces({b.position(), static_cast<size_t>(count) * 16});
    b.skip(static_cast<size_t>(count) * 16);
    if (d.flags & NDKT_DATA_BYTES) d.bytes = b.bytes(d.length);
    return d;
}

std::optional<Data> read_dataopt(Body& b) {
    uint32_t count = b.u32();
    b.u32();
    if (count == 0) return std::nullopt;
    if (count != 1) {
        b.skip(b.left() + 1);
        return std::nullopt;
    }
    return read_data(b);
}

MdlChainRecord read_mdl_chain(Body& b) {
    MdlChainRecord chain;
    uint32_t count = b.u32();
    chain.flags = b.u32();
    if (static_cast<size_t>(count) * 32 > b.left()) {
        b.skip(b.left() + 1);
        return chain;
    }
    chain.mdls.resize(count);
    for (auto& m : chain.mdls) {
        m.start_va = b.u64();
        m.mapped_system_va = b.u64();
        m.byte_count = b.u32();
        m.byte_offset = b.u32();
        m.mdl_flags = b.u16();
        m.size = b.u16();
        uint32_t runs = b.u32();
        if (static_cast<size_t>(runs) * 16 > b.left()) {
            b.skip(b.left() + 1);
            return chain;
        }
        m.runs.resize(runs);
        for (auto& r : m.runs) {
            r.first = b.u64();
            r.second = b.u64();
        }
    }
    return chain;
}

ObjRecord read_obj(Body& b) {
    ObjRecord o;
    o.handle = b.u64();
    o.version.Major = b.u16();
    o.version.Minor = b.u16();
    o.object_type = b.u32();
    o.null_member = b.u16();
    o.reserved_nonzero = b.u8() != 0;
    o.dispatch_null = b.u8() != 0;
    b.u32();
    return o;
}

LamOut read_lamout(Body& b) {
    LamOut l;
    l.size_out = b.u32();
    l.fbo_out = b.u32();
    l.chain_changed = b.u32();
    uint32_t pages = b.u32();
    if (static_cast<size_t>(pages) * 8 > b.left()) {
        b.skip(b.left() + 1);
        return l;
    }
    l.pages.resize(pages);
    for (auto& p : l.pages)
        p = b.u64();
    return l;
}

Piece Pieces::operator[](size_t i) const {
    const uint8_t* p = raw_.data() + 16 * i;
    return {load<uint64_t>(p), load<uint32_t>(p + 8), load<uint32_t>(p + 12)};
}

void read_sgl(Body& b, uint32_t count, std::vector<Sge>& out) {
    out.clear();
    if (static_cast<size_t>(count) * 16 > b.left()) {
        b.skip(b.left() + 1);
        return;
    }
    out.resize(count);
    for (auto& s : out) {
        s.address = b.u64();
        s.length = b.u32();
        s.token = b.u32();
    }
}

std::vector<Sge> read_sgl(Body& b, uint32_t count) {
    std::vector<Sge> out;
    read_sgl(b, count, out);
    return out;
}

// ---- Names ----

const char* function_name(uint32_t f) {
    static const char* const names[NDKT_FN_COUNT] = {
        "?",
        "NdkQueryExtensionInterface",
        "NdkQueryAdapterInfo",
        "NdkCreateCq",
        "NdkCreatePd",
        "NdkCreateSharedEndpoint",
        "NdkCreateConnector",
        "NdkCreateListener",
        "NdkBuildLam",
        "NdkReleaseLam",
        "NdkCloseObject",
        "NdkResizeCq",
        "NdkArmCq",
        "NdkGetCqResults",
        "NdkControlCqInterruptModeration",
        "NdkGetCqResultsEx",
        "NdkRegisterMr",
        "NdkDeregisterMr",
        "NdkInitializeFastRegisterMr",
        "NdkGetRemoteTokenFromMr",
        "NdkGetLocalTokenFromMr",
        "NdkGetRemoteTokenFromMw",
        "NdkModifySrq",
        "NdkSrqReceive",
        "NdkFlush",
        "NdkSend",
        "NdkReceive",
        "NdkBind",
        "NdkFastRegister",
        "NdkInvalidate",
        "NdkRead",
        "NdkWrite",
        "NdkSendAndInvalidate",
        "NdkCreateMr",
        "NdkCreateMw",
        "NdkCreateSrq",
        "NdkCreateQp",
        "NdkCreateQpWithSrq",
        "NdkGetPrivilegedMemoryRegionToken",
        "NdkGetLocalAddress",
        "NdkConnect",
        "NdkConnectWithSharedEndpoint",
        "NdkCompleteConnect",
        "NdkAccept",
        "NdkReject",
        "NdkGetConnectionData",
        "NdkGetPeerAddress",
        "NdkDisconnect",
        "NdkCompleteConnectEx",
        "NdkAcceptEx",
        "NdkListen",
        "NdkControlConnectEvents",
    };
    return f > 0 && f < NDKT_FN_COUNT ? names[f] : "an unknown function";
}

const char* kind_name(uint16_t kind) {
    switch (NDKT_KIND_CLASS(kind)) {
        case NDKT_KIND_CALL:
            return function_name(kind & 0xFF);
        case NDKT_KIND_CALLBACK: {
            static const char* const names[NDKT_CB_COUNT] = {"?",
                                                             "RequestCompletion",
                                                             "CreateCompletion",
                                                             "CloseCompletion",
                                                             "CqNotification",
                                                             "SrqNotification",
                                                             "ConnectEvent",
                                                             "DisconnectEvent",
                                                             "DisconnectEventEx",
                                                             "StrayCallback"};
            uint32_t n = kind & 0xFF;
            return n > 0 && n < NDKT_CB_COUNT ? names[n] : "an unknown callback";
        }
        case 0:
            switch (kind) {
                case NDKT_META_LOSS:
                    return "Loss";
                case NDKT_META_MARK:
                    return "Mark";
                case NDKT_META_ADAPTER_CLOSE:
                    return "AdapterClose";
                case NDKT_META_RETURN:
                    return "Return";
                case NDKT_META_END:
                    return "End";
                case NDKT_META_DRAINED:
                    return "Drained";
                case NDKT_META_OVERDUE:
                    return "Overdue";
                case NDKT_META_UNNOTIFIED:
                    return "Unnotified";
            }
    }
    return "an unknown record";
}

bool recorded_at_entry(uint32_t f) {
    switch (f) {
        case NDKT_FN_CLOSE:
        case NDKT_FN_ARM_CQ:
        case NDKT_FN_MODIFY_SRQ:
        case NDKT_FN_SRQ_RECEIVE:
        case NDKT_FN_FLUSH:
        case NDKT_FN_SEND:
        case NDKT_FN_RECEIVE:
        case NDKT_FN_BIND:
        case NDKT_FN_FAST_REGISTER:
        case NDKT_FN_INVALIDATE:
        case NDKT_FN_READ:
        case NDKT_FN_WRITE:
        case NDKT_FN_SEND_AND_INVALIDATE:
        case NDKT_FN_CONNECT:
        case NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT:
        case NDKT_FN_COMPLETE_CONNECT:
        case NDKT_FN_ACCEPT:
        case NDKT_FN_REJECT:
        case NDKT_FN_DISCONNECT:
        case NDKT_FN_COMPLETE_CONNECT_EX:
        case NDKT_FN_ACCEPT_EX:
        case NDKT_FN_LISTEN:
        case NDKT_FN_CONTROL_CONNECT_EVENTS:
            return true;
        default:
            return false;
    }
}

}  // namespace ndkct::trace
