// bench_network.cpp — speed of the network model alone: a ring of p NPUs where every node sends
// `bytes` to the next, 2(p-1) rounds like a timing-only ring allreduce (round r+1 of a node starts
// once it has received round r and its own send r was delivered). Reports wall time, events/s and
// peak RSS. Usage: bench_network [p=1024] [bytes=1048576] [message|packet]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <systemc>

#include "model/network.hpp"

namespace {

struct Ring {
    model::Network *net;
    int p;
    uint64_t bytes;
    int rounds;
    std::vector<int> started, sent, received;

    void try_send(int i)
    {
        int r = started[i];
        if (r >= rounds || sent[i] != r || received[i] < r)
            return;
        started[i]++;
        int j = (i + 1) % p;
        net->transfer(i, j, bytes, [this, i, j] {
            sent[i]++;
            received[j]++;
            try_send(i);
            try_send(j);
        });
    }
};

} // namespace

int sc_main(int argc, char **argv)
{
    int p = argc > 1 ? std::atoi(argv[1]) : 1024;
    uint64_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : (1u << 20);
    rs_fidelity fid = argc > 3 && std::strcmp(argv[3], "packet") == 0 ? RS_FIDELITY_PACKET
                                                                       : RS_FIDELITY_MESSAGE;
    rs_topology_spec s{};
    s.kind = RS_TOPO_RING;
    s.nranks = p;
    s.link = model::Link::defaults();
    s.sw = model::Switch::defaults();
    auto w0 = std::chrono::steady_clock::now();
    model::Network net(s, fid);
    Ring ring{&net, p, bytes, 2 * (p - 1), std::vector<int>(p), std::vector<int>(p),
              std::vector<int>(p)};
    for (int i = 0; i < p; i++)
        ring.try_send(i);
    sc_core::sc_start();
    auto w1 = std::chrono::steady_clock::now();
    double wall = std::chrono::duration<double>(w1 - w0).count();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t ev = net.scheduler().events();
    double step = s.link.latency + (double)net.link(0).wire_bytes(bytes) / s.link.bandwidth;
    std::printf("ring p=%d bytes=%llu fidelity=%s rounds=%d transfers=%llu\n", p,
                (unsigned long long)bytes, fid == RS_FIDELITY_PACKET ? "packet" : "message",
                2 * (p - 1), (unsigned long long)net.transfers_delivered());
    std::printf("simulated %.6f s (expected 2(p-1)(L + wire/B) = %.6f s)\n", net.now_s(),
                2.0 * (p - 1) * step);
    std::printf("wall %.3f s  events %llu  %.2f M events/s  %.2f M transfers/s  peak RSS %.1f MB\n",
                wall, (unsigned long long)ev, ev / wall / 1e6,
                net.transfers_delivered() / wall / 1e6, ru.ru_maxrss / 1024.0);
    return net.transfers_delivered() == (uint64_t)p * 2 * (p - 1) ? 0 : 1;
}
