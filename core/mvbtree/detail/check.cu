// The multiversion B-Tree's structural checker (mvbtree_check.hpp).
#include "core/mvbtree/detail/mvbtree_check.hpp"

#include <set>
#include <sstream>

#include "core/btree/detail/btree_check.hpp"

namespace gpudict {

namespace {

class Problems {
 public:
  std::ostringstream& add() {
    if (count_++ > 0) text_ << "; ";
    return text_;
  }
  bool full() const { return count_ >= 5; }
  std::string str() const { return text_.str(); }

 private:
  std::ostringstream text_;
  int count_ = 0;
};

}  // namespace

template <class Word>
std::string check_mvbtree_versions(const mvbtree::VersionDump<Word>& d, uint64_t reported_size,
                                   uint64_t pool_retries) {
  using namespace mvbtree;
  using btree::kHighWord;
  using btree::kLinkWord;
  using btree::kLowWord;
  using btree::kMetaWord;
  using btree::kNil;
  std::string latest = check_btree_nodes(d.nodes, d.header, reported_size, pool_retries);
  if (!latest.empty()) return "latest tree: " + latest;
  Problems bad;
  const uint64_t n = d.nodes.size(), c = d.copies.size();
  if (d.head_v.size() < n) return "fewer version words than nodes";
  std::vector<uint8_t> in_list(c, 0), is_free(c, 0);
  for (uint32_t f : d.free_list) {
    if (f >= c) bad.add() << "free copy " << f << " outside the pool's used " << c;
    else is_free[f] = 1;
  }
  // The lists.
  for (uint64_t h = 0; h < n && !bad.full(); ++h) {
    uint32_t newer = vstamp(d.head_v[h]);
    uint32_t cur = volder(d.head_v[h]);
    for (uint64_t hops = 0; cur != kOlderNone && !bad.full(); ++hops) {
      if (hops > c) {
        bad.add() << "head " << h << ": a list longer than the pool";
        break;
      }
      const uint32_t i = cur & kOlderIndex;
      if (cur & kOlderOrigin) {
        if (i >= n || i == h) bad.add() << "head " << h << ": origin " << i << " is not another node";
        break;
      }
      if (!(cur & kOlderCopy) || i >= c) {
        bad.add() << "head " << h << ": older " << cur << " is no copy of the pool's used " << c;
        break;
      }
      if (is_free[i]) bad.add() << "head " << h << ": copy " << i << " is on the free list";
      if (in_list[i]++) bad.add() << "copy " << i << " is in two lists";
      if (!btree::meta_leaf(d.copies[i].w[kMetaWord])) bad.add() << "copy " << i << " is no leaf";
      const uint32_t t = vstamp(d.copy_v[i]);
      if (t >= newer) bad.add() << "head " << h << ": copy " << i << " stamp " << t << " not below " << newer;
      newer = t;
      cur = volder(d.copy_v[i]);
    }
  }
  if (bad.full() || n == 0) return bad.str();
  // Each live snapshot's tree, leaf by leaf.
  auto resolve = [&](uint32_t head, uint32_t s) -> const Word* {
    const Word* p = d.nodes[head].w;
    VWord v = d.head_v[head];
    for (uint64_t hops = 0; hops <= n + c; ++hops) {
      if (vstamp(v) <= s) return p;
      const uint32_t o = volder(v), i = o & kOlderIndex;
      if ((o & kOlderOrigin) && i < n) {
        p = d.nodes[i].w;
        v = d.head_v[i];
      } else if ((o & kOlderCopy) && i < c) {
        p = d.copies[i].w;
        v = d.copy_v[i];
      } else {
        return nullptr;
      }
    }
    return nullptr;
  };
  uint32_t leftmost = btree::kRoot;
  for (uint64_t steps = 0; !btree::meta_leaf(d.nodes[leftmost].w[kMetaWord]); ++steps) {
    leftmost = static_cast<uint32_t>(d.nodes[leftmost].w[1]);
    if (steps > n || leftmost >= n) return "no leftmost leaf";
  }
  for (uint32_t s : d.live) {
    uint32_t head = leftmost;
    bool first = true, have_prev = false;
    Word prev_key = 0, prev_high = 0;
    for (uint64_t steps = 0; !bad.full(); ++steps) {
      if (steps > n) {
        bad.add() << "snapshot " << s << ": a leaf chain longer than the tree";
        break;
      }
      const Word* w = resolve(head, s);
      if (!w) {
        bad.add() << "snapshot " << s << ": head " << head << " has no state at or below it";
        break;
      }
      const uint32_t count = btree::meta_count(w[kMetaWord]);
      const Word low = w[kLowWord], link = w[kLinkWord], high = w[kHighWord];
      if (count > btree::kCapacity) bad.add() << "snapshot " << s << ": a state of " << count << " pairs";
      if (first && low != 0) bad.add() << "snapshot " << s << ": leftmost state's low key " << low;
      if (!first && low != prev_high)
        bad.add() << "snapshot " << s << ": state low " << low << " after a high key " << prev_high;
      for (uint32_t q = 0; q < count && q < btree::kCapacity; ++q) {
        const Word k = w[2 * q];
        if (k < low || (link != kNil && k >= high) || (have_prev && k <= prev_key)) {
          bad.add() << "snapshot " << s << ": key " << k << " out of order or outside [" << low << ", " << high
                    << ")";
          break;
        }
        prev_key = k;
        have_prev = true;
      }
      if (link == kNil) break;
      if (link >= n) {
        bad.add() << "snapshot " << s << ": link " << link << " outside the tree";
        break;
      }
      prev_high = high;
      first = false;
      head = static_cast<uint32_t>(link);
    }
  }
  return bad.str();
}

template <class Key, class Value>
std::string check_mvbtree_structure(const mvbtree_map<Key, Value>& map) {
  mvbtree::VersionDump<typename mvbtree::Inspect<Key, Value>::Word> d;
  mvbtree::Inspect<Key, Value>::dump(map, d);
  const mvbtree_stats st = map.stats();
  return check_mvbtree_versions(d, st.tree.size, st.tree.pool_retries);
}

template std::string check_mvbtree_structure(const mvbtree_map<uint32_t, uint32_t>&);
template std::string check_mvbtree_structure(const mvbtree_map<uint32_t, uint64_t>&);
template std::string check_mvbtree_structure(const mvbtree_map<uint64_t, uint64_t>&);
template std::string check_mvbtree_versions<uint32_t>(const mvbtree::VersionDump<uint32_t>&, uint64_t, uint64_t);
template std::string check_mvbtree_versions<uint64_t>(const mvbtree::VersionDump<uint64_t>&, uint64_t, uint64_t);

}  // namespace gpudict
