// TX egress: sends the committed frames of the TX FIFO on the MAC stream.
//
// Each frame's note (length, whether to patch a checksum, where, and its value) waits in a
// FIFO beside the frame data. A DMA-width FIFO word is cut into DMA_DATA_W / DATA_W beats;
// the beat that holds the checksum field gets the 16-bit result written big-endian over the
// seed (the field is at an even offset, so it never straddles two beats). Beats go out back
// to back, one per cycle while `tready` is high, also from one frame to the next; `tkeep` is
// contiguous from bit 0, `tlast` marks the frame's last beat. A frame shorter than 60 bytes
// (only a TSO send's last TCP segment can be: docs/tx.md, "TCP segmentation offload") is
// padded with zero bytes to 60 on the wire, as a MAC pads: its beats past its FIFO words
// take no word, and bytes past its length are sent as zero. Frames of 60 bytes and more
// go out exactly as before (the padding rule never applies to them).
// Reset: synchronous, active high; `tvalid` is low afterwards.
module tx_egress
  import nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W     = 64,    // MAC width
  parameter int unsigned DMA_DATA_W = 128,
  parameter int unsigned FRAMES     = 32,    // notes (frames in the FIFO)
  localparam int unsigned DB        = DATA_W / 8
) (
  input  logic                  clk,
  input  logic                  rst,
  // notes
  input  logic                  eg_valid,
  input  logic [15:0]           eg_len,
  input  logic                  eg_csum_en,
  input  logic [15:0]           eg_csum_pos,
  input  logic [15:0]           eg_csum,
  // FIFO words
  input  logic                  ff_valid,
  output logic                  ff_ready,
  input  logic [DMA_DATA_W-1:0] ff_data,
  // MAC stream
  output logic [DATA_W-1:0]     m_axis_tdata,
  output logic [DB-1:0]         m_axis_tkeep,
  output logic                  m_axis_tvalid,
  input  logic                  m_axis_tready,
  output logic                  m_axis_tlast,
  // events
  output logic                  rel_word,     // a FIFO word was used up
  output logic                  rel_frame     // a frame's last beat went out
);
  localparam int unsigned R   = DMA_DATA_W / DATA_W;
  localparam int unsigned LWD = $clog2(DB);
  localparam int unsigned SW  = (R > 1) ? $clog2(R) : 1;

  initial begin
    if (DB < 8 || DMA_DATA_W % DATA_W != 0 || (R & (R - 1)) != 0) begin
      $fatal(1, "tx_egress: DMA_DATA_W must be DATA_W times a power of two");
    end
  end

  typedef struct packed {
    logic [15:0] len;
    logic        csum_en;
    logic [15:0] csum_pos;
    logic [15:0] csum;
  } note_t;

  note_t note;
  logic  note_valid, note_in_ready;
  logic [$clog2(FRAMES):0] note_count;

  sync_fifo #(.WIDTH($bits(note_t)), .DEPTH(FRAMES)) u_notes (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (eg_valid),
    .in_ready  (note_in_ready),
    .in_data   ({eg_len, eg_csum_en, eg_csum_pos, eg_csum}),
    .out_valid (note_valid),
    .out_ready (rel_frame),
    .out_data  (note),
    .count     (note_count)
  );

  logic [SW-1:0] sub_q;       // beat within the FIFO word
  logic [15:0]   off_q;       // frame offset of the beat's byte 0
  logic [15:0]   rem, rem_d, wire_len;
  logic          fire, beyond, data_last;
  logic [DATA_W-1:0] beat;

  assign wire_len  = (note.len < 16'(TX_MIN_FRAME_LEN)) ? 16'(TX_MIN_FRAME_LEN) : note.len;
  assign rem       = wire_len - off_q;
  assign rem_d     = note.len - off_q;            // data bytes left (the FIFO's)
  assign beyond    = note.len <= off_q;           // a padding beat: no FIFO word
  assign data_last = rem_d <= 16'(DB);
  assign fire = m_axis_tvalid && m_axis_tready;

  if (R > 1) begin : g_cut
    assign beat = ff_data[sub_q * DATA_W +: DATA_W];
  end else begin : g_whole
    assign beat = ff_data;
    logic unused_sub;
    assign unused_sub = ^sub_q;
  end

  always_comb begin
    for (int j = 0; j < DB; j++) m_axis_tdata[8 * j +: 8] = (16'(j) < rem_d && !beyond) ? beat[8 * j +: 8] : 8'd0;
    if (note.csum_en && note.csum_pos[15:LWD] == off_q[15:LWD]) begin
      m_axis_tdata[8 * note.csum_pos[LWD-1:0] +: 8]      = note.csum[15:8];
      m_axis_tdata[8 * note.csum_pos[LWD-1:0] + 8 +: 8]  = note.csum[7:0];
    end
    for (int j = 0; j < DB; j++) m_axis_tkeep[j] = 16'(j) < rem;
  end

  assign m_axis_tvalid = note_valid && (ff_valid || beyond);
  assign m_axis_tlast  = rem <= 16'(DB);
  assign ff_ready      = fire && !beyond && (data_last || 32'(sub_q) == R - 1);
  assign rel_word      = ff_ready;
  assign rel_frame     = fire && m_axis_tlast;

  always_ff @(posedge clk) begin
    if (rst) begin
      sub_q <= '0;
      off_q <= '0;
    end else if (fire) begin
      if (m_axis_tlast) begin
        sub_q <= '0;
        off_q <= '0;
      end else begin
        sub_q <= (32'(sub_q) == R - 1) ? '0 : sub_q + 1'b1;
        off_q <= off_q + 16'(DB);
      end
    end
  end

`ifndef SYNTHESIS
  // Simulation checks start at the first reset: before it every register may hold anything
  // (Verilator --x-initial unique may even show an edge at time 0; xrandom in
  // tests/rtl/test_protocol_bugs.py). Simulation-only code, not part of the design.
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen && eg_valid && !note_in_ready) $error("tx_egress: note FIFO overflow");
  end
`endif

  logic unused;
  assign unused = ^{note_in_ready, note_count, off_q[LWD-1:0]};
endmodule
