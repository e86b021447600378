// rings.cpp — channel-disjoint Hamiltonian cycles over direct NPU-to-NPU channels (see rings.hpp).
#include "model/rings.hpp"

#include <algorithm>

namespace model {

namespace {

class RingSearch {
public:
    // members: the ranks the rings go through, numbered by their place in it (empty: every rank)
    RingSearch(const Topology &t, const std::vector<int> &members, uint64_t budget)
        : p_(members.empty() ? t.nranks() : (int)members.size()), budget_(budget)
    {
        std::vector<int> index((size_t)t.nranks(), -1);
        for (int i = 0; i < p_; i++)
            index[(size_t)(members.empty() ? i : members[(size_t)i])] = i;
        out_.assign((size_t)p_, {});
        for (const TopoChannel &c : t.channels())
            if (c.from < t.nranks() && c.to < t.nranks() && c.from != c.to && index[(size_t)c.from] >= 0 &&
                index[(size_t)c.to] >= 0)
                out_[(size_t)index[(size_t)c.from]].push_back(Edge{index[(size_t)c.to], c.id});
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

    // The path is full: closes it back to rank 0 on each unused channel in turn, records the ring
    // and searches the next one. Returns whether `want` rings were found.
    bool close_ring(int want, int at)
    {
        for (const Edge &e : out_[(size_t)at]) {
            if (e.to != 0 || used_[(size_t)e.ch])
                continue;
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

    // One visit of the path's last rank: false when the budget is spent, close_ring's answer on
    // a full path; else its candidates (unused channels to ranks not on the path, fewest onward
    // choices first) pushed as a new frame, and -1.
    struct Frame {
        std::vector<Edge> cand;
        size_t next = 0;
    };
    int visit(int want, std::vector<Frame> &st)
    {
        if (spent())
            return 0;
        int at = path_.back();
        if ((int)path_.size() == p_)
            return close_ring(want, at) ? 1 : 0;
        Frame f;
        for (const Edge &e : out_[(size_t)at])
            if (!used_[(size_t)e.ch] && !on_path_[(size_t)e.to])
                f.cand.push_back(e);
        std::stable_sort(f.cand.begin(), f.cand.end(),
                         [this](const Edge &a, const Edge &b) { return onward(a.to) < onward(b.to); });
        st.push_back(std::move(f));
        return -1;
    }

    void backtrack()
    {
        on_path_[(size_t)path_.back()] = 0;
        chans_.pop_back();
        path_.pop_back();
    }

    // Extends the current ring's path depth-first, with an explicit stack of frames (a ring of
    // 65536 ranks is that deep: recursion overflowed the thread's stack near 40,000); on a full
    // cycle, records it and searches the next ring. Returns whether `want` rings were found.
    bool extend(int want)
    {
        std::vector<Frame> st;
        int r = visit(want, st);
        if (r >= 0)
            return r;
        while (!st.empty()) {
            Frame &f = st.back();
            if (f.next < f.cand.size()) {
                Edge e = f.cand[f.next++];
                path_.push_back(e.to);
                chans_.push_back(e.ch);
                on_path_[(size_t)e.to] = 1;
                if ((r = visit(want, st)) < 0)
                    continue; // one rank deeper
            } else {
                st.pop_back(); // every candidate tried: this visit answers false
                if (st.empty())
                    return false;
                r = 0;
            }
            // the frame on top hears r from the rank it added: take that rank back off the path;
            // on success or a spent budget it answers the same to its own caller
            backtrack();
            while (r || steps_ >= budget_) {
                st.pop_back();
                if (st.empty())
                    return r;
                backtrack();
            }
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
    return RingSearch(topo, {}, budget).run(want);
}

std::vector<std::vector<int>> find_rings(const Topology &topo, const std::vector<int> &members, int want,
                                         uint64_t budget)
{
    if (want < 1)
        return {};
    return RingSearch(topo, members, budget).run(want);
}

} // namespace model
