// A sorted map from string keys whose copies share structure (docs/performance.md "Publishing the
// read view"): a persistent B+ tree. Leaves are std::maps of at most kMaxLeaf entries, inner nodes
// hold at most kMaxKids children, and every node is held by shared_ptr. Copying the map copies one
// pointer; a write copies the nodes on its path from the root that a copy still shares (about
// log64(n) nodes of at most 64 entries each) and nothing else. So the loop publishes a read view
// after every batch in O(what changed), not O(entries).
//
// The read interface is std::map's (find, contains, begin/end in key order, size); writes are
// emplace, erase and mutable_find, which hands out the value slot of one entry after unsharing
// its path. Not thread-safe for writes; copies may be read from other threads while the original
// is written (a node is never written while shared).
#pragma once

#include <algorithm>
#include <array>
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
  using value_type = typename Leaf::value_type;
  static constexpr size_t kMaxLeaf = 64;
  static constexpr size_t kMaxKids = 64;
  // Above this height the root grows wider instead of splitting (a bound on the iterator's path;
  // unreachable in practice: each level multiplies the entries by at least 32).
  static constexpr int kMaxHeight = 12;

 private:
  struct Node;
  using NodePtr = std::shared_ptr<Node>;
  // A child of an inner node: every key under it is >= `first`, every key under the child
  // before it is < `first` (a separator; the first child's is never consulted).
  struct Kid {
    std::string first;
    NodePtr node;
  };
  struct Node {
    Leaf leaf;              // a leaf's entries (height 0), never empty in a tree
    std::vector<Kid> kids;  // an inner node's children (height > 0), never empty in a tree
  };

 public:
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
      if (it_ == leaf_->leaf.end()) next_leaf();
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const {
      return leaf_ == o.leaf_ && (leaf_ == nullptr || it_ == o.it_);
    }

   private:
    friend class CowMap;
    struct Step {
      const Node* node = nullptr;
      size_t i = 0;
    };

    // From the root of a tree of `height` to the leftmost leaf under path_[from]'s child.
    void descend(int from) {
      for (int d = from + 1; d < height_; ++d) {
        path_[d] = Step{path_[d - 1].node->kids[path_[d - 1].i].node.get(), 0};
      }
      leaf_ = height_ == 0 ? root_ : path_[height_ - 1].node->kids[path_[height_ - 1].i].node.get();
      it_ = leaf_->leaf.begin();
    }
    void next_leaf() {
      for (int d = height_ - 1; d >= 0; --d) {
        if (++path_[d].i < path_[d].node->kids.size()) {
          descend(d);
          return;
        }
      }
      leaf_ = nullptr;
    }

    const Node* root_ = nullptr;
    int height_ = 0;
    std::array<Step, kMaxHeight> path_{};  // path_[d]: the node at depth d and its child taken
    const Node* leaf_ = nullptr;           // null at the end
    typename Leaf::const_iterator it_{};
  };
  using iterator = const_iterator;

  const_iterator begin() const {
    const_iterator it;
    if (!root_) return it;
    it.root_ = root_.get();
    it.height_ = height_;
    if (height_ > 0) it.path_[0] = {root_.get(), 0};
    it.descend(0);
    return it;
  }
  const_iterator end() const { return const_iterator(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Levels of inner nodes above the leaves (0: one leaf or none).
  int height() const { return height_; }

  const_iterator find(std::string_view key) const {
    const_iterator it;
    if (!root_) return it;
    it.root_ = root_.get();
    it.height_ = height_;
    const Node* n = root_.get();
    for (int d = 0; d < height_; ++d) {
      const size_t i = kid_for(n->kids, key);
      it.path_[d] = {n, i};
      n = n->kids[i].node.get();
    }
    auto found = n->leaf.find(key);
    if (found == n->leaf.end()) return end();
    it.leaf_ = n;
    it.it_ = found;
    return it;
  }
  bool contains(std::string_view key) const { return find(key) != end(); }

  // Inserts when absent; returns whether it did.
  bool emplace(std::string key, V value) {
    if (contains(key)) return false;
    if (!root_) root_ = std::make_shared<Node>();
    NodePtr sibling = insert(root_, height_, std::move(key), std::move(value));
    if (sibling) {
      auto root = std::make_shared<Node>();
      root->kids.push_back(Kid{std::string(), std::move(root_)});
      root->kids.push_back(Kid{first_key(*sibling, height_), std::move(sibling)});
      root_ = std::move(root);
      ++height_;
    }
    ++size_;
    return true;
  }

  size_t erase(std::string_view key) {
    if (!contains(key)) return 0;
    if (remove(root_, height_, key)) {
      root_.reset();
      height_ = 0;
    }
    while (height_ > 0 && root_->kids.size() == 1) {
      NodePtr only = root_->kids.front().node;
      root_ = std::move(only);
      --height_;
    }
    --size_;
    return 1;
  }

  // The value of `key`, writable (its path unshared first), or null.
  V* mutable_find(std::string_view key) {
    if (!contains(key)) return nullptr;
    Node* n = &own(root_);
    for (int d = 0; d < height_; ++d) n = &own(n->kids[kid_for(n->kids, key)].node);
    return &n->leaf.find(key)->second;
  }

  void clear() {
    root_.reset();
    height_ = 0;
    size_ = 0;
  }

 private:
  // The child that holds or would hold `key`: the last whose separator is <= key, else the first.
  static size_t kid_for(const std::vector<Kid>& kids, std::string_view key) {
    auto it = std::upper_bound(kids.begin() + 1, kids.end(), key,
                               [](std::string_view k, const Kid& kid) { return k < kid.first; });
    return static_cast<size_t>(it - kids.begin()) - 1;
  }

  static Node& own(NodePtr& slot) {
    if (slot.use_count() > 1) slot = std::make_shared<Node>(*slot);
    return *slot;
  }

  // The smallest key under a node of that height (a split-off sibling's separator).
  static std::string first_key(const Node& n, int height) {
    return height == 0 ? n.leaf.begin()->first : n.kids.front().first;
  }

  // Inserts an absent key under `slot` (a node of `height`); returns the upper half of the node
  // when it split, for the caller to add after it.
  NodePtr insert(NodePtr& slot, int height, std::string key, V value) {
    Node& n = own(slot);
    if (height == 0) {
      n.leaf.emplace(std::move(key), std::move(value));
      if (n.leaf.size() <= kMaxLeaf) return nullptr;
      auto upper = std::make_shared<Node>();
      auto mid = n.leaf.begin();
      std::advance(mid, static_cast<std::ptrdiff_t>(n.leaf.size() / 2));
      upper->leaf.insert(std::make_move_iterator(mid), std::make_move_iterator(n.leaf.end()));
      n.leaf.erase(mid, n.leaf.end());
      return upper;
    }
    const size_t i = kid_for(n.kids, key);
    NodePtr sibling = insert(n.kids[i].node, height - 1, std::move(key), std::move(value));
    if (sibling) {
      std::string first = first_key(*sibling, height - 1);
      n.kids.insert(n.kids.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    Kid{std::move(first), std::move(sibling)});
    }
    if (n.kids.size() <= kMaxKids || (&slot == &root_ && height_ >= kMaxHeight)) {
      return nullptr;
    }
    auto upper = std::make_shared<Node>();
    const auto mid = n.kids.begin() + static_cast<std::ptrdiff_t>(n.kids.size() / 2);
    upper->kids.assign(std::make_move_iterator(mid), std::make_move_iterator(n.kids.end()));
    n.kids.erase(mid, n.kids.end());
    return upper;
  }

  // Removes a present key under `slot`; returns whether the node is left empty (for the caller
  // to drop it). Separators stay as they are: still bounds, which is all lookups need.
  static bool remove(NodePtr& slot, int height, std::string_view key) {
    Node& n = own(slot);
    if (height == 0) {
      n.leaf.erase(n.leaf.find(key));
      return n.leaf.empty();
    }
    const size_t i = kid_for(n.kids, key);
    if (remove(n.kids[i].node, height - 1, key)) {
      n.kids.erase(n.kids.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return n.kids.empty();
  }

  NodePtr root_;  // null when empty
  int height_ = 0;
  size_t size_ = 0;
};

}  // namespace gf
