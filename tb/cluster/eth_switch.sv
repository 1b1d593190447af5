// An output-queued Ethernet switch for the cluster testbench (testbench code: never part of
// rtl/). N ports of DATA_W-bit AXI-Stream, one beat per cycle each way; the rules are those of
// docs/cluster.md ("The switch"), and models/eth_switch.py implements the same rules in
// Python, written from that page (tests/rtl/test_eth_switch.py compares the two on the same
// traffic, cycle for cycle).
//
// In short, per port p: the ingress (s_*[p], the NIC's TX stream) takes a frame's beats
// back to back and then holds tready low for the wire overhead (IFG_BYTES per frame:
// preamble, SFD, FCS and the inter-frame gap the MAC streams leave out, carried in bytes
// from frame to frame); the frame's destination is its DA looked up in the static
// forwarding table (first matching valid entry; group addresses go to every other port;
// no match: dropped, counted in no_route[p]; a match on the ingress port itself: dropped,
// counted in hairpin[p]); its beats are stored as they arrive (store and forward) and
// when its last beat is in, each destination o admits it if the cells (beats) queued at o
// plus the frame's fit in o's buffer (cap_cells), else drops it (drop tail, counted in
// drops[o], drop_bytes[o]); with drop_thr, a frame is also lost at its ingress when that
// port's xorshift32 draw (one per frame) is below drop_thr (counted in injected[p]). Several ingress ports finishing frames for one output in one
// cycle are admitted in port order. Each egress sends its admitted frames in admission
// order, back to back with the same wire overhead after each; a frame's first beat is on
// the egress at the earliest 2 cycles after its last beat went in. A cell is free again in
// the cycle after its beat left.
//
// Storage: one memory per (output, input) pair, each deep enough for a whole buffer plus
// the frame in progress (a frame is written as it arrives and rewound when it is not
// admitted), so the ports never contend for a write port; the accounting, not the memory,
// is the buffer. Counters are 32 bits and wrap. depth_peak[o] is the largest queue (cells)
// in the last complete window of 2^SAMPLE_LOG2 cycles (window_idx counts the windows).
//
// Reset: synchronous, active high; clears the queues, the pointers, the wire state and the
// counters, not the forwarding table (the harness writes it once, after reset or before).
module eth_switch #(
  parameter int unsigned N           = 4,       // ports, 2..16
  parameter int unsigned DATA_W      = 64,      // 64..512, a multiple of 64
  parameter int unsigned MAX_CELLS   = 16384,   // largest buffer per port (cells = beats)
  parameter int unsigned MAX_FRAME   = 16384,   // longest frame (bytes); longer: dropped (oversize)
  parameter int unsigned TABLE       = 16,      // forwarding table entries
  parameter int unsigned IFG_BYTES   = 24,      // wire overhead per frame (bytes)
  parameter int unsigned SAMPLE_LOG2 = 10       // depth_peak window: 2^SAMPLE_LOG2 cycles
) (
  input  logic                    clk,
  input  logic                    rst,
  input  logic [31:0]             cap_cells,     // buffer per port (cells), at most MAX_CELLS
  input  logic [31:0]             drop_thr,      // random drops: a frame is lost when its draw < this
  input  logic [31:0]             drop_seed,     // (xorshift32 per ingress, seeded at reset)
  // forwarding table: entry fwd_idx := {fwd_valid, fwd_mac, fwd_port} when fwd_we
  input  logic                    fwd_we,
  input  logic [7:0]              fwd_idx,
  input  logic [47:0]             fwd_mac,       // in wire order: byte 0 of the DA in bits 47:40
  input  logic [7:0]              fwd_port,
  input  logic                    fwd_valid,
  // ingress (the NICs' TX streams), port p in bits [p*W +: W]
  input  logic [N*DATA_W-1:0]     s_tdata,
  input  logic [N*DATA_W/8-1:0]   s_tkeep,
  input  logic [N-1:0]            s_tvalid,
  output logic [N-1:0]            s_tready,
  input  logic [N-1:0]            s_tlast,
  // egress (the NICs' RX streams)
  output logic [N*DATA_W-1:0]     m_tdata,
  output logic [N*DATA_W/8-1:0]   m_tkeep,
  output logic [N-1:0]            m_tvalid,
  input  logic [N-1:0]            m_tready,
  output logic [N-1:0]            m_tlast,
  // counters, port p in bits [32*p +: 32]
  output logic [32*N-1:0]         rx_frames,     // frames in at the ingress
  output logic [32*N-1:0]         tx_frames,     // frames out at the egress
  output logic [32*N-1:0]         drops,         // frames the egress buffer had no room for
  output logic [32*N-1:0]         drop_bytes,
  output logic [32*N-1:0]         injected,      // ingress frames lost on purpose (drop_thr)
  output logic [32*N-1:0]         no_route,      // ingress frames whose DA is in no entry
  output logic [32*N-1:0]         hairpin,       // ingress frames whose DA is on that port
  output logic [32*N-1:0]         oversize,      // ingress frames longer than MAX_FRAME
  output logic [32*N-1:0]         depth,         // cells queued at the egress now
  output logic [32*N-1:0]         depth_peak,    // largest depth in the last complete window
  output logic [31:0]             window_idx     // complete depth_peak windows so far
);
  localparam int unsigned DB     = DATA_W / 8;
  localparam int unsigned MFC    = (MAX_FRAME + DB - 1) / DB;   // cells of the longest frame
  localparam int unsigned DEPTH  = MAX_CELLS + MFC + 1;         // per (output, input) memory
  localparam int unsigned AW     = $clog2(DEPTH);
  localparam int unsigned PW     = (N > 1) ? $clog2(N) : 1;
  localparam int unsigned QW     = DATA_W + DB + 1;             // stored beat: last, keep, data
  localparam int unsigned OD     = MAX_CELLS + N;               // admitted frames per output
  localparam int unsigned OW     = $clog2(OD);
  localparam int unsigned TW     = (TABLE > 1) ? $clog2(TABLE) : 1;

  if (N < 2 || N > 16) begin : g_bad_n
    $error("eth_switch: N must be 2..16");
  end
  if (DATA_W < 64 || DATA_W > 512 || DATA_W % 64 != 0) begin : g_bad_w
    $error("eth_switch: DATA_W must be 64..512, a multiple of 64");
  end
  if (MAX_CELLS < MFC) begin : g_bad_cells
    $error("eth_switch: MAX_CELLS must hold at least one longest frame");
  end

  typedef logic [N-1:0] mask_t;

  // ------------------------------------------------------------------ forwarding table
  logic          tbl_valid [TABLE];
  logic [47:0]   tbl_mac   [TABLE];
  logic [7:0]    tbl_port  [TABLE];
  always_ff @(posedge clk) begin
    if (fwd_we && fwd_idx < 8'(TABLE)) begin
      tbl_valid[fwd_idx[TW-1:0]] <= fwd_valid;
      tbl_mac[fwd_idx[TW-1:0]]   <= fwd_mac;
      tbl_port[fwd_idx[TW-1:0]]  <= fwd_port;
    end
  end

  // The destinations of a frame whose first beat is `d`, arriving on port `p`: {mask,
  // no_route, hairpin}.
  function automatic logic [N+1:0] route(input logic [DATA_W-1:0] d, input int p);
    logic [47:0] da;
    mask_t m;
    for (int b = 0; b < 6; b++) da[47 - 8 * b -: 8] = d[8 * b +: 8];
    m = '0;
    if (da[40]) begin                                   // group address: every other port
      m = '1;
      m[p] = 1'b0;
      return {m, 2'b00};
    end
    for (int t = 0; t < TABLE; t++) begin
      if (tbl_valid[t] && tbl_mac[t] == da && int'(tbl_port[t]) < N) begin
        if (int'(tbl_port[t]) == p) return {m, 2'b01};
        m[tbl_port[t][PW-1:0]] = 1'b1;
        return {m, 2'b00};
      end
    end
    return {m, 2'b10};
  endfunction

  // ------------------------------------------------------------------ ingress
  logic [DATA_W-1:0]   in_data [N];
  logic [DB-1:0]       in_keep [N];
  logic                in_last [N];
  logic                in_take [N];      // a beat is taken this cycle
  mask_t               in_mask [N];      // where the beat goes (its frame's destinations)
  logic                in_first_q [N];   // the next beat starts a frame
  mask_t               in_mask_q  [N];   // the frame's destinations (after its first beat)
  logic [2:0]          in_why     [N];   // first beat: {oversize (later), no_route, hairpin}
  logic                in_ready_q [N];
  int unsigned         in_gap_q   [N];   // wire bytes still owed (ingress)
  int unsigned         in_beats_q [N];   // beats of the frame so far
  int unsigned         in_bytes_q [N];
  logic [1:0]          in_drop_q  [N];   // the frame's no_route / hairpin verdict

  for (genvar p = 0; p < N; p++) begin : g_in
    assign in_data[p] = s_tdata[p * DATA_W +: DATA_W];
    assign in_keep[p] = s_tkeep[p * DB +: DB];
    assign in_last[p] = s_tlast[p];
    assign in_take[p] = s_tvalid[p] && in_ready_q[p];
    assign s_tready[p] = in_ready_q[p];
  end

  always_comb begin
    logic [N+1:0] r;
    r = '0;
    for (int p = 0; p < N; p++) begin
      in_mask[p] = '0;
      in_why[p] = '0;
      if (in_take[p]) begin
        if (in_first_q[p]) begin
          r = route(in_data[p], p);
          in_mask[p] = r[N+1:2];
          in_why[p] = {1'b0, r[1:0]};
        end else begin
          in_mask[p] = in_mask_q[p];
        end
        if (in_beats_q[p] >= MFC) in_mask[p] = '0;          // too long: no more writes
      end
    end
  end

  // ------------------------------------------------------------------ per (output, input) memories
  // q_wp: write pointer (the frame in progress), q_cp: start of that frame (rewind point),
  // q_rp: read pointer; all in cells, modulo DEPTH.
  logic [AW-1:0] q_wp [N][N];
  logic [AW-1:0] q_cp [N][N];
  logic [AW-1:0] q_rp [N][N];
  logic [QW-1:0] q_rdata [N][N];

  function automatic logic [AW-1:0] inc(input logic [AW-1:0] a);
    return (a == AW'(DEPTH - 1)) ? '0 : a + AW'(1);
  endfunction

  for (genvar o = 0; o < N; o++) begin : g_out_mem
    for (genvar i = 0; i < N; i++) begin : g_in_mem
      if (o != i) begin : g_mem
        logic [QW-1:0] mem [DEPTH];
        always_ff @(posedge clk) begin
          if (in_mask[i][o]) mem[q_wp[o][i]] <= {in_last[i], in_keep[i], in_data[i]};
        end
        assign q_rdata[o][i] = mem[q_rp[o][i]];
      end else begin : g_none
        assign q_rdata[o][i] = '0;
      end
    end
  end

  // ------------------------------------------------------------------ admission, egress
  logic [PW-1:0]       ord_port [N][OD];  // admitted frames of each output, in order: ingress
  int unsigned         ord_bytes[N][OD];  //   and bytes
  logic [OW-1:0]       ord_wp [N], ord_rp [N];
  int unsigned         used_q [N];        // cells admitted to the output and not yet sent
  logic                eg_busy_q [N];     // sending a frame
  logic [PW-1:0]       eg_port_q [N];     // from which input's memory
  int unsigned         eg_bytes_q [N];
  int unsigned         eg_beats_q [N];
  int unsigned         eg_gap_q [N];      // wire bytes still owed (egress)
  logic [DATA_W-1:0]   out_data_q [N];
  logic [DB-1:0]       out_keep_q [N];
  logic                out_valid_q [N], out_last_q [N];
  logic [31:0]         c_rx [N], c_tx [N], c_drop [N], c_dropb [N], c_noroute [N], c_hairpin [N], c_oversize [N];
  logic [31:0]         c_inj [N];
  logic [31:0]         rng_q [N];         // the random drops' xorshift32, one per ingress
  int unsigned         peak_q [N], peak_out_q [N];
  logic [SAMPLE_LOG2-1:0] win_cyc_q;
  logic [31:0]         win_idx_q;

  function automatic logic [OW-1:0] oinc(input logic [OW-1:0] a);
    return (a == OW'(OD - 1)) ? '0 : a + OW'(1);
  endfunction

  // Wire bytes still owed after a frame of `bytes` bytes in `beats` beats, with `gap` owed
  // before it: what the frame and its overhead take on the wire beyond its beats.
  function automatic int unsigned owe(input int unsigned gap, input int unsigned bytes,
                                      input int unsigned beats);
    int unsigned need, had;
    need = gap + bytes + IFG_BYTES;
    had = beats * DB;
    return (need > had) ? need - had : 0;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int p = 0; p < N; p++) begin
        in_first_q[p] <= 1'b1; in_mask_q[p] <= '0; in_ready_q[p] <= 1'b0; in_gap_q[p] <= 0;
        in_beats_q[p] <= 0; in_bytes_q[p] <= 0; in_drop_q[p] <= '0;
        for (int i = 0; i < N; i++) begin q_wp[p][i] <= '0; q_cp[p][i] <= '0; q_rp[p][i] <= '0; end
        ord_wp[p] <= '0; ord_rp[p] <= '0; used_q[p] <= 0;
        eg_busy_q[p] <= 1'b0; eg_port_q[p] <= '0; eg_bytes_q[p] <= 0; eg_beats_q[p] <= 0; eg_gap_q[p] <= 0;
        out_valid_q[p] <= 1'b0; out_last_q[p] <= 1'b0;
        c_rx[p] <= '0; c_tx[p] <= '0; c_drop[p] <= '0; c_dropb[p] <= '0; c_noroute[p] <= '0;
        c_hairpin[p] <= '0; c_oversize[p] <= '0; peak_q[p] <= 0; peak_out_q[p] <= 0;
        c_inj[p] <= '0;
        rng_q[p] <= (drop_seed ^ (32'h9e3779b9 * 32'(p + 1))) | 32'd1;
      end
      win_cyc_q <= '0;
      win_idx_q <= '0;
    end else begin
      int unsigned used [N];
      logic [OW-1:0] owp [N];
      logic sent [N];
      logic [31:0] ndrop [N], ndropb [N];   // this cycle's drops per output (several ingresses may drop)
      int unsigned cap;
      cap = (cap_cells > MAX_CELLS) ? MAX_CELLS : cap_cells;
      for (int o = 0; o < N; o++) begin
        used[o] = used_q[o];
        owp[o] = ord_wp[o];
        sent[o] = 1'b0;
        ndrop[o] = c_drop[o];
        ndropb[o] = c_dropb[o];
      end
      // ---- egress: one beat per cycle per port
      for (int o = 0; o < N; o++) begin
        if (!out_valid_q[o] || m_tready[o]) begin
          logic go;
          logic [PW-1:0] src;
          int unsigned fbytes, fbeats;
          out_valid_q[o] <= 1'b0;
          go = 1'b0;
          src = eg_port_q[o];
          fbytes = eg_bytes_q[o];
          fbeats = eg_beats_q[o];
          if (eg_busy_q[o]) begin
            go = 1'b1;
          end else if (eg_gap_q[o] < DB && ord_rp[o] != ord_wp[o]) begin   // the next admitted frame
            src = ord_port[o][ord_rp[o]];
            fbytes = ord_bytes[o][ord_rp[o]];
            fbeats = 0;
            eg_port_q[o] <= src;
            eg_bytes_q[o] <= fbytes;
            ord_rp[o] <= oinc(ord_rp[o]);
            go = 1'b1;
          end
          if (go) begin
            logic [QW-1:0] w;
            w = q_rdata[o][src];
            out_data_q[o] <= w[DATA_W-1:0];
            out_keep_q[o] <= w[DATA_W +: DB];
            out_last_q[o] <= w[QW-1];
            out_valid_q[o] <= 1'b1;
            q_rp[o][src] <= inc(q_rp[o][src]);
            sent[o] = 1'b1;
            eg_busy_q[o] <= !w[QW-1];
            eg_beats_q[o] <= fbeats + 1;
            if (w[QW-1]) begin
              eg_gap_q[o] <= owe(eg_gap_q[o], fbytes, fbeats + 1);
              c_tx[o] <= c_tx[o] + 32'd1;
            end
          end else begin
            eg_gap_q[o] <= (eg_gap_q[o] > DB) ? eg_gap_q[o] - DB : 0;   // an idle cycle pays
          end
        end
      end
      // ---- ingress: write pointers, frame ends, admission in port order
      for (int i = 0; i < N; i++) begin
        // a cycle without a beat pays DB bytes of the wire overhead still owed
        if (!in_take[i]) begin
          in_gap_q[i] <= (in_gap_q[i] > DB) ? in_gap_q[i] - DB : 0;
          in_ready_q[i] <= in_gap_q[i] < 2 * DB;
        end
        if (in_take[i]) begin
          mask_t m;
          int unsigned beats, bytes;
          logic [1:0] why;
          m = in_mask[i];
          beats = in_beats_q[i] + 1;
          bytes = in_bytes_q[i] + $countones(in_keep[i]);
          why = in_first_q[i] ? in_why[i][1:0] : in_drop_q[i];
          for (int o = 0; o < N; o++) if (m[o]) q_wp[o][i] <= inc(q_wp[o][i]);
          if (in_first_q[i]) begin
            in_mask_q[i] <= in_mask[i];
            in_drop_q[i] <= in_why[i][1:0];
          end
          if (!in_last[i]) begin
            in_first_q[i] <= 1'b0;
            in_beats_q[i] <= beats;
            in_bytes_q[i] <= bytes;
          end else begin
            mask_t dest;
            int unsigned g;
            logic [31:0] x;
            dest = in_first_q[i] ? in_mask[i] : in_mask_q[i];
            in_first_q[i] <= 1'b1;
            in_beats_q[i] <= 0;
            in_bytes_q[i] <= 0;
            c_rx[i] <= c_rx[i] + 32'd1;
            x = rng_q[i];                                  // one draw per frame
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            rng_q[i] <= x;
            if (beats > MFC) begin
              c_oversize[i] <= c_oversize[i] + 32'd1;
              dest = '0;
              for (int o = 0; o < N; o++) if (o != i) q_wp[o][i] <= q_cp[o][i];
            end else if (drop_thr != 0 && x < drop_thr) begin
              c_inj[i] <= c_inj[i] + 32'd1;
              for (int o = 0; o < N; o++) if (dest[o]) q_wp[o][i] <= q_cp[o][i];
              dest = '0;
            end else if (why[0]) begin
              c_hairpin[i] <= c_hairpin[i] + 32'd1;
            end else if (why[1]) begin
              c_noroute[i] <= c_noroute[i] + 32'd1;
            end
            for (int o = 0; o < N; o++) begin
              if (dest[o]) begin
                if (used[o] + beats <= cap) begin
                  used[o] = used[o] + beats;
                  ord_port[o][owp[o]] <= PW'(i);
                  ord_bytes[o][owp[o]] <= bytes;
                  owp[o] = oinc(owp[o]);
                  q_cp[o][i] <= inc(q_wp[o][i]);
                end else begin
                  q_wp[o][i] <= q_cp[o][i];                // rewind: the frame is not kept
                  ndrop[o] = ndrop[o] + 32'd1;
                  ndropb[o] = ndropb[o] + bytes;
                end
              end
            end
            g = owe(in_gap_q[i], bytes, beats);
            in_gap_q[i] <= g;
            in_ready_q[i] <= g < DB;
          end
        end
      end
      // a cell is free from the cycle after its beat left; admissions above saw it taken
      for (int o = 0; o < N; o++) begin
        ord_wp[o] <= owp[o];
        used_q[o] <= used[o] - (sent[o] ? 1 : 0);
        c_drop[o] <= ndrop[o];
        c_dropb[o] <= ndropb[o];
      end
      // ---- depth windows
      win_cyc_q <= win_cyc_q + 1'b1;
      for (int o = 0; o < N; o++) begin
        if (&win_cyc_q) begin
          peak_out_q[o] <= (used_q[o] > peak_q[o]) ? used_q[o] : peak_q[o];
          peak_q[o] <= 0;
        end else if (used_q[o] > peak_q[o]) begin
          peak_q[o] <= used_q[o];
        end
      end
      if (&win_cyc_q) win_idx_q <= win_idx_q + 32'd1;
    end
  end

  for (genvar p = 0; p < N; p++) begin : g_out
    assign m_tdata[p * DATA_W +: DATA_W] = out_data_q[p];
    assign m_tkeep[p * DB +: DB]         = out_keep_q[p];
    assign m_tvalid[p]                   = out_valid_q[p];
    assign m_tlast[p]                    = out_last_q[p];
    assign rx_frames[32 * p +: 32]  = c_rx[p];
    assign tx_frames[32 * p +: 32]  = c_tx[p];
    assign drops[32 * p +: 32]      = c_drop[p];
    assign drop_bytes[32 * p +: 32] = c_dropb[p];
    assign injected[32 * p +: 32]   = c_inj[p];
    assign no_route[32 * p +: 32]   = c_noroute[p];
    assign hairpin[32 * p +: 32]    = c_hairpin[p];
    assign oversize[32 * p +: 32]   = c_oversize[p];
    assign depth[32 * p +: 32]      = used_q[p];
    assign depth_peak[32 * p +: 32] = peak_out_q[p];
  end
  assign window_idx = win_idx_q;
endmodule
