// RX port front end: accepts the MAC's AXI-Stream at one beat per cycle (tready is high
// whenever the NIC is out of reset: a MAC cannot be stalled), packs its beats into words of the
// DMA width (FIFO_W = R * DATA_W; a frame always starts a new word) for the frame FIFO, and at the frame's last beat decides whether it is kept. The first matching rule of
// docs/rx-rules.md §1 counts a dropped frame: bad FCS, runt, oversize, FIFO full.
//
// Stream rules: tkeep is all ones except on the last beat, where it is contiguous from bit 0.
// Reset: synchronous, active high; a frame in progress is forgotten.
module rx_ingress #(
  parameter int unsigned DATA_W = 64,
  parameter int unsigned FIFO_W = DATA_W   // frame FIFO word: DATA_W times a power of two
) (
  input  logic                clk,
  input  logic                rst,
  // MAC side
  input  logic [DATA_W-1:0]   s_axis_tdata,
  input  logic [DATA_W/8-1:0] s_axis_tkeep,
  input  logic                s_axis_tvalid,
  output logic                s_axis_tready,
  input  logic                s_axis_tlast,
  input  logic                s_axis_tuser,     // bad frame (FCS error), valid with tlast
  // configuration
  input  logic [15:0]         max_frame_len,
  input  logic                frame_room,       // the metadata path can take one more frame
  // frame FIFO write side
  output logic                fifo_wr_valid,
  output logic [FIFO_W-1:0]   fifo_wr_data,
  input  logic                fifo_wr_full,
  output logic                fifo_wr_end,
  output logic                fifo_wr_keep,
  // frame end event, for the parser (same cycle as the last beat)
  output logic                frame_end,
  output logic                frame_keep,
  output logic [15:0]         frame_len,
  // drop events (one-cycle pulses, one per dropped frame)
  output logic                drop_fcs,
  output logic                drop_runt,
  output logic                drop_oversize,
  output logic                drop_fifo
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned MIN_FRAME = 60;

  localparam int unsigned R  = FIFO_W / DATA_W;   // MAC beats per FIFO word
  localparam int unsigned RW = (R > 1) ? $clog2(R) : 1;

  initial begin
    if (DATA_W < 64 || DATA_W > 512 || (DATA_W & (DATA_W - 1)) != 0) begin
      $fatal(1, "rx_ingress: DATA_W must be a power of two from 64 to 512");
    end
    if (FIFO_W < DATA_W || FIFO_W % DATA_W != 0 || (R & (R - 1)) != 0) begin
      $fatal(1, "rx_ingress: FIFO_W must be DATA_W times a power of two");
    end
  end

  logic        beat;
  logic [15:0] len_q, len_d;          // bytes of the current frame so far (saturating)
  logic        oversize_q, overflow_q;
  logic        oversize_d, overflow_d;
  logic [$clog2(DB):0] beat_bytes;
  logic [16:0] len_sum;

  assign s_axis_tready = !rst;
  assign beat = s_axis_tvalid && s_axis_tready;

  always_comb begin
    beat_bytes = '0;
    for (int i = 0; i < DB; i++) begin
      beat_bytes = beat_bytes + {{$clog2(DB){1'b0}}, s_axis_tkeep[i]};
    end
  end

  assign len_sum = {1'b0, len_q} + {{(17 - $clog2(DB) - 1){1'b0}}, beat_bytes};
  assign len_d   = len_sum[16] ? 16'hFFFF : len_sum[15:0];
  assign oversize_d = oversize_q || len_sum[16] || (len_d > max_frame_len);  // >= 64 KiB: over any limit, 0xFFFF too

  // Pack beats into FIFO words; a word goes to the FIFO when full or at the frame's end.
  // Nothing is stored once the frame is lost (oversize frames stop using FIFO space).
  logic [RW-1:0]     lane_q;
  logic [FIFO_W-1:0] pack_q, pack_d;
  logic              word_done;

  always_comb begin
    pack_d = pack_q;
    for (int i = 0; i < R; i++) begin
      if (R == 1 || 32'(lane_q) == i) pack_d[i*DATA_W +: DATA_W] = s_axis_tdata;
    end
  end

  assign word_done     = s_axis_tlast || (R == 1) || (32'(lane_q) == R - 1);
  assign fifo_wr_valid = beat && word_done && !oversize_d && !overflow_q;
  assign fifo_wr_data  = pack_d;
  assign overflow_d    = overflow_q || (fifo_wr_valid && fifo_wr_full);

  always_comb begin
    drop_fcs      = 1'b0;
    drop_runt     = 1'b0;
    drop_oversize = 1'b0;
    drop_fifo     = 1'b0;
    frame_keep    = 1'b0;
    if (beat && s_axis_tlast) begin
      if (s_axis_tuser)                    drop_fcs      = 1'b1;
      else if (len_d < 16'(MIN_FRAME))     drop_runt     = 1'b1;
      else if (oversize_d)                 drop_oversize = 1'b1;
      else if (overflow_d || !frame_room)  drop_fifo     = 1'b1;
      else                                 frame_keep    = 1'b1;
    end
  end

  assign frame_end    = beat && s_axis_tlast;
  assign frame_len    = len_d;
  assign fifo_wr_end  = frame_end;
  assign fifo_wr_keep = frame_keep;

  always_ff @(posedge clk) begin
    if (rst) begin
      lane_q <= '0;
      pack_q <= '0;
    end else if (beat) begin
      pack_q <= pack_d;
      lane_q <= (word_done || R == 1) ? '0 : lane_q + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      len_q      <= '0;
      oversize_q <= 1'b0;
      overflow_q <= 1'b0;
    end else if (beat) begin
      if (s_axis_tlast) begin
        len_q      <= '0;
        oversize_q <= 1'b0;
        overflow_q <= 1'b0;
      end else begin
        len_q      <= len_d;
        oversize_q <= oversize_d;
        overflow_q <= overflow_d;
      end
    end
  end
endmodule
