// TSO read planner (docs/tx.md, "TCP segmentation offload", "RTL plan"): walks one send's
// segments (its descriptors' addr/len, in order) and cuts them into the reads that fetch
// every byte of the send once: first the header bytes the descriptors hold (`hdr_left` =
// hdr_len - inline_len of them, marked `m_rd_hdr`), then the payload, cut at every `mss`
// bytes so that TCP segment k's payload is a run of whole reads (`m_rd_seg` = k,
// `m_rd_seg_end` on its last read). The TX path sends every segment as a frame of its own:
// its patched header (tx_tso_hdr) and these reads. A read never crosses a descriptor, so it
// keeps the descriptor's 4 KiB rule; splitting at MAX_BURST is the issuer's, as for any read.
// The golden model of the cut is models.tso.tso_read_plan.
//
// The send is checked upstream (tx_sched: docs/tx.md rules, so mss >= 88 and the segment
// lengths are legal). Descriptors of length 0 are skipped; the walk ends after the descriptor
// with `s_desc_last` (its last read has `m_rd_send_end`; a last descriptor of length 0 ends it
// without one). mss 0 is taken as 65536, so nothing can hang.
//
// Rate: one read per cycle while a descriptor is loaded; loading the next one costs a cycle
// (`s_desc_ready` only while none is held). Latency: a read is on show the cycle after its
// descriptor is taken. Every output comes from registers through one min() of registered
// values, and changes only after a handshake (AXI-Stream stable).
//
// Reset (`rst`, synchronous, active high): idle, ready for a command, no read on show.
module tx_tso_rd #(
  parameter int unsigned AW = 64
) (
  input  logic          clk,
  input  logic          rst,

  input  logic          s_cmd_valid,
  output logic          s_cmd_ready,
  input  logic [7:0]    s_cmd_hdr_left,     // header bytes held by the descriptors
  input  logic [15:0]   s_cmd_mss,

  input  logic          s_desc_valid,
  output logic          s_desc_ready,
  input  logic [AW-1:0] s_desc_addr,
  input  logic [12:0]   s_desc_len,         // 0..4096
  input  logic          s_desc_last,

  output logic          m_rd_valid,
  input  logic          m_rd_ready,
  output logic [AW-1:0] m_rd_addr,
  output logic [12:0]   m_rd_len,
  output logic          m_rd_hdr,
  output logic [15:0]   m_rd_seg,
  output logic          m_rd_seg_end,
  output logic          m_rd_send_end,

  output logic          busy
);
  initial begin
    if (AW < 32 || AW > 64) $fatal(1, "tx_tso_rd: AW=%0d must be in 32..64", AW);
  end

  logic          run_q;                     // a send is being walked
  logic          have_q;                    // a descriptor with bytes left is held
  logic [AW-1:0] addr_q;
  logic [12:0]   left_q;                    // bytes left in the held descriptor
  logic          dlast_q;                   // the held descriptor is the send's last
  logic [7:0]    hdr_left_q;                // header bytes still to read
  logic [16:0]   mss_q;                     // 1..65536
  logic [16:0]   seg_left_q;                // payload bytes left in segment seg_q
  logic [15:0]   seg_q;

  logic [16:0] lim;                          // bytes the next read may take
  logic [12:0] n;
  logic        hs;
  always_comb begin
    lim = (hdr_left_q != 8'd0) ? {9'd0, hdr_left_q} : seg_left_q;
    n   = ({4'd0, left_q} < lim) ? left_q : lim[12:0];
    hs  = m_rd_valid && m_rd_ready;
  end

  assign s_cmd_ready   = !run_q;
  assign s_desc_ready  = run_q && !have_q;
  assign m_rd_valid    = have_q;
  assign m_rd_addr     = addr_q;
  assign m_rd_len      = n;
  assign m_rd_hdr      = (hdr_left_q != 8'd0);
  assign m_rd_seg      = seg_q;
  assign m_rd_send_end = dlast_q && (n == left_q);
  assign m_rd_seg_end  = (hdr_left_q != 8'd0) ? ({9'd0, hdr_left_q} == {4'd0, n})
                                              : (({4'd0, n} == seg_left_q) || m_rd_send_end);
  assign busy          = run_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      run_q      <= 1'b0;
      have_q     <= 1'b0;
      addr_q     <= '0;
      left_q     <= '0;
      dlast_q    <= 1'b0;
      hdr_left_q <= '0;
      mss_q      <= '0;
      seg_left_q <= '0;
      seg_q      <= '0;
    end else begin
      if (s_cmd_valid && s_cmd_ready) begin
        run_q      <= 1'b1;
        hdr_left_q <= s_cmd_hdr_left;
        mss_q      <= (s_cmd_mss == 16'd0) ? 17'h10000 : {1'b0, s_cmd_mss};
        seg_left_q <= (s_cmd_mss == 16'd0) ? 17'h10000 : {1'b0, s_cmd_mss};
        seg_q      <= '0;
      end
      if (s_desc_valid && s_desc_ready) begin
        addr_q  <= s_desc_addr;
        left_q  <= s_desc_len;
        dlast_q <= s_desc_last;
        have_q  <= (s_desc_len != 13'd0);
        if (s_desc_len == 13'd0 && s_desc_last) run_q <= 1'b0;
      end
      if (hs) begin
        addr_q <= addr_q + AW'(n);
        left_q <= left_q - n;
        if (n == left_q) begin
          have_q <= 1'b0;
          if (dlast_q) run_q <= 1'b0;
        end
        if (hdr_left_q != 8'd0) begin
          hdr_left_q <= hdr_left_q - n[7:0];
        end else if ({4'd0, n} == seg_left_q) begin
          seg_q      <= seg_q + 16'd1;
          seg_left_q <= mss_q;
        end else begin
          seg_left_q <= seg_left_q - {4'd0, n};
        end
      end
    end
  end
endmodule
