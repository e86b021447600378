// uio_device.cpp — emulated UIO devices: N linked verilated rs_dev blocks in this process, each
// offered to other processes as a Linux UIO device would be (firmware/include/ncl/ncl_uio.h).
//
// Usage: rs_uio_device DIR N. For rank r it makes DIR/uio<r> (the "device file": page 0 its map 0,
// the register mailbox; from page 1 its map 1, the block's memory, shared with the block),
// DIR/uio<r>.sysfs/maps/map{0,1}/size as the kernel's sysfs has them, and DIR/uio<r>.irq, a Unix
// seqpacket socket that speaks UIO's interrupt protocol (the client writes 4 bytes to enable the
// line; the device sends the interrupt count, 4 bytes, when the line is high and enabled, and
// disables it until the next enable, as uio_pdrv_genirq does). Prints "ready" on stdout when all
// exist; serves until SIGTERM, stdin's end or its parent's end.
//
// The mailbox cannot be ordinary registers: this process does not see another's stores. Each
// register access is a request the client posts (ncl_uio_mailbox); this loop performs them in
// order on the block's bus (a read's data back in its slot), and between requests clocks the
// blocks while they have work. Time: the device's clock is the cycles ticked (1 ns each) plus,
// while nothing is left to do, IDLE_NS per register access the firmware makes: idle time passes
// as the firmware looks, as in test_mmio_rtl's hooks, so timeouts are in device time and a
// client the host deschedules does not see a peer time out.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <ncl/ncl_uio.h>

#include "mmio_world.h"
#include "rs_dev_harness.hpp"

namespace {

constexpr uint64_t IDLE_NS = 500;  // device time one register access moves an idle device's clock
constexpr unsigned BATCH = 64;     // cycles ticked between looks at the mailboxes while busy

volatile sig_atomic_t g_stop = 0;
void on_term(int) { g_stop = 1; }

struct Port {
  ncl_uio_mailbox *box = nullptr;
  uint8_t *file = nullptr;
  size_t file_bytes = 0;
  int listen_fd = -1, irq_fd = -1;
  bool enabled = false;
  uint32_t irq_count = 0;
};

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "rs_uio_device: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

void write_text(const std::string &path, const std::string &text) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) die("cannot write " + path);
}

int listen_on(const std::string &path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) die("socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, (sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0) die("cannot listen on " + path);
  return fd;
}

// The client's enables; a new client replaces an old one.
void irq_io(Port &p) {
  int c = accept4(p.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (c >= 0) {
    if (p.irq_fd >= 0) close(p.irq_fd);
    p.irq_fd = c;
    p.enabled = false;
  }
  if (p.irq_fd < 0) return;
  uint32_t v;
  ssize_t got;
  while ((got = recv(p.irq_fd, &v, sizeof v, 0)) == (ssize_t)sizeof v) p.enabled = v != 0;
  if (got == 0) {  // the client closed
    close(p.irq_fd);
    p.irq_fd = -1;
  }
}

// Performs every request posted so far; returns how many.
unsigned serve(RsDevSystem &sys, unsigned r, Port &p, uint64_t &idle_ns) {
  ncl_uio_mailbox *b = p.box;
  uint32_t posted = __atomic_load_n(&b->posted, __ATOMIC_ACQUIRE), done = b->done;
  unsigned n = 0;
  for (; done != posted; done++, n++) {
    ncl_uio_slot &s = b->slot[done % NCL_UIO_SLOTS];
    uint32_t op = s.op_off >> 16, off = s.op_off & 0xFFFFu;
    if (sys.quiet()) idle_ns += IDLE_NS;
    int err = 0;
    if (op == NCL_UIO_OP_READ)
      s.value = sys.reg_read(r, off, &err);
    else if (op == NCL_UIO_OP_WRITE)
      err = sys.reg_write(r, off, s.value);
    else
      err = 1;
    s.err = (uint32_t)err;
    __atomic_store_n(&b->done, done + 1, __ATOMIC_RELEASE);
  }
  return n;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rs_uio_device DIR N\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int n = std::atoi(argv[2]);
  if (n < 1 || n > MMIO_MAXR) {
    std::fprintf(stderr, "rs_uio_device: N must be 1..%d\n", MMIO_MAXR);
    return 2;
  }
  signal(SIGTERM, on_term);
  signal(SIGPIPE, SIG_IGN);
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  auto vctx = std::make_unique<VerilatedContext>();
  RsDevSystem sys(vctx.get(), (unsigned)n, MMIO_MEM_BYTES);
  std::vector<Port> ports((size_t)n);
  for (int r = 0; r < n; r++) {
    Port &p = ports[(size_t)r];
    const std::string base = dir + "/uio" + std::to_string(r);
    int fd = open(base.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    p.file_bytes = page + MMIO_MEM_BYTES;
    if (fd < 0 || ftruncate(fd, (off_t)p.file_bytes) != 0) die("cannot create " + base);
    void *m = mmap(nullptr, p.file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die("cannot map " + base);
    close(fd);
    p.file = (uint8_t *)m;
    p.box = (ncl_uio_mailbox *)m;
    sys.attach_memory((unsigned)r, p.file + page);  // map 1: the block's memory itself
    const std::string maps = base + ".sysfs/maps";
    for (const std::string &d : {base + ".sysfs", maps, maps + "/map0", maps + "/map1"})
      if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) die("cannot make " + d);
    char size[32];
    std::snprintf(size, sizeof size, "0x%zx\n", page);
    write_text(maps + "/map0/size", size);
    std::snprintf(size, sizeof size, "0x%x\n", (unsigned)MMIO_MEM_BYTES);
    write_text(maps + "/map1/size", size);
    p.listen_fd = listen_on(base + ".irq");
    p.box->magic = NCL_UIO_MAILBOX_MAGIC;
    __atomic_store_n(&p.box->alive, 1u, __ATOMIC_RELEASE);
  }
  std::printf("ready\n");
  std::fflush(stdout);

  const pid_t parent = getppid();
  uint64_t idle_ns = 0;
  for (uint64_t loop = 0; !g_stop; loop++) {
    unsigned served = 0;
    for (int r = 0; r < n; r++) served += serve(sys, (unsigned)r, ports[(size_t)r], idle_ns);
    if (!served) {
      if (!sys.quiet()) {
        for (unsigned c = 0; c < BATCH && !sys.quiet(); c++) sys.tick();
      } else {
        timespec nap{0, 20000};  // nothing to do until a client asks: let it have the core
        nanosleep(&nap, nullptr);
      }
    }
    const uint64_t now = sys.cycles + idle_ns;
    for (int r = 0; r < n; r++) {
      Port &p = ports[(size_t)r];
      __atomic_store_n(&p.box->now_ns, now, __ATOMIC_RELEASE);
      if (loop % 16 == 0 || served) irq_io(p);
      if (p.irq_fd >= 0 && p.enabled && sys.top((unsigned)r).irq) {
        uint32_t count = ++p.irq_count;
        if (send(p.irq_fd, &count, sizeof count, MSG_NOSIGNAL) == (ssize_t)sizeof count) p.enabled = false;
      }
    }
    if (loop % 4096 == 0) {
      if (getppid() != parent) break;  // the test is gone
      pollfd in{0, POLLIN, 0};
      char c;
      if (poll(&in, 1, 0) > 0 && read(0, &c, 1) <= 0) break;  // stdin closed
    }
  }
  for (Port &p : ports) __atomic_store_n(&p.box->alive, 0u, __ATOMIC_RELEASE);
  return 0;
}
