// A sorted map from string keys whose copies share structure (docs/performance.md "Publishing the
// read view"): two levels, a small sorted index of leaves and the leaves themselves, each a
// std::map of at most kMaxLeaf entries held by shared_ptr. Copying the map copies the index only
// (n / kMaxLeaf pointers); changing it copies one leaf when a copy still shares it. So the loop
// can publish a read view after every batch in O(what changed), not O(entries).
//
// The read interface is std::map's (find, contains, begin/end in key order, size); writes are
// emplace, erase and mutable_find, which hands out the value slot of one entry after unsharing
// its leaf. Not thread-safe for writes; copies may be read from other threads while the original
// is written (leaves are never written while shared).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gf {

template <typename V>
class CowMap {
 public:
  using Leaf = std::map<std::string, V, std::less<>>;

 private:
  struct Node {
    std::string first;           // the leaf's smallest key
    std::shared_ptr<Leaf> leaf;  // never empty
  };

 public:
  using value_type = typename Leaf::value_type;
  static constexpr size_t kMaxLeaf = 64;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = typename Leaf::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = const value_type&;

    const_iterator() = default;
    reference operator*() const { return *it_; }
    pointer operator->() const { return &*it_; }
    const_iterator& operator++() {
      ++it_;
      if (it_ == (*top_)[i_].leaf->end()) {
        ++i_;
        if (i_ < top_->size()) it_ = (*top_)[i_].leaf->begin();
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const {
      return i_ == o.i_ && (top_ == nullptr || i_ >= top_->size() || it_ == o.it_);
    }

   private:
    friend class CowMap;
    const_iterator(const std::vector<Node>* top, size_t i, typename Leaf::const_iterator it)
        : top_(top), i_(i), it_(it) {}
    const std::vector<Node>* top_ = nullptr;
    size_t i_ = 0;
    typename Leaf::const_iterator it_{};
  };
  using iterator = const_iterator;

  const_iterator begin() const {
    if (top_.empty()) return end();
    return const_iterator(&top_, 0, top_.front().leaf->begin());
  }
  const_iterator end() const { return const_iterator(&top_, top_.size(), {}); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  const_iterator find(std::string_view key) const {
    const size_t i = leaf_for(key);
    if (i >= top_.size()) return end();
    auto it = top_[i].leaf->find(key);
    if (it == top_[i].leaf->end()) return end();
    return const_iterator(&top_, i, it);
  }
  bool contains(std::string_view key) const { return find(key) != end(); }

  // Inserts when absent; returns whether it did.
  bool emplace(std::string key, V value) {
    if (top_.empty()) {
      top_.push_back(Node{key, std::make_shared<Leaf>()});
    }
    const size_t i = leaf_for(key);
    Leaf& leaf = own(i);
    const bool inserted = leaf.emplace(key, std::move(value)).second;
    if (!inserted) return false;
    ++size_;
    if (key < top_[i].first) top_[i].first = key;
    if (leaf.size() > kMaxLeaf) split(i);
    return true;
  }

  size_t erase(std::string_view key) {
    const size_t i = leaf_for(key);
    if (i >= top_.size() || !top_[i].leaf->contains(key)) return 0;
    Leaf& leaf = own(i);
    leaf.erase(leaf.find(key));
    --size_;
    if (leaf.empty()) {
      top_.erase(top_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      top_[i].first = leaf.begin()->first;
    }
    return 1;
  }

  // The value of `key`, writable (its leaf unshared first), or null.
  V* mutable_find(std::string_view key) {
    const size_t i = leaf_for(key);
    if (i >= top_.size() || !top_[i].leaf->contains(key)) return nullptr;
    return &own(i).find(key)->second;
  }

  void clear() {
    top_.clear();
    size_ = 0;
  }

 private:
  // The leaf that holds or would hold `key`: the last whose first key is <= key, else the first.
  size_t leaf_for(std::string_view key) const {
    if (top_.empty()) return 0;
    auto it = std::upper_bound(top_.begin(), top_.end(), key,
                               [](std::string_view k, const Node& n) { return k < n.first; });
    return it == top_.begin() ? 0 : static_cast<size_t>(it - top_.begin()) - 1;
  }

  Leaf& own(size_t i) {
    if (top_[i].leaf.use_count() > 1) top_[i].leaf = std::make_shared<Leaf>(*top_[i].leaf);
    return *top_[i].leaf;
  }

  void split(size_t i) {
    Leaf& leaf = *top_[i].leaf;
    auto mid = leaf.begin();
    std::advance(mid, static_cast<std::ptrdiff_t>(leaf.size() / 2));
    auto upper = std::make_shared<Leaf>();
    upper->insert(std::make_move_iterator(mid), std::make_move_iterator(leaf.end()));
    leaf.erase(mid, leaf.end());
    std::string first = upper->begin()->first;
    top_.insert(top_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Node{std::move(first), upper});
  }

  std::vector<Node> top_;
  size_t size_ = 0;
};

}  // namespace gf
