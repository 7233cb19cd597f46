// ndkct/model/small_vector.hpp: a vector that keeps its first N elements inline.
//
// The oracle builds a few short lists for every work request (the pages a transfer touches, the
// pieces of a landing); almost all hold one to three entries. Kept inline they cost no heap
// allocation, which was the largest single cost of checking a call (refmodel/bench). Only for
// default-constructible values; clear() keeps the elements' storage (their slots are reused).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

namespace ndkct::model {

template <typename T, size_t N>
class SmallVector {
  public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    SmallVector() = default;
    SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
    SmallVector(SmallVector&& other) noexcept { take(other); }
    SmallVector& operator=(const SmallVector& other) {
        if (this != &other) {
            clear();
            assign(other.begin(), other.end());
        }
        return *this;
    }
    SmallVector& operator=(SmallVector&& other) noexcept {
        if (this != &other) {
            heap_.reset();
            take(other);
        }
        return *this;
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t capacity() const { return heap_ ? capacity_ : N; }
    T* data() { return heap_ ? heap_.get() : inline_; }
    const T* data() const { return heap_ ? heap_.get() : inline_; }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }
    T& operator[](size_t i) { return data()[i]; }
    const T& operator[](size_t i) const { return data()[i]; }
    T& back() { return data()[size_ - 1]; }
    const T& back() const { return data()[size_ - 1]; }

    void clear() { size_ = 0; }
    void reserve(size_t n) {
        if (n <= capacity()) return;
        std::unique_ptr<T[]> grown(new T[n]);
        std::move(begin(), end(), grown.get());
        heap_ = std::move(grown);
        capacity_ = n;
    }
    void push_back(const T& value) {
        if (size_ == capacity()) reserve(std::max<size_t>(2 * capacity(), 2 * N));
        data()[size_++] = value;
    }
    void push_back(T&& value) {
        if (size_ == capacity()) reserve(std::max<size_t>(2 * capacity(), 2 * N));
        data()[size_++] = std::move(value);
    }

  private:
    template <typename It>
    void assign(It first, It last) {
        reserve(static_cast<size_t>(last - first));
        std::copy(first, last, data());
        size_ = static_cast<size_t>(last - first);
    }
    void take(SmallVector& other) {
        size_ = other.size_;
        capacity_ = other.capacity_;
        if (other.heap_) {
            heap_ = std::move(other.heap_);
        } else {
            std::move(other.inline_, other.inline_ + other.size_, inline_);
        }
        other.size_ = 0;
        other.capacity_ = N;
    }

    T inline_[N] = {};
    std::unique_ptr<T[]> heap_;
    size_t size_ = 0;
    size_t capacity_ = N;
};

}  // namespace ndkct::model
