// rs_payload.hpp — host memory for real-payload runs: grow-only buffers mapped lazily with
// transparent huge pages, and a loop that spreads per-rank work over the machine's cores.
//
// Why: an 8 x 256 MiB out-of-place run holds 4.5 GiB of payload. First touch of fresh pages (the
// kernel zeroing them, on a VM also the hypervisor backing them) was half of its wall time; huge
// pages cut the faults 512-fold and touching from every core spreads the zeroing.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <new>
#include <thread>
#include <vector>

namespace rs {

class PayloadBuf {
public:
    PayloadBuf() = default;
    PayloadBuf(const PayloadBuf &) = delete;
    PayloadBuf &operator=(const PayloadBuf &) = delete;
    PayloadBuf(PayloadBuf &&o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
    ~PayloadBuf() { release(); }

    /* At least n bytes; contents are kept only while n fits (growing maps afresh, zero-filled
     * by the kernel on first touch). Throws std::bad_alloc when the host has no room. */
    unsigned char *reserve(size_t n)
    {
        if (n <= n_)
            return p_;
        release();
        void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        madvise(p, n, MADV_HUGEPAGE); // advisory: without THP it is 4 KiB pages as before
        p_ = static_cast<unsigned char *>(p), n_ = n;
        return p_;
    }
    unsigned char *data() const { return p_; }

private:
    void release()
    {
        if (p_)
            munmap(p_, n_);
        p_ = nullptr, n_ = 0;
    }
    unsigned char *p_ = nullptr;
    size_t n_ = 0;
};

/* f(i) for every i in [0, n), on up to one thread per core; returns when all are done. */
template <class F> void parallel_for(int n, F f)
{
    unsigned cores = std::thread::hardware_concurrency();
    int workers = (int)(cores ? cores : 1) < n ? (int)(cores ? cores : 1) : n;
    if (workers <= 1) {
        for (int i = 0; i < n; i++)
            f(i);
        return;
    }
    std::atomic<int> next{0};
    auto work = [&] {
        for (int i; (i = next.fetch_add(1)) < n;)
            f(i);
    };
    std::vector<std::thread> ts;
    for (int w = 1; w < workers; w++)
        ts.emplace_back(work);
    work();
    for (std::thread &t : ts)
        t.join();
}

} // namespace rs
