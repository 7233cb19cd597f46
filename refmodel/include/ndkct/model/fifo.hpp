// ndkct/model/fifo.hpp: a queue of large values that does not allocate per element.
//
// The oracle's expected completions (QpState::initiator_pending, receive_pending) are a few
// hundred bytes each: std::deque gives every one its own heap node, allocated when it is
// expected and freed when it is retrieved, on every request's path. Fifo keeps them in one
// vector from `head_` on: taking the oldest moves `head_`, and the storage is reused once the
// queue empties (or compacted when most of it lies before `head_`): a taken element is
// destroyed then, not at once. Iterators are the vector's:
// push_back and erase invalidate them, as with std::deque.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ndkct::model {

template <typename T>
class Fifo {
  public:
    using iterator = typename std::vector<T>::iterator;
    using const_iterator = typename std::vector<T>::const_iterator;

    iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    iterator end() { return items_.end(); }
    const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
    const_iterator end() const { return items_.end(); }
    size_t size() const { return items_.size() - head_; }
    bool empty() const { return head_ == items_.size(); }
    T& front() { return items_[head_]; }
    const T& front() const { return items_[head_]; }

    void push_back(T&& value) {
        if (empty()) clear();  // the storage is reused from its start
        items_.push_back(std::move(value));
    }
    void push_back(const T& value) {
        if (empty()) clear();
        items_.push_back(value);
    }
    void clear() {
        items_.clear();
        head_ = 0;
    }
    // Removes one element; returns the iterator to the one after it.
    iterator erase(iterator it) {
        if (it != begin()) return items_.erase(it);
        ++head_;  // (what it holds is released with the storage: clear(), compaction)
        if (empty()) {
            clear();
        } else if (head_ >= 32 && 2 * head_ >= items_.size()) {
            items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
            head_ = 0;
        }
        return begin();
    }

  private:
    std::vector<T> items_;
    size_t head_ = 0;  // items_[0, head_) were taken
};

}  // namespace ndkct::model
