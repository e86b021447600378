// rings.cpp — channel-disjoint Hamiltonian cycles over direct NPU-to-NPU channels (see rings.hpp).
#include "model/rings.hpp"

#include <algorithm>

namespace model {

namespace {

class RingSearch {
public:
    RingSearch(const Topology &t, uint64_t budget) : p_(t.nranks()), budget_(budget)
    {
        out_.assign((size_t)p_, {});
        for (const TopoChannel &c : t.channels())
            if (c.from < p_ && c.to < p_ && c.from != c.to)
                out_[(size_t)c.from].push_back(Edge{c.to, c.id});
        used_.assign(t.channels().size(), 0);
    }

    /* The most rings (up to want) found together: depth-first over rings, each ring
     * depth-first over ranks; a later ring that cannot be completed sends the search back into
     * the earlier ones. */
    std::vector<std::vector<int>> run(int want)
    {
        if (p_ < 2)
            return {};
        rings_.clear();
        best_.clear();
        more_rings(want);
        return best_;
    }

private:
    struct Edge {
        int to, ch;
    };

    bool spent() { return steps_++ >= budget_; }

    // Unused channels out of `node` towards ranks not on the path yet: the "Warnsdorff" order
    // (fewest onward choices first) finds Hamiltonian paths with little backtracking.
    int onward(int node) const
    {
        int n = 0;
        for (const Edge &e : out_[(size_t)node])
            n += !used_[(size_t)e.ch] && !on_path_[(size_t)e.to];
        return n;
    }

    bool more_rings(int want)
    {
        if ((int)rings_.size() > (int)best_.size())
            best_ = rings_;
        if ((int)rings_.size() == want)
            return true;
        path_.assign(1, 0);
        chans_.clear();
        on_path_.assign((size_t)p_, 0);
        on_path_[0] = 1;
        return extend(want);
    }

    // Extends the current ring's path; on a full cycle, records it and searches the next ring.
    bool extend(int want)
    {
        if (spent())
            return false;
        int at = path_.back();
        if ((int)path_.size() == p_) {
            for (const Edge &e : out_[(size_t)at]) {
                if (e.to != 0 || used_[(size_t)e.ch])
                    continue;
                // close the ring, keep its channels, look for the next one
                std::vector<int> ring = path_;
                std::vector<int> chans = chans_;
                chans.push_back(e.ch);
                for (int ch : chans)
                    used_[(size_t)ch] = 1;
                rings_.push_back(ring);
                bool done = more_rings(want);
                rings_.pop_back();
                for (int ch : chans)
                    used_[(size_t)ch] = 0;
                // restore this ring's search state (more_rings reset it)
                path_ = ring;
                chans_ = std::move(chans);
                chans_.pop_back();
                on_path_.assign((size_t)p_, 0);
                for (int r : path_)
                    on_path_[(size_t)r] = 1;
                if (done || steps_ >= budget_)
                    return done;
            }
            return false;
        }
        std::vector<Edge> cand;
        for (const Edge &e : out_[(size_t)at])
            if (!used_[(size_t)e.ch] && !on_path_[(size_t)e.to])
                cand.push_back(e);
        std::stable_sort(cand.begin(), cand.end(),
                         [this](const Edge &a, const Edge &b) { return onward(a.to) < onward(b.to); });
        for (const Edge &e : cand) {
            path_.push_back(e.to);
            chans_.push_back(e.ch);
            on_path_[(size_t)e.to] = 1;
            bool done = extend(want);
            on_path_[(size_t)e.to] = 0;
            chans_.pop_back();
            path_.pop_back();
            if (done || steps_ >= budget_)
                return done;
        }
        return false;
    }

    int p_;
    uint64_t budget_, steps_ = 0;
    std::vector<std::vector<Edge>> out_; // per rank: direct channels to other ranks
    std::vector<char> used_;             // per channel: taken by a recorded ring
    std::vector<std::vector<int>> rings_, best_;
    std::vector<int> path_, chans_;      // the ring being built: ranks, channels between them
    std::vector<char> on_path_;
};

} // namespace

std::vector<std::vector<int>> find_rings(const Topology &topo, int want, uint64_t budget)
{
    if (want < 1)
        return {};
    return RingSearch(topo, budget).run(want);
}

} // namespace model
