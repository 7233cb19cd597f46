// Host memory for Python: locked buffers over the adapter's arena, and MDL chains over them.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

#include "core.hpp"

namespace ndkct::python {

const platform::LockedBuffer& Buffer::get() const {
    if (!state || !state->alive)
        throw py::value_error("the buffer is gone: its adapter was closed");
    return state->buffer;
}

namespace {

// Bad ranges are a Python error naming the range, never an access outside the buffer.
void check_range(const platform::LockedBuffer& b, size_t offset, size_t length) {
    if (offset > b.size() || length > b.size() - offset)
        throw py::index_error("range [" + std::to_string(offset) + ", " +
                              std::to_string(offset + length) + ") is outside the buffer of " +
                              std::to_string(b.size()) + " bytes");
}

std::pair<size_t, size_t> slice_range(const platform::LockedBuffer& b, const py::slice& s) {
    size_t start, stop, step, count;
    if (!s.compute(b.size(), &start, &stop, &step, &count)) throw py::error_already_set();
    if (step != 1) throw py::value_error("buffer slices take no step");
    return {start, count};
}

Chain make_chain(const Buffer& buffer, platform::MdlChain chain) {
    Chain c;
    c.length = chain.byte_count();
    c.chain = std::make_shared<platform::MdlChain>(std::move(chain));
    c.buffer = buffer.state;
    return c;
}

}  // namespace

void bind_memory(py::module_& m) {
    py::class_<Buffer>(m, "Buffer",
                       "A locked buffer: virtually contiguous, resident, its pages taken from the "
                       "adapter's arena (scattered by default, as real kernel buffers are). Bytes "
                       "written here are what a provider sees through the page frame numbers, and "
                       "the reverse. Index and slice it like bytes; it is freed when its adapter "
                       "closes.")
        .def_property_readonly(
            "address", [](const Buffer& b) { return reinterpret_cast<uintptr_t>(b.get().data()); },
            "The consumer virtual address of byte 0 (page aligned).")
        .def_property_readonly(
            "pfns",
            [](const Buffer& b) {
                auto p = b.get().pfns();
                return std::vector<uint64_t>(p.begin(), p.end());
            },
            "The page frame numbers under the buffer, in virtual order.")
        .def_property_readonly(
            "alive", [](const Buffer& b) { return b.state && b.state->alive; },
            "False once the adapter closed.")
        .def("__len__", [](const Buffer& b) { return b.get().size(); })
        .def(
            "read",
            [](const Buffer& b, size_t offset, std::optional<size_t> length) {
                const auto& buf = b.get();
                size_t n = length ? *length : buf.size() - std::min(offset, buf.size());
                check_range(buf, offset, n);
                return py::bytes(reinterpret_cast<const char*>(buf.data() + offset), n);
            },
            py::arg("offset") = 0, py::arg("length") = py::none(),
            "The bytes of [offset, offset + length) (to the end when length is None).")
        .def(
            "write",
            [](const Buffer& b, size_t offset, const py::bytes& data) {
                const auto& buf = b.get();
                std::string_view v = data;
                check_range(buf, offset, v.size());
                std::memcpy(buf.data() + offset, v.data(), v.size());
            },
            py::arg("offset"), py::arg("data"), "Copies data into the buffer at offset.")
        .def(
            "fill",
            [](const Buffer& b, int seed, size_t offset, std::optional<size_t> length) {
                const auto& buf = b.get();
                size_t n = length ? *length : buf.size() - std::min(offset, buf.size());
                check_range(buf, offset, n);
                // Odd bytes: never the zero fill of fresh buffers. The byte's 256-byte block and
                // its page are mixed in (even multipliers, so the odd bit stays): bytes moved by
                // whole blocks or pages, or pages mapped in the wrong order, show.
                for (size_t i = 0; i < n; ++i)
                    buf.data()[offset + i] = std::byte(
                        uint8_t((i * 31 + seed) ^ ((i >> 8) * 26) ^ ((i >> 12) * 194)) | 1);
            },
            py::arg("seed") = 7, py::arg("offset") = 0, py::arg("length") = py::none(),
            "Fills a range with a pattern that differs byte to byte, 256-byte block to block and "
            "page to page (for the first 128 pages), and is never zero.")
        .def(
            "is_zero",
            [](const Buffer& b, size_t offset, std::optional<size_t> length) {
                const auto& buf = b.get();
                size_t n = length ? *length : buf.size() - std::min(offset, buf.size());
                check_range(buf, offset, n);
                return std::all_of(buf.data() + offset, buf.data() + offset + n,
                                   [](std::byte x) { return x == std::byte{0}; });
            },
            py::arg("offset") = 0, py::arg("length") = py::none(),
            "True when nothing but zeros is in the range (nothing landed there).")
        .def("__getitem__",
             [](const Buffer& b, const py::slice& s) {
                 const auto& buf = b.get();
                 auto [start, count] = slice_range(buf, s);
                 return py::bytes(reinterpret_cast<const char*>(buf.data() + start), count);
             })
        .def("__getitem__",
             [](const Buffer& b, int64_t i) {
                 const auto& buf = b.get();
                 if (i < 0) i += static_cast<int64_t>(buf.size());
                 if (i < 0 || static_cast<size_t>(i) >= buf.size())
                     throw py::index_error("buffer index out of range");
                 return static_cast<int>(buf.data()[i]);
             })
        .def("__setitem__",
             [](const Buffer& b, const py::slice& s, const py::bytes& data) {
                 const auto& buf = b.get();
                 auto [start, count] = slice_range(buf, s);
                 std::string_view v = data;
                 if (v.size() != count)
                     throw py::value_error(
                         "a buffer slice keeps its length: " + std::to_string(count) +
                         " bytes, not " + std::to_string(v.size()));
                 std::memcpy(buf.data() + start, v.data(), count);
             })
        .def(
            "describe",
            [](const Buffer& b, size_t offset, std::optional<size_t> length) {
                const auto& buf = b.get();
                size_t n = length ? *length : buf.size() - std::min(offset, buf.size());
                check_range(buf, offset, n);
                return make_chain(b, platform::describe(buf, offset, n));
            },
            py::arg("offset") = 0, py::arg("length") = py::none(),
            "One MDL describing [offset, offset + length).")
        .def(
            "describe_split",
            [](const Buffer& b, size_t offset, const std::vector<size_t>& pieces) {
                const auto& buf = b.get();
                size_t n = 0;
                for (size_t p : pieces)
                    n += p;
                check_range(buf, offset, n);
                return make_chain(b, platform::describe_split(buf, offset, pieces));
            },
            py::arg("offset"), py::arg("pieces"),
            "A virtually contiguous chain of MDLs of these lengths, starting at offset.")
        .def(
            "with_hole",
            [](const Buffer& b, size_t offset, size_t first, size_t gap, size_t second) {
                const auto& buf = b.get();
                check_range(buf, offset, first + gap + second);
                return make_chain(b, platform::with_hole(buf, offset, first, gap, second));
            },
            py::arg("offset"), py::arg("first_length"), py::arg("gap"), py::arg("second_length"),
            "A broken chain (RMR-MDL-01): two MDLs with `gap` bytes skipped between them.")
        .def(
            "with_decoy_va",
            [](const Buffer& b, const Buffer& decoy, size_t offset, size_t length) {
                const auto& buf = b.get();
                check_range(buf, offset, length);
                check_range(decoy.get(), offset, length);
                return make_chain(b, platform::with_decoy_va(buf, decoy.get(), offset, length));
            },
            py::arg("decoy"), py::arg("offset"), py::arg("length"),
            "One MDL over [offset, offset + length) of this buffer's pages whose virtual address "
            "is decoy's (decoy.address + offset): the VA is only a label (RMR-VA-03, LAM-VA-01), "
            "so the bytes must move through these pages, never the decoy's.")
        .def(
            "with_misaligned_joint",
            [](const Buffer& b, size_t offset, size_t first, size_t second) {
                const auto& buf = b.get();
                // The second piece starts at the page boundary after the first piece's end.
                size_t joint = (offset + first + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
                check_range(buf, offset, joint - offset + second);
                return make_chain(b, platform::with_misaligned_joint(buf, offset, first, second));
            },
            py::arg("offset"), py::arg("first_length"), py::arg("second_length"),
            "A broken chain: the first MDL ends mid-page, the second starts at the next page.")
        .def("__repr__", [](const Buffer& b) {
            if (!b.state || !b.state->alive) return std::string("<Buffer (freed)>");
            return "<Buffer " + std::to_string(b.state->buffer.size()) + " bytes>";
        });

    py::class_<Chain>(
        m, "MdlChain",
        "An MDL chain over a buffer, as a kernel consumer passes to NdkRegisterMr and "
        "NdkBuildLAM.")
        .def_property_readonly("mdl_count", [](const Chain& c) { return c.chain->mdl_count(); })
        .def_readonly("length", &Chain::length, "Bytes described (the sum of the ByteCounts).")
        .def("__len__", [](const Chain& c) { return c.length; })
        .def("__repr__", [](const Chain& c) {
            return "<MdlChain " + std::to_string(c.chain->mdl_count()) + " MDL(s), " +
                   std::to_string(c.length) + " bytes>";
        });
}

}  // namespace ndkct::python
