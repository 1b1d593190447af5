// AXI4 protocol checker for one master/slave interface (testbench code, tb/checker/): watches
// the five channels, never drives them, and reports the first broken rule through
// nic_checker_pkg::violation. Rules (IHI 0022 H.c; the families of Arm's AXI protocol checker):
//
//   AXI4_AR_STABLE, AXI4_AW_STABLE, AXI4_W_STABLE  (master) VALID stays high until READY, the
//   AXI4_R_STABLE, AXI4_B_STABLE                   (slave)  payload stays stable (A3.2.1); of
//                  WDATA only the bytes WSTRB enables (the others carry no data)
//   AXI4_RESET_VALID  ARVALID, AWVALID, WVALID (master), RVALID, BVALID (slave) low while in
//                     reset and in the first cycle after it (A3.1.2)
//   AXI4_X            no X/Z on VALID/READY out of reset, nor on a valid channel's control
//                     fields: only in a 4-state simulator (Verilator is 2-state: see
//                     docs/verification.md for what stands in for it there)
//   AXI4_AR_LEN, AXI4_AW_LEN      at most MAX_BURST beats; at most 16 for FIXED and WRAP; WRAP
//                                 is 2, 4, 8 or 16 beats (A3.4.1)
//   AXI4_AR_SIZE, AXI4_AW_SIZE    2^AxSIZE bytes no wider than the bus
//   AXI4_AR_BURST, AXI4_AW_BURST  not the reserved burst type; WRAP starts aligned to its size
//   AXI4_AR_4K, AXI4_AW_4K        an INCR burst does not cross a 4 KiB boundary
//   AXI4_AR_CACHE, AXI4_AW_CACHE  AxCACHE[3:2] are 0 when AxCACHE[1] (modifiable) is 0 (A4.4)
//   AXI4_W_LAST   WLAST exactly on the last beat of the burst the beat belongs to. W has no ID:
//                 bursts are taken in AW order (no write interleaving in AXI4), and W beats may
//                 come before, with or after their AW: they wait here until it is known
//   AXI4_W_STRB   WSTRB only on the byte lanes the beat addresses, from the AW's address, size
//                 and burst type (A3.4.1 formulas, including an unaligned first beat and
//                 narrow transfers)
//   AXI4_B_UNEXPECTED  (slave) BVALID only for a BID with a burst whose AW and last W beat have
//                      both been handshaken and that has had no response yet (A3.3.1)
//   AXI4_R_UNEXPECTED  (slave) RVALID only for an RID with a read outstanding
//   AXI4_R_LAST        (slave) RLAST exactly on the last beat of the oldest outstanding read of
//                      that ID (data of one ID comes back in order: A5.3)
//   CHECKER_CAPACITY   more outstanding transactions than this checker tracks (AW_DEPTH,
//                      W_DEPTH, R_DEPTH): not a protocol rule; raise the parameter
// Not checked: exclusive accesses (AxLOCK) and EXOKAY, QoS/region/user signals (not on
// nic_top's port), low-power interface, response timeouts (the tests' own time limits do).
//
// Cost per cycle in Verilator: the handshake checks, a few counters, and array accesses by
// index (per-ID read FIFOs, the AW ring, the W beat FIFO); nothing loops over IDs or entries
// except in reset. Internal state is neither traced nor covered.
// Reset (`rst`, synchronous): every transaction is forgotten; `after_rst`: the previous cycle
// was in reset (the reset rule's window).
module axi4_checker
  import nic_checker_pkg::*;
#(
  parameter int unsigned DATA_W    = 128,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned ID_W      = 5,
  parameter int unsigned MAX_BURST = 256,
  parameter int unsigned AW_DEPTH  = 64,     // AW bursts tracked at once (power of two)
  parameter int unsigned W_DEPTH   = 1024,   // W beats waiting for their AW's check (power of two)
  parameter int unsigned R_DEPTH   = 64,     // outstanding reads per ID (power of two)
  parameter string       MASTER    = "master",
  parameter string       SLAVE     = "slave",
  parameter string       GROUP     = "dma",  // `nicsim waves --group` of this interface
  localparam int unsigned DB       = DATA_W / 8
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  after_rst,
  input  longint unsigned       cycle,
  input  longint unsigned       period_ns,
  // AR
  input  logic [ID_W-1:0]       arid,
  input  logic [ADDR_W-1:0]     araddr,
  input  logic [7:0]            arlen,
  input  logic [2:0]            arsize,
  input  logic [1:0]            arburst,
  input  logic                  arlock,
  input  logic [3:0]            arcache,
  input  logic [2:0]            arprot,
  input  logic                  arvalid,
  input  logic                  arready,
  // R
  input  logic [ID_W-1:0]       rid,
  input  logic [DATA_W-1:0]     rdata,
  input  logic [1:0]            rresp,
  input  logic                  rlast,
  input  logic                  rvalid,
  input  logic                  rready,
  // AW
  input  logic [ID_W-1:0]       awid,
  input  logic [ADDR_W-1:0]     awaddr,
  input  logic [7:0]            awlen,
  input  logic [2:0]            awsize,
  input  logic [1:0]            awburst,
  input  logic                  awlock,
  input  logic [3:0]            awcache,
  input  logic [2:0]            awprot,
  input  logic                  awvalid,
  input  logic                  awready,
  // W
  input  logic [DATA_W-1:0]     wdata,
  input  logic [DB-1:0]         wstrb,
  input  logic                  wlast,
  input  logic                  wvalid,
  input  logic                  wready,
  // B
  input  logic [ID_W-1:0]       bid,
  input  logic [1:0]            bresp,
  input  logic                  bvalid,
  input  logic                  bready,
  // handshakes seen (for the end-of-run summary)
  output longint unsigned       n_ar,
  output longint unsigned       n_aw,
  output longint unsigned       n_w,
  output longint unsigned       n_r,
  output longint unsigned       n_b
);
  /* verilator tracing_off */
  /* verilator coverage_off */
  localparam int unsigned LB  = $clog2(DB);
  localparam int unsigned NID = 1 << ID_W;
  localparam int unsigned AP  = $clog2(AW_DEPTH);
  localparam int unsigned WP  = $clog2(W_DEPTH);
  localparam int unsigned RP  = $clog2(R_DEPTH);
  localparam logic [1:0]  FIXED = 2'b00, INCR = 2'b01, WRAP = 2'b10;

  initial begin
    if (DB < 1 || (DB & (DB - 1)) != 0 || DB > 128) $fatal(1, "axi4_checker: DATA_W must be 8..1024, a power of two");
    if (MAX_BURST < 1 || MAX_BURST > 256) $fatal(1, "axi4_checker: MAX_BURST must be 1..256");
    if ((AW_DEPTH & (AW_DEPTH - 1)) != 0 || (W_DEPTH & (W_DEPTH - 1)) != 0 || (R_DEPTH & (R_DEPTH - 1)) != 0 ||
        AW_DEPTH < 2 || W_DEPTH < 2 || R_DEPTH < 2) begin
      $fatal(1, "axi4_checker: AW_DEPTH, W_DEPTH and R_DEPTH must be powers of two >= 2");
    end
  end

  typedef struct packed {
    logic [ID_W-1:0]   id;
    logic [ADDR_W-1:0] addr;
    logic [7:0]        len;
    logic [2:0]        size;
    logic [1:0]        burst;
    logic              lock;
    logic [3:0]        cache;
    logic [2:0]        prot;
  } ax_t;

  ax_t ar, aw;
  assign ar = '{id: arid, addr: araddr, len: arlen, size: arsize, burst: arburst, lock: arlock,
                cache: arcache, prot: arprot};
  assign aw = '{id: awid, addr: awaddr, len: awlen, size: awsize, burst: awburst, lock: awlock,
                cache: awcache, prot: awprot};

  logic ar_fire, aw_fire, w_fire, r_fire, b_fire;
  assign ar_fire = arvalid && arready;
  assign aw_fire = awvalid && awready;
  assign w_fire  = wvalid && wready;
  assign r_fire  = rvalid && rready;
  assign b_fire  = bvalid && bready;

  // ------------------------------------------------------------------ handshakes
  localparam int unsigned AXW = $bits(ax_t);
  localparam int unsigned WW  = DATA_W + DB + 1;
  localparam int unsigned RW  = ID_W + DATA_W + 3;
  localparam int unsigned BW  = ID_W + 2;
  logic           ar_wait, aw_wait, w_wait, r_wait, b_wait;
  logic           ar_drop, aw_drop, w_drop, r_drop, b_drop;
  logic [AXW-1:0] ar_held_bits, aw_held_bits;
  logic [WW-1:0]  w_held;
  logic [RW-1:0]  r_held;
  logic [BW-1:0]  b_held;
  ax_t            ar_held, aw_held;
  assign ar_held = ar_held_bits;
  assign aw_held = aw_held_bits;

  valid_hold_check #(.W(AXW)) u_ar (.clk, .rst, .valid(arvalid), .ready(arready), .payload(ar),
                                    .waiting(ar_wait), .drop(ar_drop), .held(ar_held_bits));
  valid_hold_check #(.W(AXW)) u_aw (.clk, .rst, .valid(awvalid), .ready(awready), .payload(aw),
                                    .waiting(aw_wait), .drop(aw_drop), .held(aw_held_bits));
  valid_hold_check #(.W(WW)) u_w (.clk, .rst, .valid(wvalid), .ready(wready), .payload({wdata, wstrb, wlast}),
                                  .waiting(w_wait), .drop(w_drop), .held(w_held));
  valid_hold_check #(.W(RW)) u_r (.clk, .rst, .valid(rvalid), .ready(rready), .payload({rid, rdata, rresp, rlast}),
                                  .waiting(r_wait), .drop(r_drop), .held(r_held));
  valid_hold_check #(.W(BW)) u_b (.clk, .rst, .valid(bvalid), .ready(bready), .payload({bid, bresp}),
                                  .waiting(b_wait), .drop(b_drop), .held(b_held));

  function automatic string ax_diff(input string c, input ax_t was, input ax_t now);
    return {`NIC_DIFF({c, "ID"}, (was.id), (now.id)), `NIC_DIFF({c, "ADDR"}, (was.addr), (now.addr)),
            `NIC_DIFF({c, "LEN"}, (was.len), (now.len)), `NIC_DIFF({c, "SIZE"}, (was.size), (now.size)),
            `NIC_DIFF({c, "BURST"}, (was.burst), (now.burst)), `NIC_DIFF({c, "LOCK"}, (was.lock), (now.lock)),
            `NIC_DIFF({c, "CACHE"}, (was.cache), (now.cache)), `NIC_DIFF({c, "PROT"}, (was.prot), (now.prot))};
  endfunction

  function automatic string ax_str(input string c, input ax_t a);
    return $sformatf("%sID %0d %sADDR 0x%0h %sLEN %0d (%0d beats) %sSIZE %0d %sBURST %0d %sLOCK %0d %sCACHE 0x%0h %sPROT %0d",
                     c, a.id, c, a.addr, c, a.len, 32'(a.len) + 1, c, a.size, c, a.burst, c, a.lock, c, a.cache, c, a.prot);
  endfunction

  // The address rules of one AR or AW: which one it breaks (cheap, every AR and AW), and the
  // rule's name and details (strings: only for a violation).
  typedef enum logic [3:0] {AX_OK, AX_SIZE, AX_RESERVED, AX_MAX_BURST, AX_LEN16, AX_WRAP_LEN, AX_WRAP_ALIGN, AX_4K,
                            AX_CACHE} ax_bad_e;

  /* verilator lint_off UNUSEDSIGNAL */     // AxID, AxLOCK, AxPROT have no rule here
  function automatic ax_bad_e ax_bad(input ax_t a);
    logic [16:0] last_byte;                 // aligned start within the page + burst bytes - 1
    logic [11:0] nb;
    nb = 12'(1) << a.size;
    last_byte = {5'd0, a.addr[11:0] & ~(nb - 12'd1)} + (17'({1'b0, a.len} + 9'd1) << a.size) - 17'd1;
    if (32'(a.size) > LB)                                                   return AX_SIZE;
    if (a.burst == 2'b11)                                                   return AX_RESERVED;
    if (32'(a.len) + 1 > MAX_BURST)                                         return AX_MAX_BURST;
    if (a.burst != INCR && a.len > 8'd15)                                   return AX_LEN16;
    if (a.burst == WRAP && !(a.len == 8'd1 || a.len == 8'd3 || a.len == 8'd7 || a.len == 8'd15))
                                                                            return AX_WRAP_LEN;
    if (a.burst == WRAP && (a.addr[11:0] & (nb - 12'd1)) != 12'd0)          return AX_WRAP_ALIGN;
    if (a.burst == INCR && last_byte > 17'hfff)                             return AX_4K;
    if (!a.cache[1] && a.cache[3:2] != 2'b00)                               return AX_CACHE;
    return AX_OK;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  function automatic string ax_rule(input string c, input ax_bad_e bad);
    case (bad)
      AX_SIZE:                              return {"AXI4_", c, "_SIZE"};
      AX_RESERVED, AX_WRAP_ALIGN:           return {"AXI4_", c, "_BURST"};
      AX_MAX_BURST, AX_LEN16, AX_WRAP_LEN:  return {"AXI4_", c, "_LEN"};
      AX_4K:                                return {"AXI4_", c, "_4K"};
      default:                              return {"AXI4_", c, "_CACHE"};
    endcase
  endfunction

  function automatic string ax_detail(input string c, input ax_t a, input ax_bad_e bad);
    logic [16:0] last_byte;
    logic [11:0] nb;
    nb = 12'(1) << a.size;
    last_byte = {5'd0, a.addr[11:0] & ~(nb - 12'd1)} + (17'({1'b0, a.len} + 9'd1) << a.size) - 17'd1;
    case (bad)
      AX_SIZE:       return $sformatf("%sSIZE %0d is %0d bytes, wider than the %0d-byte bus (%s)", c, a.size, 32'(nb), DB,
                                      ax_str(c, a));
      AX_RESERVED:   return $sformatf("%sBURST 3 is reserved (%s)", c, ax_str(c, a));
      AX_MAX_BURST:  return $sformatf("%0d beats, more than MAX_BURST %0d (%s)", 32'(a.len) + 1, MAX_BURST, ax_str(c, a));
      AX_LEN16:      return $sformatf("a %s burst of %0d beats (at most 16) (%s)", pick(a.burst == WRAP, "WRAP", "FIXED"),
                                      32'(a.len) + 1, ax_str(c, a));
      AX_WRAP_LEN:   return $sformatf("a WRAP burst of %0d beats (2, 4, 8 or 16) (%s)", 32'(a.len) + 1, ax_str(c, a));
      AX_WRAP_ALIGN: return $sformatf("a WRAP burst starts at 0x%0h, not aligned to its %0d-byte transfers (%s)", a.addr,
                                      32'(nb), ax_str(c, a));
      AX_4K:         return $sformatf("the burst's bytes 0x%0h..0x%0h cross a 4 KiB boundary (%s)", a.addr,
                                      {a.addr[ADDR_W-1:12], 12'd0} + ADDR_W'(last_byte), ax_str(c, a));
      default:       return $sformatf("%sCACHE 0x%0h: bits 3:2 must be 0 when bit 1 (modifiable) is 0 (%s)", c, a.cache,
                                      ax_str(c, a));
    endcase
  endfunction

  // The byte lanes beat n of a burst may strobe (IHI 0022 A3.4.1: Lower_Byte_Lane to
  // Upper_Byte_Lane), from the low 12 address bits (lanes only depend on them).
  function automatic logic [DB-1:0] beat_lanes(input logic [11:0] addr, input logic [2:0] size, input logic [1:0] burst,
                                               input logic [7:0] len, input logic [7:0] n);
    logic [11:0] nb, aligned, a, wsize, wbase;
    logic        first;
    int unsigned lo, hi;
    nb      = 12'(1) << size;
    aligned = addr & ~(nb - 12'd1);
    first   = (n == 8'd0) || burst == FIXED;
    if (first) begin
      a = addr;
    end else if (burst == WRAP) begin
      wsize = nb * 12'({4'd0, len} + 12'd1);
      wbase = addr & ~(wsize - 12'd1);
      a = wbase | ((addr + (12'(n) << size)) & (wsize - 12'd1));
    end else begin
      a = aligned + (12'(n) << size);
    end
    lo = 32'(a) % DB;
    hi = (first ? 32'(aligned) % DB : lo) + 32'(nb) - 1;
    return ({DB{1'b1}} << lo) & ({DB{1'b1}} >> (DB - 1 - hi));
  endfunction

  // ------------------------------------------------------------------ reads
  // Per ID: a FIFO of the outstanding reads' lengths (in AR order) and the beat count of the
  // oldest one.
  logic [7:0]  rlen_q  [NID * R_DEPTH];
  logic [RP:0] rwp_q   [NID];
  logic [RP:0] rrp_q   [NID];
  logic [7:0]  rbeat_q [NID];

  // ------------------------------------------------------------------ writes
  // The AW ring holds accepted AWs by sequence number: aw_cnt_q counts them, wl_cnt_q counts W
  // bursts ended by WLAST (W may be ahead), pair_q is the next burst to get both (then its
  // response may come: bpend_q[ID] counts such bursts per ID), s_ptr_q the burst whose beats
  // the W check is at. A burst's AW is known once it is presented (AWVALID: its payload is then
  // fixed until AWREADY) or in the ring. A W beat is checked in its own cycle when its burst's
  // AW is known and no older beat waits; otherwise it waits in the W FIFO, and the oldest
  // waiting beat is checked (one a cycle) once its AW is known. (The W check may finish a burst
  // whose AW is still waiting: s_ptr_q is then one ahead of aw_cnt_q.)
  typedef struct packed {
    logic [ID_W-1:0]   id;
    logic [ADDR_W-1:0] addr;
    logic [7:0]        len;
    logic [2:0]        size;
    logic [1:0]        burst;
  } awq_t;
  typedef struct packed {
    logic [DB-1:0] strb;
    logic          last;
    logic [31:0]   cycle;           // when the beat was handshaken (low 32 bits)
  } wq_t;

  awq_t        awq_q [AW_DEPTH];
  wq_t         wq_q  [W_DEPTH];
  logic [15:0] bpend_q [NID];
  logic [31:0] aw_cnt_q, wl_cnt_q, pair_q, s_ptr_q;
  logic [WP:0] w_wp_q, w_rp_q;
  logic [8:0]  w_beats_q;           // beats of the W burst being handshaken
  logic [7:0]  s_beat_q;            // beat of burst s_ptr_q the W check is at

  function automatic longint unsigned ns_of(input logic [31:0] c);
    return now_ns() - 64'(32'(cycle) - c) * period_ns;
  endfunction

  string where;
  initial where = $sformatf("%m");

  // Everything below is decided inside the branch of the cycle's handshakes, so that a cycle
  // without them costs a few tests (Verilator evaluates logic outside always_ff branches in
  // every cycle its inputs change).
  always_ff @(posedge clk) begin
    if (rst) begin
      aw_cnt_q <= '0; wl_cnt_q <= '0; pair_q <= '0; s_ptr_q <= '0; w_wp_q <= '0; w_rp_q <= '0;
      w_beats_q <= '0; s_beat_q <= '0;
      for (int i = 0; i < int'(NID); i++) begin
        rwp_q[i] <= '0; rrp_q[i] <= '0; rbeat_q[i] <= '0; bpend_q[i] <= '0;
      end
      if (after_rst && (arvalid || awvalid || wvalid))
        violation("AXI4_RESET_VALID", MASTER, where, $sformatf("ARVALID %0d AWVALID %0d WVALID %0d in reset", arvalid,
                  awvalid, wvalid), cycle, now_ns(), now_ns(), GROUP);
      if (after_rst && (rvalid || bvalid))
        violation("AXI4_RESET_VALID", SLAVE, where, $sformatf("RVALID %0d BVALID %0d in reset", rvalid, bvalid),
                  cycle, now_ns(), now_ns(), GROUP);
    end else begin
      automatic logic pair_now = pair_q != aw_cnt_q && pair_q != wl_cnt_q;
      automatic logic [ID_W-1:0] pair_id = '0;
      automatic logic w_waiting = w_rp_q != w_wp_q;
      // burst s_ptr_q's AW: in the ring once handshaken, or the one presented now (its
      // payload may not change until AWREADY, so it is the next burst's AW already)
      automatic logic s_in_ring = $signed(aw_cnt_q - s_ptr_q) > 0;
      automatic logic s_known = s_in_ring || (awvalid && aw_cnt_q == s_ptr_q);
      automatic logic s_now = s_known && (w_waiting || w_fire);
      if (after_rst && (arvalid || awvalid || wvalid))
        violation("AXI4_RESET_VALID", MASTER, where, $sformatf("ARVALID %0d AWVALID %0d WVALID %0d in the first cycle after reset",
                  arvalid, awvalid, wvalid), cycle, now_ns(), now_ns(), GROUP);
      if (after_rst && (rvalid || bvalid))
        violation("AXI4_RESET_VALID", SLAVE, where, $sformatf("RVALID %0d BVALID %0d in the first cycle after reset",
                  rvalid, bvalid), cycle, now_ns(), now_ns(), GROUP);

      // --- AR: handshake, then the address rules in its first VALID cycle
      if (ar_drop) violation("AXI4_AR_STABLE", MASTER, where, {"ARVALID fell before ARREADY (", ax_str("AR", ar_held), ")"},
                             cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (arvalid) begin
        if (ar_wait) begin
          if (ar != ar_held)
            violation("AXI4_AR_STABLE", MASTER, where, {"AR changed while ARVALID waited for ARREADY:", ax_diff("AR", ar_held, ar)},
                      cycle, now_ns(), now_ns() - period_ns, GROUP);
        end else begin
          automatic ax_bad_e bad = ax_bad(ar);
          if (bad != AX_OK) violation(ax_rule("AR", bad), MASTER, where, ax_detail("AR", ar, bad), cycle, now_ns(), now_ns(), GROUP);
        end
        if (arready) begin
          if (32'(rwp_q[arid] - rrp_q[arid]) == R_DEPTH)
            violation("CHECKER_CAPACITY", "checker", where, $sformatf("more than R_DEPTH %0d reads of ARID %0d outstanding",
                      R_DEPTH, arid), cycle, now_ns(), now_ns(), GROUP);
          rlen_q[{arid, rwp_q[arid][RP-1:0]}] <= arlen;
          rwp_q[arid] <= rwp_q[arid] + 1'b1;
        end
      end

      // --- R
      if (r_drop) violation("AXI4_R_STABLE", SLAVE, where, $sformatf("RVALID fell before RREADY (RID %0d)", r_held[RW-1:RW-ID_W]),
                            cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (rvalid) begin
        automatic logic outstanding = rwp_q[rid] != rrp_q[rid];
        if (r_wait) begin
          if ({rid, rdata, rresp, rlast} != r_held)
            violation("AXI4_R_STABLE", SLAVE, where, {"R changed while RVALID waited for RREADY:",
                      `NIC_DIFF("RID", (r_held[RW-1:RW-ID_W]), (rid)), `NIC_DIFF("RDATA", (r_held[RW-ID_W-1:3]), (rdata)),
                      `NIC_DIFF("RRESP", (r_held[2:1]), (rresp)), `NIC_DIFF("RLAST", (r_held[0]), (rlast))},
                      cycle, now_ns(), now_ns() - period_ns, GROUP);
        end else if (!outstanding) begin
          violation("AXI4_R_UNEXPECTED", SLAVE, where, $sformatf("RVALID with RID %0d, which has no read outstanding", rid),
                    cycle, now_ns(), now_ns(), GROUP);
        end
        if (rready && outstanding) begin
          automatic logic [7:0] len = rlen_q[{rid, rrp_q[rid][RP-1:0]}];
          if (rlast != (rbeat_q[rid] == len))
            violation("AXI4_R_LAST", SLAVE, where, $sformatf("RLAST %0d on beat %0d of a %0d-beat read of RID %0d", rlast,
                      32'(rbeat_q[rid]) + 1, 32'(len) + 1, rid), cycle, now_ns(), now_ns(), GROUP);
          if (rlast) begin
            rbeat_q[rid] <= '0;
            rrp_q[rid]   <= rrp_q[rid] + 1'b1;
          end else begin
            rbeat_q[rid] <= rbeat_q[rid] + 8'd1;
          end
        end
      end

      // --- AW: handshake, address rules, into the ring
      if (aw_drop) violation("AXI4_AW_STABLE", MASTER, where, {"AWVALID fell before AWREADY (", ax_str("AW", aw_held), ")"},
                             cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (awvalid) begin
        if (aw_wait) begin
          if (aw != aw_held)
            violation("AXI4_AW_STABLE", MASTER, where, {"AW changed while AWVALID waited for AWREADY:", ax_diff("AW", aw_held, aw)},
                      cycle, now_ns(), now_ns() - period_ns, GROUP);
        end else begin
          automatic ax_bad_e bad = ax_bad(aw);
          if (bad != AX_OK) violation(ax_rule("AW", bad), MASTER, where, ax_detail("AW", aw, bad), cycle, now_ns(), now_ns(), GROUP);
        end
        if (awready) begin
          if (((aw_cnt_q - pair_q) > (s_in_ring ? aw_cnt_q - s_ptr_q : 32'd0) ? aw_cnt_q - pair_q
                                                                              : aw_cnt_q - s_ptr_q) == AW_DEPTH)
            violation("CHECKER_CAPACITY", "checker", where, $sformatf("more than AW_DEPTH %0d write bursts tracked", AW_DEPTH),
                      cycle, now_ns(), now_ns(), GROUP);
          awq_q[aw_cnt_q[AP-1:0]] <= '{id: awid, addr: awaddr, len: awlen, size: awsize, burst: awburst};
          aw_cnt_q <= aw_cnt_q + 1;
        end
      end

      // --- W: handshake, beats in (checked now or queued), bursts counted
      if (w_drop) violation("AXI4_W_STABLE", MASTER, where, $sformatf("WVALID fell before WREADY (WSTRB 0x%0h WLAST %0d)",
                            w_held[DB:1], w_held[0]), cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (wvalid && w_wait) begin
        // WDATA only on the lanes WSTRB enables (their bytes are the data; Arm's checker also
        // masks WDATA with the strobes); WSTRB and WLAST entirely. In a cycle after a stall only.
        automatic int byte_i = -1;
        if (w_held[WW-1:DB+1] != wdata)                 // (the byte loop only when some byte moved)
          for (int i = 0; i < int'(DB); i++)
            if (byte_i < 0 && wstrb[i] && w_held[DB + 1 + 8 * i +: 8] != wdata[8 * i +: 8]) byte_i = i;
        if (w_held[DB:0] != {wstrb, wlast} || byte_i >= 0)
          violation("AXI4_W_STABLE", MASTER, where, {"W changed while WVALID waited for WREADY:",
                    pick(byte_i < 0, "", $sformatf(" WDATA byte %0d (strobed) 0x%0h -> 0x%0h", byte_i,
                                                   w_held[DB + 1 + 8 * byte_i +: 8], wdata[8 * byte_i +: 8])),
                    `NIC_DIFF("WSTRB", (w_held[DB:1]), (wstrb)), `NIC_DIFF("WLAST", (w_held[0]), (wlast))},
                    cycle, now_ns(), now_ns() - period_ns, GROUP);
      end
      if (w_fire) begin
        if (!(s_now && !w_waiting)) begin            // not checked in this cycle: it waits
          if (32'(w_wp_q - w_rp_q) == W_DEPTH)
            violation("CHECKER_CAPACITY", "checker", where, $sformatf("more than W_DEPTH %0d W beats ahead of their checks",
                      W_DEPTH), cycle, now_ns(), now_ns(), GROUP);
          wq_q[w_wp_q[WP-1:0]] <= '{strb: wstrb, last: wlast, cycle: 32'(cycle)};
          w_wp_q <= w_wp_q + 1'b1;
        end
        if (!wlast && 32'(w_beats_q) + 1 >= MAX_BURST)
          violation("AXI4_W_LAST", MASTER, where, $sformatf("no WLAST by beat %0d of a W burst (MAX_BURST %0d)",
                    32'(w_beats_q) + 1, MAX_BURST), cycle, now_ns(), now_ns(), GROUP);
        w_beats_q <= wlast ? 9'd0 : w_beats_q + 9'd1;
        if (wlast) wl_cnt_q <= wl_cnt_q + 1;
      end

      // --- the W check (see above): this cycle's beat or the oldest waiting one
      if (s_now) begin
        automatic awq_t s_aw = s_in_ring ? awq_q[s_ptr_q[AP-1:0]]
                                         : '{id: awid, addr: awaddr, len: awlen, size: awsize, burst: awburst};
        automatic wq_t  s_w = w_waiting ? wq_q[w_rp_q[WP-1:0]] : '{strb: wstrb, last: wlast, cycle: 32'(cycle)};
        automatic logic [DB-1:0] lanes = beat_lanes(s_aw.addr[11:0], s_aw.size, s_aw.burst, s_aw.len, s_beat_q);
        if (w_waiting) w_rp_q <= w_rp_q + 1'b1;
        if ((s_w.strb & ~lanes) != '0)
          violation("AXI4_W_STRB", MASTER, where, $sformatf("WSTRB 0x%0h on beat %0d of the burst at AWADDR 0x%0h (AWID %0d, AWLEN %0d, AWSIZE %0d, AWBURST %0d, accepted as burst %0d) sets lanes outside its bytes 0x%0h (W beat accepted at cycle %0d)",
                    s_w.strb, 32'(s_beat_q) + 1, s_aw.addr, s_aw.id, s_aw.len, s_aw.size, s_aw.burst, s_ptr_q, lanes,
                    s_w.cycle), cycle, now_ns(), ns_of(s_w.cycle), GROUP);
        if (s_w.last != (s_beat_q == s_aw.len))
          violation("AXI4_W_LAST", MASTER, where, $sformatf("WLAST %0d on beat %0d of the %0d-beat burst at AWADDR 0x%0h (AWID %0d, AW burst %0d in order; W beat accepted at cycle %0d)",
                    s_w.last, 32'(s_beat_q) + 1, 32'(s_aw.len) + 1, s_aw.addr, s_aw.id, s_ptr_q, s_w.cycle),
                    cycle, now_ns(), ns_of(s_w.cycle), GROUP);
        if (s_w.last) begin
          s_ptr_q  <= s_ptr_q + 1;
          s_beat_q <= '0;
        end else begin
          s_beat_q <= s_beat_q + 8'd1;
        end
      end

      // --- pairing (a burst with its AW and last W beat both handshaken) and B
      if (pair_now) begin
        pair_id = awq_q[pair_q[AP-1:0]].id;
        pair_q <= pair_q + 1;
      end
      if (b_drop) violation("AXI4_B_STABLE", SLAVE, where, $sformatf("BVALID fell before BREADY (BID %0d)", b_held[BW-1:2]),
                            cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (bvalid) begin
        automatic logic [15:0] avail = bpend_q[bid] + 16'(pair_now && pair_id == bid);
        if (b_wait) begin
          if ({bid, bresp} != b_held)
            violation("AXI4_B_STABLE", SLAVE, where, {"B changed while BVALID waited for BREADY:",
                      `NIC_DIFF("BID", (b_held[BW-1:2]), (bid)), `NIC_DIFF("BRESP", (b_held[1:0]), (bresp))},
                      cycle, now_ns(), now_ns() - period_ns, GROUP);
        end else if (avail == 16'd0) begin
          violation("AXI4_B_UNEXPECTED", SLAVE, where, $sformatf("BVALID with BID %0d, which has no write burst whose AW and last W beat have both been accepted and that has had no response (%0d AW, %0d W bursts accepted in all)",
                    bid, aw_cnt_q, wl_cnt_q), cycle, now_ns(), now_ns(), GROUP);
        end
        if (bready && avail != 16'd0) begin
          if (!(pair_now && pair_id == bid)) bpend_q[bid] <= bpend_q[bid] - 16'd1;   // else: one in, one out
        end
        if (pair_now && !(bready && avail != 16'd0 && pair_id == bid)) bpend_q[pair_id] <= bpend_q[pair_id] + 16'd1;
      end else if (pair_now) begin
        bpend_q[pair_id] <= bpend_q[pair_id] + 16'd1;
      end
    end
  end

  // ------------------------------------------------------------------ X (4-state simulators)
`ifndef VERILATOR
  always_ff @(posedge clk) begin
    if (!rst && $isunknown({arvalid, arready, awvalid, awready, wvalid, wready, rvalid, rready, bvalid, bready}))
      violation("AXI4_X", "master or slave", where, $sformatf("X or Z on a VALID/READY: AR %b/%b AW %b/%b W %b/%b R %b/%b B %b/%b",
                arvalid, arready, awvalid, awready, wvalid, wready, rvalid, rready, bvalid, bready), cycle, now_ns(), now_ns(), GROUP);
    if (!rst && ((arvalid && $isunknown(ar)) || (awvalid && $isunknown(aw)) || (wvalid && $isunknown({wstrb, wlast}))))
      violation("AXI4_X", MASTER, where, "X or Z on a valid AR, AW or W control field", cycle, now_ns(), now_ns(), GROUP);
    if (!rst && ((rvalid && $isunknown({rid, rresp, rlast})) || (bvalid && $isunknown({bid, bresp}))))
      violation("AXI4_X", SLAVE, where, "X or Z on a valid R or B control field", cycle, now_ns(), now_ns(), GROUP);
  end
`endif

  // ------------------------------------------------------------------ counts
  // Over the whole run (resets included), for the summary.
  longint unsigned c_ar, c_aw, c_w, c_r, c_b;
  initial begin
    c_ar = 0; c_aw = 0; c_w = 0; c_r = 0; c_b = 0;
  end
  always_ff @(posedge clk) begin
    if (!rst) begin
      c_ar <= c_ar + 64'(ar_fire);
      c_aw <= c_aw + 64'(aw_fire);
      c_w  <= c_w + 64'(w_fire);
      c_r  <= c_r + 64'(r_fire);
      c_b  <= c_b + 64'(b_fire);
    end
  end
  assign n_ar = c_ar;
  assign n_aw = c_aw;
  assign n_w  = c_w;
  assign n_r  = c_r;
  assign n_b  = c_b;

  logic unused;
  assign unused = ^{rdata, wdata};
endmodule
