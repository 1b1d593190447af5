/* Compiled half of the fast testbench path (tb/fast/): DPI-C functions the SV harness
 * (tb/fast/nic_fast_top.sv) calls once per beat, working on one block of memory shared
 * with Python (tb/fast/shared.py maps the same memfd and views it with numpy).
 *
 * The block holds a header of 64-bit words (layout: tb/fast/shared.py, the H_* indices
 * below must match), the DMA regions (host and device memory: the very bytes HostMemory
 * and DeviceMemory read and write), an RX frame queue, a CSR command queue, a DMA log
 * (completed write bursts, failed accesses) and a TX frame queue (frames the NIC sent). Python only runs while the simulator is paused,
 * so there is no locking: whoever runs owns the memory.
 *
 * Several harness instances share this code (the cluster testbench has one per NIC): each
 * has its own block and state (`FmInst`), and every DPI call names its instance.
 *
 * Standalone mode (no Python at all, for the speed ceiling): fm_standalone_open() maps an
 * image file that Python prepared, and fm_standalone_poll() is a tiny C driver that recycles
 * completed buffers the way the Python driver does, until the wanted number of frames has
 * completed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "svdpi.h"
#include "dma_formats.h" /* generated from rtl/formats/dma_formats.toml */

extern "C" {

#define FM_MAGIC 0x314d454d5453414eULL /* "NASTMEM1" */
#define FM_MAX_REGIONS 8
#define FM_MAX_ERR 8

enum {
    H_MAGIC = 0, H_VERSION = 1, H_TOTAL = 2, H_NREG = 3,
    H_REG = 4,          /* FM_MAX_REGIONS x (base, size, offset): 4 .. 27 */
    H_NERR = 28,
    H_ERR = 29,         /* FM_MAX_ERR x (addr, len): 29 .. 44 */
    H_RX_PROD = 48, H_RX_CONS = 49, H_RX_CAP = 50, H_RX_TAB = 51, H_RX_DATA = 52,
    H_RX_DATA_SIZE = 53, H_RX_IDLE = 54, H_RX_SEED = 55,
    H_CSR_PROD = 64, H_CSR_DONE = 65, H_CSR_CAP = 66, H_CSR_TAB = 67,
    H_LOG_PROD = 72, H_LOG_CAP = 73, H_LOG_TAB = 74, H_LOG_LOST = 75, H_LOG_OK = 76,
    H_ST_WBEATS = 80, H_ST_RBEATS = 81, H_ST_RXBEATS = 82, H_ST_CSR = 83, H_ST_WBURSTS = 84,
    H_ST_RBURSTS = 85,
    /* standalone driver (written by Python's image builder, read here) */
    H_SA_FRAMES = 96, H_SA_CQ_BASE = 97, H_SA_CQ_LOG2 = 98, H_SA_HDR_BASE = 99,
    H_SA_HDR_LOG2 = 100, H_SA_PAY_BASE = 101, H_SA_PAY_LOG2 = 102, H_SA_HDR_SW_REG = 103,
    H_SA_PAY_SW_REG = 104, H_SA_CQ_SW_REG = 105, H_SA_HDR_BUFS = 106, H_SA_PAY_BUFS = 107,
    H_SA_NHDR = 108, H_SA_NPAY = 109, H_SA_HDR_SW = 110, H_SA_PAY_SW = 111,
    /* results written here */
    H_SA_DONE = 112, H_SA_CPLS = 113, H_SA_T0_NS = 114, H_SA_T1_NS = 115, H_SA_CYC0 = 116,
    H_SA_CYC1 = 117, H_SA_CQ_SW = 118, H_SA_BAD = 119,
    H_SA_RX_TOTAL = 120, H_SA_RX_PERIOD = 121, H_SA_INFLIGHT = 122, H_SA_CPU0_NS = 123,
    H_SA_CPU1_NS = 124, H_SA_START_CYC = 125, H_SA_LAST_CPL_CYC = 126, H_SA_LAST_CPLS = 127,
    /* TX frame queue: PROD and WP are written here, CONS and RP by Python */
    H_TX_PROD = 136, H_TX_CONS = 137, H_TX_CAP = 138, H_TX_TAB = 139, H_TX_DATA = 140,
    H_TX_DATA_SIZE = 141, H_TX_WP = 142, H_TX_RP = 143, H_ST_TXBEATS = 144,
    H_WORDS = 512
};

/* One harness instance (tb/fast/nic_fast_node.sv, its INST parameter): its own shared block
 * and its own position in it. nic_fast_top has one (instance 0); the cluster testbench
 * (tb/cluster/cluster_top.sv) one per NIC. Every DPI call names its instance. */
#define FM_MAX_INST 16

struct FmInst {
    uint8_t *M;            /* the shared block, NULL until attached */
    uint64_t *H;           /* its header */
    size_t M_size;
    uint64_t rx_idx, rx_pos, rx_rng, csr_issued;
    uint64_t w_lo, w_hi;   /* span of the write burst in progress */
    int w_err;
    int r_err[16];         /* per read burst slot of the harness (bursts may interleave) */
    uint64_t r_addr0[16];
    uint64_t tx_start;     /* running byte position of the TX frame in progress */
};

static FmInst fm_inst[FM_MAX_INST];

static void fm_die(const char *msg) {
    fprintf(stderr, "fastmem: %s\n", msg);
    fflush(stderr);
    abort();
}

static FmInst *fm_get(int inst) {
    if (inst < 0 || inst >= FM_MAX_INST) fm_die("harness instance out of range (FM_MAX_INST)");
    return &fm_inst[inst];
}

static void fm_map(FmInst *f, int fd) {
    if (f->M) {
        munmap(f->M, f->M_size);
        f->M = NULL;
        f->H = NULL;
    }
    uint64_t *hdr = (uint64_t *)mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (hdr == MAP_FAILED) fm_die("mmap of the header failed");
    if (hdr[H_MAGIC] != FM_MAGIC) fm_die("bad magic in the shared block");
    f->M_size = hdr[H_TOTAL];
    munmap(hdr, 4096);
    f->M = (uint8_t *)mmap(NULL, f->M_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (f->M == MAP_FAILED) {
        f->M = NULL;
        fm_die("mmap of the shared block failed");
    }
    f->H = (uint64_t *)f->M;
    f->rx_idx = f->H[H_RX_CONS];
    f->rx_pos = 0;
    f->rx_rng = f->H[H_RX_SEED] | 1;
    f->csr_issued = f->H[H_CSR_DONE];
    f->w_lo = UINT64_MAX;
    f->w_hi = 0;
    f->w_err = 0;
    memset(f->r_err, 0, sizeof f->r_err);
    f->tx_start = f->H[H_TX_WP];
}

/* Python writes (generation << 16) | fd to the harness's fm_attach input. */
int fm_dpi_attach(int inst, int token) {
    int fd = token & 0xffff;
    fm_map(fm_get(inst), fd);
    return 1;
}

static inline uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* ------------------------------------------------------------------------ address decode */
/* Pointer to [addr, addr+n) or NULL with *resp = 2 (SLVERR). Unmapped and injected-error
 * accesses both answer SLVERR, as cocotbext-axi's AxiSlave does for the per-beat path. */
static uint8_t *fm_decode(FmInst *f, uint64_t addr, uint64_t n, int *resp) {
    uint64_t *H = f->H;
    uint64_t nreg = H[H_NREG];
    for (uint64_t i = 0; i < nreg && i < FM_MAX_REGIONS; i++) {
        uint64_t base = H[H_REG + 3 * i], size = H[H_REG + 3 * i + 1];
        if (addr >= base && addr + n <= base + size) {
            uint64_t nerr = H[H_NERR];
            for (uint64_t e = 0; e < nerr && e < FM_MAX_ERR; e++) {
                uint64_t ea = H[H_ERR + 2 * e], el = H[H_ERR + 2 * e + 1];
                if (addr < ea + el && ea < addr + (n ? n : 1)) {
                    *resp = 2;
                    return NULL;
                }
            }
            return f->M + H[H_REG + 3 * i + 2] + (addr - base);
        }
    }
    *resp = 2;
    return NULL;
}

static void fm_log(FmInst *f, uint64_t addr, uint64_t len, uint64_t kind) {
    uint64_t *H = f->H;
    uint64_t cap = H[H_LOG_CAP], prod = H[H_LOG_PROD];
    if (!cap) return;
    uint64_t *e = (uint64_t *)(f->M + H[H_LOG_TAB]) + 4 * (prod % cap);
    e[0] = addr;
    e[1] = len;
    e[2] = kind;
    e[3] = 0;
    H[H_LOG_PROD] = prod + 1;
}

/* ------------------------------------------------------------------------ DMA writes */
/* One W beat: bus word at `bus_addr` (aligned to `bus_bytes`), `strb` selects the lanes.
 * `last` ends the burst: its span is logged (kind 0 = write OK, 0x200 = write SLVERR).
 * Returns the beat's response (0 OKAY, 2 SLVERR). */
int fm_wbeat(int inst, long long bus_addr, const svBitVecVal *data, const svBitVecVal *strb,
             int bus_bytes, int last) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    int resp = 0;
    if (!f->M) return 2;
    const uint8_t *d = (const uint8_t *)data;
    const uint8_t *s = (const uint8_t *)strb;
    int first = -1, lastlane = -1, full = 1;
    for (int i = 0; i < bus_bytes; i++) {
        if (s[i >> 3] >> (i & 7) & 1) {
            if (first < 0) first = i;
            lastlane = i;
        } else {
            full = 0;
        }
    }
    H[H_ST_WBEATS]++;
    if (first >= 0) {
        uint64_t lo = (uint64_t)bus_addr + first, n = (uint64_t)(lastlane - first + 1);
        uint8_t *p = fm_decode(f, lo, n, &resp);
        if (p) {
            if (full) {
                memcpy(p, d, bus_bytes);
            } else {
                for (int i = first; i <= lastlane; i++)
                    if (s[i >> 3] >> (i & 7) & 1) p[i - first] = d[i];
            }
        } else {
            f->w_err = resp;
        }
        if (lo < f->w_lo) f->w_lo = lo;
        if (lo + n > f->w_hi) f->w_hi = lo + n;
    }
    if (last) {
        H[H_ST_WBURSTS]++;
        if (f->w_hi > f->w_lo) {
            if (f->w_err) fm_log(f, f->w_lo, f->w_hi - f->w_lo, 0x200);
            else if (H[H_LOG_OK]) fm_log(f, f->w_lo, f->w_hi - f->w_lo, 0);
        }
        f->w_lo = UINT64_MAX;
        f->w_hi = 0;
        f->w_err = 0;
    }
    return resp;
}

/* ------------------------------------------------------------------------ DMA reads */
/* One R beat: bytes [lo, hi) of the bus word at `bus_addr` (lanes outside read as zero).
 * `first`/`last` mark the burst, `slot` (0..15) names it among the harness's queued bursts,
 * whose beats may interleave; a failed burst is logged (kind 0x201 = read SLVERR). */
int fm_rbeat(int inst, long long bus_addr, long long lo, long long hi, svBitVecVal *data,
             int bus_bytes, int first, int last, int slot) {
    FmInst *f = fm_get(inst);
    int resp = 0;
    uint8_t *d = (uint8_t *)data;
    memset(d, 0, (size_t)((bus_bytes + 3) & ~3));
    if (!f->M) return 2;
    f->H[H_ST_RBEATS]++;
    slot &= 15;
    if (first) {
        f->r_addr0[slot] = (uint64_t)lo;
        f->r_err[slot] = 0;
    }
    uint8_t *p = fm_decode(f, (uint64_t)lo, (uint64_t)(hi - lo), &resp);
    if (p) memcpy(d + (lo - bus_addr), p, (size_t)(hi - lo));
    else f->r_err[slot] = resp;
    if (last) {
        f->H[H_ST_RBURSTS]++;
        if (f->r_err[slot]) fm_log(f, f->r_addr0[slot], (uint64_t)hi - f->r_addr0[slot], 0x201);
    }
    return resp;
}

/* ------------------------------------------------------------------------ RX stream */
/* Next MAC beat. Returns bit0 valid, bit1 last, bit2 tuser (bad FCS), bit3 more queued.
 * Called when the harness's output register is free; an idle (random or empty) cycle
 * returns without valid. */
int fm_rx_beat(int inst, svBitVecVal *data, long long *keep, int nbytes) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    if (!f->M) return 0;
    uint64_t prod = H[H_RX_PROD];
    if (f->rx_idx == prod) return 0;
    uint64_t thr = H[H_RX_IDLE];
    if (thr && (xorshift64(&f->rx_rng) >> 32) < thr) return 8;
    uint64_t cap = H[H_RX_CAP];
    const uint64_t *e = (const uint64_t *)(f->M + H[H_RX_TAB]) + 2 * (f->rx_idx % cap);
    uint64_t off = e[0], len = e[1] & 0xffffffffu, flags = e[1] >> 32;
    if (off + len > H[H_RX_DATA_SIZE]) fm_die("RX frame outside the frame area");
    uint64_t n = len - f->rx_pos;
    if (n > (uint64_t)nbytes) n = (uint64_t)nbytes;
    uint8_t *d = (uint8_t *)data;
    memset(d, 0, (size_t)((nbytes + 3) & ~3));
    memcpy(d, f->M + H[H_RX_DATA] + off + f->rx_pos, n);
    *keep = n >= 64 ? -1LL : (long long)((1ULL << n) - 1);
    f->rx_pos += n;
    H[H_ST_RXBEATS]++;
    int r = 1;
    if (f->rx_pos >= len) {
        r |= 2;
        if (flags & 1) r |= 4;
        f->rx_idx++;
        f->rx_pos = 0;
        H[H_RX_CONS] = f->rx_idx;
    }
    if (f->rx_idx != H[H_RX_PROD]) r |= 8;
    return r;
}

/* ------------------------------------------------------------------------ TX stream */
/* 1 when the TX queue can take one more beat of `nbytes`: a free frame-table entry and
 * room in the data ring (bytes Python has not released yet are kept). */
int fm_tx_room(int inst, int nbytes) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    if (!f->M || !H[H_TX_CAP]) return 0;
    if (H[H_TX_WP] + (uint64_t)nbytes - f->tx_start > H[H_TX_DATA_SIZE])
        fm_die("a TX frame is longer than the TX data ring (FastNicTb tx_data_bytes)");
    if (H[H_TX_PROD] - H[H_TX_CONS] >= H[H_TX_CAP]) return 0;
    return H[H_TX_WP] + (uint64_t)nbytes - H[H_TX_RP] <= H[H_TX_DATA_SIZE];
}

/* Reset of the harness: the beats of a frame cut short are dropped (whole frames stay). */
void fm_tx_reset(int inst) {
    FmInst *f = fm_get(inst);
    if (!f->M) return;
    f->H[H_TX_WP] = f->tx_start;
}

/* One beat the harness took from m_axis_tx (the caller checked fm_tx_room the cycle before):
 * its tkeep bytes are appended to the frame in progress; `last` queues the frame as
 * (running start, length) for Python. Returns the frame's length so far. */
int fm_tx_beat(int inst, const svBitVecVal *data, long long keep, int nbytes, int last) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    if (!f->M || !H[H_TX_CAP]) return 0;
    const uint8_t *d = (const uint8_t *)data;
    uint8_t *ring = f->M + H[H_TX_DATA];
    uint64_t size = H[H_TX_DATA_SIZE], wp = H[H_TX_WP];
    for (int i = 0; i < nbytes; i++) {
        if (!((unsigned long long)keep >> i & 1)) continue;
        ring[wp % size] = d[i];
        wp++;
    }
    if (wp - H[H_TX_RP] > size) fm_die("TX frame queue overrun (the harness ignored fm_tx_room)");
    H[H_TX_WP] = wp;
    H[H_ST_TXBEATS]++;
    uint64_t len = wp - f->tx_start;
    if (last) {
        uint64_t prod = H[H_TX_PROD];
        uint64_t *e = (uint64_t *)(f->M + H[H_TX_TAB]) + 2 * (prod % H[H_TX_CAP]);
        e[0] = f->tx_start;
        e[1] = len;
        H[H_TX_PROD] = prod + 1;
        f->tx_start = wp;
    }
    return (int)len;
}

/* ------------------------------------------------------------------------ CSR commands */
int fm_csr_next(int inst, int *addr, int *wdata, int *we) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    if (!f->M || f->csr_issued == H[H_CSR_PROD]) return 0;
    const uint64_t *e = (const uint64_t *)(f->M + H[H_CSR_TAB]) + 4 * (f->csr_issued % H[H_CSR_CAP]);
    *addr = (int)e[0];
    *wdata = (int)e[1];
    *we = (int)e[2];
    f->csr_issued++;
    return 1;
}

void fm_csr_done(int inst, int rdata, int resp) {
    FmInst *f = fm_get(inst);
    uint64_t *H = f->H;
    if (!f->M) return;
    uint64_t done = H[H_CSR_DONE];
    uint64_t *e = (uint64_t *)(f->M + H[H_CSR_TAB]) + 4 * (done % H[H_CSR_CAP]);
    e[3] = (uint64_t)(uint32_t)rdata | ((uint64_t)(resp & 3) << 32) | (1ULL << 40);
    H[H_CSR_DONE] = done + 1;
    H[H_ST_CSR]++;
}

/* ------------------------------------------------------------------------ standalone */
static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
static uint64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* The standalone run has one harness: instance 0. */
static void sa_csr_write(uint32_t addr, uint32_t value) {
    uint64_t *H = fm_inst[0].H;
    uint8_t *M = fm_inst[0].M;
    uint64_t prod = H[H_CSR_PROD], cap = H[H_CSR_CAP];
    if (prod - H[H_CSR_DONE] >= cap) fm_die("standalone: CSR queue full");
    uint64_t *e = (uint64_t *)(M + H[H_CSR_TAB]) + 4 * (prod % cap);
    e[0] = addr;
    e[1] = value;
    e[2] = 1;
    e[3] = 0;
    H[H_CSR_PROD] = prod + 1;
}

/* Map the image file named by +fastmem_image=<path>; returns 1 when standalone. */
int fm_standalone_open(void) {
    const char *path = NULL;
    static char buf[4096];
    /* Verilator: plusargs through the command line are read with $value$plusargs in SV; the
     * path comes in through the environment to keep this file simulator-independent. */
    path = getenv("FASTMEM_IMAGE");
    if (!path || !*path) return 0;
    snprintf(buf, sizeof buf, "%s", path);
    int fd = open(buf, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "fastmem: cannot open %s: %s\n", buf, strerror(errno));
        abort();
    }
    fm_map(&fm_inst[0], fd);
    close(fd);
    return 1;
}

/* The Python driver's bulk refill in C: consume completions (generation bit), give each
 * used header/payload buffer straight back to its ring, ring the doorbells. Returns 1 when
 * the wanted number of frames has completed. `cycle` is the harness's cycle counter. */
int fm_standalone_poll(long long cycle) {
    FmInst *f = &fm_inst[0];
    uint64_t *H = f->H;
    uint8_t *M = f->M;
    if (!M) return 1;
    if (!H[H_SA_T0_NS] && H[H_ST_RXBEATS]) {
        H[H_SA_T0_NS] = now_ns();
        H[H_SA_CPU0_NS] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        H[H_SA_CYC0] = (uint64_t)cycle;
    }
    uint64_t cq_log2 = H[H_SA_CQ_LOG2], cq_size = 1ULL << cq_log2;
    uint64_t sw = H[H_SA_CQ_SW];
    uint8_t *cq = M + 0;
    int resp = 0;
    cq = fm_decode(f, H[H_SA_CQ_BASE], RX_CPL_BYTES * cq_size, &resp);
    uint8_t *hring = fm_decode(f, H[H_SA_HDR_BASE], (uint64_t)RX_DESC_BYTES << H[H_SA_HDR_LOG2], &resp);
    uint8_t *pring = fm_decode(f, H[H_SA_PAY_BASE], (uint64_t)RX_DESC_BYTES << H[H_SA_PAY_LOG2], &resp);
    if (!cq || !hring || !pring) fm_die("standalone: rings not mapped");
    const uint64_t *hbufs = (const uint64_t *)(M + H[H_SA_HDR_BUFS]);
    const uint64_t *pbufs = (const uint64_t *)(M + H[H_SA_PAY_BUFS]);
    uint64_t hsw = H[H_SA_HDR_SW], psw = H[H_SA_PAY_SW];
    uint64_t hmask = (1ULL << H[H_SA_HDR_LOG2]) - 1, pmask = (1ULL << H[H_SA_PAY_LOG2]) - 1;
    int consumed = 0, reposted_h = 0, reposted_p = 0;
    /* The bytes used below are single-byte groups and little-endian fields (x86, like the bus). */
    static_assert(RX_CPL_GEN_LEN == 1 && RX_CPL_SOP_LEN == 1 && RX_CPL_SOP_OFF == RX_CPL_EOP_OFF
                  && RX_CPL_SOP_OFF == RX_CPL_HDR_VALID_OFF && RX_CPL_SOP_OFF == RX_CPL_PAY_VALID_OFF,
                  "fm_standalone_poll reads the completion's flags as one byte");
    static_assert(RX_CPL_PAY_BUF_ID_LEN == 2 && RX_CPL_HDR_BUF_ID_LEN == 2 && RX_DESC_ADDR_LEN == 8
                  && RX_DESC_BUF_ID_LEN == 2, "fm_standalone_poll copies 16-bit ids and 64-bit addresses");
    for (;;) {
        uint8_t *c = cq + RX_CPL_BYTES * (sw & (cq_size - 1));
        unsigned expect_gen = 1 - ((sw >> cq_log2) & 1);
        if (((c[RX_CPL_GEN_OFF] & RX_CPL_GEN_MASK) != 0) != expect_gen) break;
        uint16_t pay_id, hdr_id;
        memcpy(&pay_id, c + RX_CPL_PAY_BUF_ID_OFF, 2);
        memcpy(&hdr_id, c + RX_CPL_HDR_BUF_ID_OFF, 2);
        uint8_t flags = c[RX_CPL_SOP_OFF];
        sw = (sw + 1) & 0xffff;
        consumed++;
        if ((flags & RX_CPL_SOP_MASK) && (flags & RX_CPL_HDR_VALID_MASK)) {
            if (hdr_id >= H[H_SA_NHDR]) { H[H_SA_BAD]++; continue; }
            uint8_t *dsc = hring + RX_DESC_BYTES * (hsw & hmask);
            memset(dsc, 0, RX_DESC_BYTES);
            memcpy(dsc + RX_DESC_ADDR_OFF, &hbufs[hdr_id], 8);
            memcpy(dsc + RX_DESC_BUF_ID_OFF, &hdr_id, 2);
            hsw = (hsw + 1) & 0xffff;
            reposted_h++;
        }
        if (flags & RX_CPL_PAY_VALID_MASK) {
            if (pay_id >= H[H_SA_NPAY]) { H[H_SA_BAD]++; continue; }
            uint8_t *dsc = pring + RX_DESC_BYTES * (psw & pmask);
            memset(dsc, 0, RX_DESC_BYTES);
            memcpy(dsc + RX_DESC_ADDR_OFF, &pbufs[pay_id], 8);
            memcpy(dsc + RX_DESC_BUF_ID_OFF, &pay_id, 2);
            psw = (psw + 1) & 0xffff;
            reposted_p++;
        }
        if (flags & RX_CPL_EOP_MASK) H[H_SA_CPLS]++;
    }
    if (consumed) {
        H[H_SA_CQ_SW] = sw;
        H[H_SA_HDR_SW] = hsw;
        H[H_SA_PAY_SW] = psw;
        if (reposted_h) sa_csr_write((uint32_t)H[H_SA_HDR_SW_REG], (uint32_t)hsw);
        if (reposted_p) sa_csr_write((uint32_t)H[H_SA_PAY_SW_REG], (uint32_t)psw);
        sa_csr_write((uint32_t)H[H_SA_CQ_SW_REG], (uint32_t)sw);
    }
    /* Traffic starts once the bring-up CSR program has run, plus 500 cycles for the
     * descriptor prefetch (the Python bench waits 2 us). */
    if (!H[H_SA_START_CYC]) {
        if (H[H_CSR_DONE] == H[H_CSR_PROD]) {
            H[H_SA_START_CYC] = (uint64_t)cycle + 500;
            H[H_SA_LAST_CPL_CYC] = (uint64_t)cycle + 500;
        }
        return 0;
    }
    if ((uint64_t)cycle < H[H_SA_START_CYC]) return 0;
    /* Frame source: replay the image's PERIOD frames until RX_TOTAL were queued, keeping at
     * most INFLIGHT frames queued and not yet completed (as the Python bench does); table
     * entries below PERIOD were written by Python. */
    {
        uint64_t cap = H[H_RX_CAP], period = H[H_SA_RX_PERIOD];
        uint64_t *tab = (uint64_t *)(M + H[H_RX_TAB]);
        uint64_t prod = H[H_RX_PROD];
        while (prod < H[H_SA_RX_TOTAL] && prod - H[H_SA_CPLS] < H[H_SA_INFLIGHT]) {
            if (prod >= period) {
                uint64_t src = (prod - period) % cap, dst = prod % cap;
                tab[2 * dst] = tab[2 * src];
                tab[2 * dst + 1] = tab[2 * src + 1];
            }
            prod++;
        }
        H[H_RX_PROD] = prod;
    }
    /* A frame lost (dropped by the NIC) would stall the run: give up after 1M idle cycles. */
    if (H[H_SA_CPLS] != H[H_SA_LAST_CPLS]) {
        H[H_SA_LAST_CPLS] = H[H_SA_CPLS];
        H[H_SA_LAST_CPL_CYC] = (uint64_t)cycle;
    } else if ((uint64_t)cycle - H[H_SA_LAST_CPL_CYC] > 1000000) {
        H[H_SA_DONE] = 2;
        fprintf(stderr, "fastmem standalone: no completion for 1M cycles (%llu of %llu frames)\n",
                (unsigned long long)H[H_SA_CPLS], (unsigned long long)H[H_SA_FRAMES]);
        return 1;
    }
    if (H[H_SA_CPLS] >= H[H_SA_FRAMES]) {
        H[H_SA_T1_NS] = now_ns();
        H[H_SA_CPU1_NS] = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        H[H_SA_CYC1] = (uint64_t)cycle;
        H[H_SA_DONE] = 1;
        msync(M, 4096, MS_SYNC);
        return 1;
    }
    return 0;
}

}  // extern "C"
