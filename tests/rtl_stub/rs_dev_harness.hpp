// rs_dev_harness.hpp — drives verilated rs_dev blocks from C++: memory images behind their memory ports, a link router between their TX/RX ports, register accesses.
//
// Copy it (or include it) to run the block without SystemC: the mmio backend's access functions
// become RsDevSystem::reg_read/reg_write (plus mem() for device memory), "wait for irq" becomes
// tick() until irq(). One clock for every device; tick() is one cycle of all of them.
//
// Per cycle: every output the harness looks at (mem_req_*, tx_*, rx_ready, rx_ack_*, rsp_*) depends
// only on flops (rs_dev guarantees it), so the harness reads them after the previous edge,
// computes every input (memory ready/response, link routing, register request), evaluates
// clk = 0, performs the transfers that this edge will make, then evaluates clk = 1.
//
// Link router: a transfer's header names the destination node (tx_peer); its beats then go to
// that device's RX port, one sender per receiver at a time, and the receiver's ack goes back to
// the sender. A peer that does not exist gets its beats swallowed and the sender gets a BAD ack
// (rs_ref_dev's link callback says "failed" the same way). Every transfer is logged per sender.
#ifndef RS_DEV_HARNESS_HPP
#define RS_DEV_HARNESS_HPP

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "Vrs_dev.h"
#include "rs_link_beat.hpp"
#include "verilated.h"

// One transfer seen on the link (rs_ref_link_msg's fields plus the payload and the ack status).
struct RsLinkMsg {
  int kind = 0;
  unsigned peer = 0;
  uint64_t addr = 0;
  uint32_t bytes = 0;
  unsigned dtype = 0, op = 0, notify = 0;
  std::vector<uint8_t> data;
  int status = -1;  // the ack (RS_RX_*), -1 until it came back
};

// A transfer injected into a device's RX port by the harness itself (a "foreign" sender).
struct RsInject {
  RsLinkMsg msg;
  size_t beat = 0;  // 0: the header next
};

class RsDevSystem {
 public:
  struct Dev {
    std::unique_ptr<Vrs_dev> m;
    std::vector<uint8_t> own;  // the memory image, unless attach_memory() gave another
    uint8_t *mem = nullptr;
    uint64_t mem_bytes = 0;
    std::deque<std::pair<uint64_t, uint32_t>> rsp;  // (cycle it may be returned, data), in order
    // link state as a sender
    int route = -1;           // destination of the open transfer (-2: no such peer), -1: none
    bool swallow_ack = false;  // the router owes this sender a BAD ack (no such peer)
    std::deque<int> ack_to;   // as a receiver: who gets each ack, in transfer order (-1: injected)
    int owner = -1;           // as a receiver: the sender whose beats it takes now (-1: free)
    std::vector<RsLinkMsg> log;  // transfers this device sent, in order
    size_t log_acked = 0;        // log entries that have their ack
    std::deque<RsInject> inject;
    std::vector<int> inject_status;  // acks of injected transfers, in order
    // register request for the next cycle
    bool req = false, req_write = false;
    uint32_t req_addr = 0, req_wdata = 0;
  };

  // mem_stall / link_stall: probability (0..1) that a cycle withholds mem_req_ready / a link beat;
  // max_lat: read responses come back 1..max_lat cycles after the request.
  double mem_stall = 0.0, link_stall = 0.0;
  unsigned max_lat = 1;
  uint64_t cycles = 0;

  RsDevSystem(VerilatedContext *ctx, unsigned n, uint64_t mem_bytes) : ctx_(ctx) {
    if (mem_bytes % 4) throw std::invalid_argument("rs_dev memory must be a multiple of 4 bytes");
    for (unsigned i = 0; i < n; i++) {
      auto d = std::make_unique<Dev>();
      d->m = std::make_unique<Vrs_dev>(ctx);
      d->own.assign(mem_bytes, 0);
      d->mem = d->own.data();
      d->mem_bytes = mem_bytes;
      d->m->mem_bytes = mem_bytes;
      devs_.push_back(std::move(d));
    }
    reset();
  }

  unsigned size() const { return (unsigned)devs_.size(); }
  Dev &dev(unsigned i) { return *devs_[i]; }
  Vrs_dev &top(unsigned i) { return *devs_[i]->m; }
  uint8_t *mem(unsigned i) { return devs_[i]->mem; }
  // Device i's memory image becomes `image` (mem_bytes long, e.g. a mapping another process
  // shares), with the contents it had.
  void attach_memory(unsigned i, uint8_t *image) {
    Dev &d = *devs_[i];
    std::memcpy(image, d.mem, d.mem_bytes);
    d.mem = image;
    d.own.clear();
    d.own.shrink_to_fit();
  }

  // rst_n low for a few cycles (memory images are kept; in-flight responses are dropped).
  void reset() {
    for (auto &d : devs_) {
      d->m->rst_n = 0;
      d->rsp.clear();
      d->route = -1;
      d->owner = -1;
      d->swallow_ack = false;
      d->ack_to.clear();
    }
    for (int i = 0; i < 3; i++) tick();
    for (auto &d : devs_) d->m->rst_n = 1;
    tick();
  }

  // One register access through the bus (the other devices keep running): the response is
  // registered, so it is there after one cycle. *err gets rsp_err.
  uint32_t reg_read(unsigned i, uint32_t addr, int *err = nullptr) {
    Dev &d = dev(i);
    d.req = true;
    d.req_write = false;
    d.req_addr = addr;
    d.req_wdata = 0;
    tick();
    if (!d.m->rsp_valid) throw std::runtime_error("rs_dev: no register response");
    if (err) *err = d.m->rsp_err;
    return d.m->rsp_rdata;
  }
  // The same register of every device in one cycle (each block has its own bus): v[i], err[i].
  void reg_read_all(uint32_t addr, uint32_t *v, int *err) {
    for (auto &d : devs_) {
      d->req = true;
      d->req_write = false;
      d->req_addr = addr;
      d->req_wdata = 0;
    }
    tick();
    for (unsigned i = 0; i < size(); i++) {
      if (!devs_[i]->m->rsp_valid) throw std::runtime_error("rs_dev: no register response");
      v[i] = devs_[i]->m->rsp_rdata;
      err[i] = devs_[i]->m->rsp_err;
    }
  }
  // The same register of every device written in one cycle, device i with v[i]; err[i] = rsp_err.
  void reg_write_all(uint32_t addr, const uint32_t *v, int *err) {
    for (unsigned i = 0; i < size(); i++) {
      Dev &d = dev(i);
      d.req = true;
      d.req_write = true;
      d.req_addr = addr;
      d.req_wdata = v[i];
    }
    tick();
    for (unsigned i = 0; i < size(); i++) err[i] = devs_[i]->m->rsp_err;
  }
  int reg_write(unsigned i, uint32_t addr, uint32_t v) {
    Dev &d = dev(i);
    d.req = true;
    d.req_write = true;
    d.req_addr = addr;
    d.req_wdata = v;
    tick();
    return d.m->rsp_err;
  }

  // Nothing left anywhere: engines not busy, no link transfer open or unacked, no read pending.
  bool quiet() const {
    for (auto &d : devs_) {
      if (d->m->busy || d->route != -1 || d->swallow_ack || !d->ack_to.empty() || !d->rsp.empty() ||
          !d->inject.empty() || d->log_acked != d->log.size())
        return false;
    }
    return true;
  }

  // Ticks until quiet() held for a few cycles; false after max_cycles (something hangs).
  bool run_until_quiet(uint64_t max_cycles) {
    unsigned calm = 0;
    for (uint64_t c = 0; c < max_cycles; c++) {
      tick();
      calm = quiet() ? calm + 1 : 0;
      if (calm >= 3) return true;
    }
    return false;
  }

  void tick() {
    const unsigned n = size();
    // ---- inputs, from the outputs as the last edge left them
    for (unsigned i = 0; i < n; i++) {
      Dev &d = dev(i);
      Vrs_dev &m = *d.m;
      m.req_valid = d.req;
      m.req_write = d.req_write;
      m.req_addr = d.req_addr;
      m.req_wdata = d.req_wdata;
      d.req = false;
      m.mem_req_ready = !(mem_stall > 0 && rnd01() < mem_stall);
      m.mem_rsp_valid = !d.rsp.empty() && d.rsp.front().first <= cycles;
      m.mem_rsp_rdata = m.mem_rsp_valid ? d.rsp.front().second : 0;
      m.rx_valid = 0;
      m.tx_ready = 0;
      m.tx_ack_valid = 0;
      m.tx_ack_status = 0;
    }
    // acks: a receiver's ack goes to the sender of its oldest unacked transfer
    for (unsigned t = 0; t < n; t++) {
      Dev &r = dev(t);
      if (!r.m->rx_ack_valid) continue;
      if (r.ack_to.empty()) throw std::runtime_error("rs_dev: an ack nobody waits for");
      int s = r.ack_to.front();
      r.ack_to.pop_front();
      if (s < 0) {
        r.inject_status.push_back(r.m->rx_ack_status);
      } else {
        dev(s).m->tx_ack_valid = 1;
        dev(s).m->tx_ack_status = r.m->rx_ack_status;
        ack_log(s, r.m->rx_ack_status);
      }
    }
    for (unsigned s = 0; s < n; s++) {
      Dev &d = dev(s);
      if (d.swallow_ack && d.route == -1) {
        d.m->tx_ack_valid = 1;
        d.m->tx_ack_status = kRxBad;
        d.swallow_ack = false;
        ack_log(s, kRxBad);
      }
    }
    // beats: senders (devices, then injected transfers) to receivers
    struct Beat { int s; unsigned t; };  // s < 0: injected into t
    std::vector<Beat> beats;
    for (unsigned s = 0; s < n; s++) {
      Dev &d = dev(s);
      Vrs_dev &m = *d.m;
      if (!m.tx_valid) continue;
      if (link_stall > 0 && rnd01() < link_stall) continue;
      if (m.tx_hdr) {
        if (d.route != -1) throw std::runtime_error("rs_dev: header inside a transfer");
        unsigned p = m.tx_peer;
        if (p >= n) {
          m.tx_ready = 1;  // no such node: the router eats the transfer and fails it
          log_tx(s);
          d.route = m.tx_last ? -1 : -2;
          d.swallow_ack = true;
          continue;
        }
        Dev &r = dev(p);
        if (r.owner != -1 || !r.m->rx_ready) continue;
        r.owner = (int)s;
      } else if (d.route == -2) {
        m.tx_ready = 1;
        append_tx(s);
        if (m.tx_last) d.route = -1;
        continue;
      } else if (d.route < 0) {
        throw std::runtime_error("rs_dev: data beat outside a transfer");
      } else if (!dev(d.route).m->rx_ready) {
        continue;
      }
      beats.push_back({(int)s, m.tx_hdr ? (unsigned)m.tx_peer : (unsigned)d.route});
    }
    for (const Beat &b : beats) {
      Dev &d = dev(b.s);
      Vrs_dev &m = *d.m;
      Vrs_dev &r = *dev(b.t).m;
      r.rx_valid = 1;
      r.rx_hdr = m.tx_hdr;
      r.rx_kind = m.tx_kind;
      r.rx_addr = m.tx_addr;
      r.rx_bytes = m.tx_bytes;
      r.rx_dtype = m.tx_dtype;
      r.rx_op = m.tx_op;
      r.rx_notify = m.tx_notify;
      r.rx_data = m.tx_data;
      m.tx_ready = 1;
      if (m.tx_hdr) {
        log_tx(b.s);
        dev(b.t).ack_to.push_back(b.s);
        d.route = (int)b.t;
      } else {
        append_tx(b.s);
      }
      if (m.tx_last) {
        d.route = -1;
        dev(b.t).owner = -1;
      }
    }
    for (unsigned t = 0; t < n; t++) drive_inject(t);

    // ---- evaluate with the new inputs, perform this edge's memory transfers, then the edge
    for (auto &d : devs_) {
      d->m->clk = 0;
      d->m->eval();
    }
    for (auto &d : devs_) memory_edge(*d);
    for (auto &d : devs_) {
      d->m->clk = 1;
      d->m->eval();
    }
    cycles++;
    ctx_->timeInc(1);
  }

  static constexpr int kRxOk = 0, kRxRange = 1, kRxBad = 2;

 private:
  VerilatedContext *ctx_;
  std::vector<std::unique_ptr<Dev>> devs_;
  uint64_t rs_ = 0x2545F4914F6CDD1Dull;

  double rnd01() {
    rs_ ^= rs_ << 13;
    rs_ ^= rs_ >> 7;
    rs_ ^= rs_ << 17;
    return (double)(rs_ >> 11) * (1.0 / 9007199254740992.0);
  }

  void log_tx(unsigned s) {
    Vrs_dev &m = *dev(s).m;
    RsLinkMsg g;
    g.kind = m.tx_kind;
    g.peer = m.tx_peer;
    g.addr = m.tx_addr;
    g.bytes = m.tx_bytes;
    g.dtype = m.tx_dtype;
    g.op = m.tx_op;
    g.notify = m.tx_notify;
    dev(s).log.push_back(std::move(g));
  }
  void append_tx(unsigned s) {
    RsLinkMsg &g = dev(s).log.back();
    uint32_t v = dev(s).m->tx_data;
    for (int k = 0; k < 4 && g.data.size() < g.bytes; k++) g.data.push_back((uint8_t)(v >> (8 * k)));
  }
  void ack_log(unsigned s, int st) {
    Dev &d = dev(s);
    if (d.log_acked < d.log.size()) d.log[d.log_acked++].status = st;
  }

  // An injected transfer takes the receiver like a device would (header, then its beats).
  void drive_inject(unsigned t) {
    Dev &r = dev(t);
    if (r.inject.empty() || (r.owner != -1 && r.owner != -3) || r.m->rx_valid || !r.m->rx_ready) return;
    RsInject &in = r.inject.front();
    const RsLinkMsg &g = in.msg;
    Vrs_dev &m = *r.m;
    bool last = rs_link_rx_beat(m, g.kind, g.addr, g.bytes, g.dtype, g.op, g.notify, g.data.data(), g.data.size(),
                                in.beat);
    if (in.beat == 0) r.ack_to.push_back(-1);
    r.owner = -3;
    in.beat++;
    if (last) {
      r.owner = -1;
      r.inject.pop_front();
    }
  }

  void memory_edge(Dev &d) {
    Vrs_dev &m = *d.m;
    if (m.mem_rsp_valid) d.rsp.pop_front();
    if (!(m.mem_req_valid && m.mem_req_ready)) return;
    uint64_t a = m.mem_req_addr;
    if (a % 4 || a + 4 > d.mem_bytes) throw std::runtime_error("rs_dev: memory access outside memory at " + std::to_string(a));
    if (m.mem_req_we) {
      for (int k = 0; k < 4; k++)
        if (m.mem_req_wstrb >> k & 1) d.mem[a + k] = (uint8_t)(m.mem_req_wdata >> (8 * k));
    } else {
      uint32_t v;
      std::memcpy(&v, &d.mem[a], 4);  // little-endian host
      uint64_t lat = 1 + (max_lat > 1 ? (uint64_t)(rnd01() * max_lat) % max_lat : 0);
      uint64_t due = cycles + lat;
      if (!d.rsp.empty() && d.rsp.back().first > due) due = d.rsp.back().first;  // in order
      d.rsp.emplace_back(due, v);
    }
  }
};

#endif
