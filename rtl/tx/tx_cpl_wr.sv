// TX completion writer: puts every frame's completion into its queue's completion ring, in
// frame order (docs/tx.md, "TX completion").
//
// Frames that failed before any read (scheduler) and frames that were read (store stage)
// finish on two paths; the scheduler's order note (one per frame, FRAMES deep: the most
// frames in flight) says which path the next completion comes from, so a queue's completions
// keep descriptor order. Each completion becomes a 16-byte write with AWID 8 + queue at
// CQ.BASE + 16 * (slot mod size), the generation bit from the slot index; CQ.HW_IDX advances
// when the record's last beat is handed to the bus. One completion per cycle at DMA widths of
// 128 bits and more (two cycles at 64).
// The merge point also reports each frame's end for the TX counters.
// Reset: synchronous, active high. A queue whose `run` is low has its indices held at zero.
module tx_cpl_wr
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W    = 128,   // DMA width
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned ID_W      = 5,
  parameter int unsigned NUM_TXQ   = 4,
  parameter int unsigned FRAMES    = 16,
  parameter int unsigned MAX_BURST = 256
) (
  input  logic                          clk,
  input  logic                          rst,
  input  logic [NUM_TXQ-1:0]            run,
  input  logic [NUM_TXQ-1:0][63:0]      cq_base,
  input  logic [NUM_TXQ-1:0][3:0]       cq_log2,
  output logic [NUM_TXQ-1:0][15:0]      cq_hw_idx,
  output logic [NUM_TXQ-1:0]            cpl_done,      // a completion's last beat went out
  // frame order
  input  logic                          ord_valid,
  output logic                          ord_ready,
  input  logic                          ord_nodata,
  // completions of frames that failed before any read
  input  logic                          fail_valid,
  input  tx_result_t                    fail_cpl,
  // completions of frames that were read
  input  logic                          data_valid,
  input  tx_result_t                    data_cpl,
  // frame ends, for the counters
  output logic                          ev_valid,
  output tx_status_e                    ev_status,
  output logic [15:0]                   ev_len,
  // AXI4 write channels
  output logic [ID_W-1:0]               m_awid,
  output logic [ADDR_W-1:0]             m_awaddr,
  output logic [7:0]                    m_awlen,
  output logic [2:0]                    m_awsize,
  output logic [1:0]                    m_awburst,
  output logic                          m_awvalid,
  input  logic                          m_awready,
  output logic [DATA_W-1:0]             m_wdata,
  output logic [DATA_W/8-1:0]           m_wstrb,
  output logic                          m_wlast,
  output logic                          m_wvalid,
  input  logic                          m_wready,
  input  logic [ID_W-1:0]               m_bid,
  input  logic [1:0]                    m_bresp,
  input  logic                          m_bvalid,
  output logic                          m_bready,
  output logic [NUM_TXQ-1:0]            q_wr_err,      // SLVERR/DECERR on a completion write
  output logic [NUM_TXQ-1:0]            q_wr_busy      // completion bursts awaiting their response
);
  localparam int unsigned DB    = DATA_W / 8;
  localparam int unsigned BEATS = (DB >= 16) ? 1 : 16 / DB;

  initial begin
    if ((1 << ID_W) < 8 + NUM_TXQ) $fatal(1, "tx_cpl_wr: ID_W must hold IDs 8 + queue");
  end

  // ---------------------------------------------------------------- the three queues
  logic       ord_out_valid, ord_out_nodata, fq_valid, dq_valid, take;
  tx_result_t fq_cpl, dq_cpl, sel;
  logic       fq_in_ready, dq_in_ready;
  logic [$clog2(FRAMES):0] ord_count, fq_count, dq_count;

  sync_fifo #(.WIDTH(1), .DEPTH(FRAMES)) u_ord (
    .clk, .rst, .clear (1'b0),
    .in_valid (ord_valid), .in_ready (ord_ready), .in_data (ord_nodata),
    .out_valid (ord_out_valid), .out_ready (take), .out_data (ord_out_nodata), .count (ord_count)
  );
  sync_fifo #(.WIDTH($bits(tx_result_t)), .DEPTH(FRAMES)) u_fail (
    .clk, .rst, .clear (1'b0),
    .in_valid (fail_valid), .in_ready (fq_in_ready), .in_data (fail_cpl),
    .out_valid (fq_valid), .out_ready (take && ord_out_nodata), .out_data (fq_cpl), .count (fq_count)
  );
  sync_fifo #(.WIDTH($bits(tx_result_t)), .DEPTH(FRAMES)) u_data (
    .clk, .rst, .clear (1'b0),
    .in_valid (data_valid), .in_ready (dq_in_ready), .in_data (data_cpl),
    .out_valid (dq_valid), .out_ready (take && !ord_out_nodata), .out_data (dq_cpl), .count (dq_count)
  );

  // ---------------------------------------------------------------- slot and command
  logic [NUM_TXQ-1:0][15:0] slot_q;      // completions given a ring slot
  logic [15:0]       slot, mask;
  logic [63:0]       addr;
  logic              gen, sel_valid, cmd_ready, bq_in_ready;
  logic [2:0]        q;

  assign sel       = ord_out_nodata ? fq_cpl : dq_cpl;
  assign sel_valid = ord_out_valid && (ord_out_nodata ? fq_valid : dq_valid);
  assign q         = sel.qid;
  assign slot      = slot_q[q];
  assign mask      = (16'd1 << cq_log2[q]) - 16'd1;
  assign addr      = cq_base[q] + {44'd0, slot & mask, 4'd0};
  assign gen       = !slot[cq_log2[q]];
  assign take      = sel_valid && cmd_ready && bq_in_ready;

  assign ev_valid  = take;
  assign ev_status = sel.status;
  assign ev_len    = sel.len;

  // ---------------------------------------------------------------- record beats
  logic [130:0] bq_out;      // {queue, record}
  logic         bq_valid, in_valid, in_ready, last;
  logic [DATA_W-1:0] in_data;
  logic [$clog2(BEATS+1)-1:0] beat_q;
  logic [2:0]   bq_count;

  sync_fifo #(.WIDTH(131), .DEPTH(4)) u_beats (
    .clk, .rst, .clear (1'b0),
    .in_valid (take), .in_ready (bq_in_ready), .in_data ({q, pack_tx_cpl(sel, gen)}),
    .out_valid (bq_valid), .out_ready (in_valid && in_ready && last), .out_data (bq_out), .count (bq_count)
  );

  if (DB >= 16) begin : g_wide
    // The record repeated in every 16-byte lane: the write strobes pick its slot.
    assign in_data = {(DB / 16){bq_out[127:0]}};
    assign last    = 1'b1;
    logic unused_beat;
    assign unused_beat = ^beat_q;
  end else begin : g_narrow
    assign in_data = bq_out[beat_q * DATA_W +: DATA_W];
    assign last    = 32'(beat_q) == BEATS - 1;
  end
  assign in_valid = bq_valid;

  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else if (in_valid && in_ready) beat_q <= last ? '0 : beat_q + 1'b1;
  end

  always_comb begin
    cpl_done = '0;
    for (int t = 0; t < NUM_TXQ; t++) cpl_done[t] = in_valid && in_ready && last && bq_out[130:128] == 3'(t);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      slot_q    <= '0;
      cq_hw_idx <= '0;
    end else begin
      for (int t = 0; t < NUM_TXQ; t++) begin
        if (!run[t]) begin
          slot_q[t]    <= '0;
          cq_hw_idx[t] <= '0;
        end else begin
          if (take && q == 3'(t)) slot_q[t] <= slot_q[t] + 1'b1;
          if (cpl_done[t]) cq_hw_idx[t] <= cq_hw_idx[t] + 1'b1;
        end
      end
    end
  end

  // ---------------------------------------------------------------- AXI
  logic              b_err, wr_idle, burst_issue;
  logic [ID_W-1:0]   b_err_id;

  axi_dma_wr #(.DATA_W(DATA_W), .ADDR_W(ADDR_W), .MAX_BURST(MAX_BURST), .ID_W(ID_W)) u_wr (
    .clk, .rst,
    .cmd_valid (sel_valid && bq_in_ready),
    .cmd_ready,
    .cmd_addr  (ADDR_W'(addr)),
    .cmd_len   (17'd16),
    .cmd_id    (ID_W'(8 + 32'(q))),
    .in_valid,
    .in_ready,
    .in_data,
    .m_awid, .m_awaddr, .m_awlen, .m_awsize, .m_awburst, .m_awvalid, .m_awready,
    .m_wdata, .m_wstrb, .m_wlast, .m_wvalid, .m_wready,
    .m_bid, .m_bresp, .m_bvalid, .m_bready,
    .b_err, .b_err_id,
    .burst_issue,
    .idle (wr_idle)
  );

  // Bursts issued (AW presented: the data may go out before the AW is accepted) and not yet
  // answered, per queue.
  logic [NUM_TXQ-1:0][7:0] bur_q;
  always_ff @(posedge clk) begin
    if (rst) begin
      bur_q <= '0;
    end else begin
      for (int t = 0; t < NUM_TXQ; t++) begin
        bur_q[t] <= bur_q[t] + 8'(burst_issue && m_awid == ID_W'(8 + t))
                             - 8'(m_bvalid && m_bready && m_bid == ID_W'(8 + t));
      end
    end
  end
  always_comb begin
    for (int t = 0; t < NUM_TXQ; t++) begin
      q_wr_err[t]  = b_err && b_err_id == ID_W'(8 + t);
      q_wr_busy[t] = bur_q[t] != '0;
    end
  end

`ifndef SYNTHESIS
  // At most FRAMES frames between the scheduler's order note and the completion's turn.
  always_ff @(posedge clk) begin
    if (!rst && ((fail_valid && !fq_in_ready) || (data_valid && !dq_in_ready))) begin
      $error("tx_cpl_wr: completion FIFO overflow");
    end
  end
`endif

  logic unused;
  assign unused = ^{ord_count, fq_count, dq_count, fq_in_ready, dq_in_ready, bq_count, wr_idle};
endmodule
