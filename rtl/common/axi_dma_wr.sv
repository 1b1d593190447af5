// AXI4 write master for "write these bytes at this address" commands.
//
// A command (addr, len bytes) becomes one or more INCR bursts, split so that none crosses a
// 4 KiB boundary (AXI rule) or exceeds MAX_BURST beats. The data comes as lane-aligned beats
// on `in_*`: byte i of the region sits in lane (addr + i) mod DB, so a command whose address is
// aligned takes plain beats, and an unaligned one (a 16-byte completion inside a wide beat)
// takes the bytes already shifted into place. Write strobes cover exactly the region, and
// within it only the lanes `in_strb` sets on each beat (a source that fills a beat with the
// bytes of several payloads leaves the gaps between them unwritten; all ones otherwise).
//
// Address and data are independent, as AXI requires (IHI 0022, A3.3.1: a master must not
// wait for AWREADY before it asserts WVALID; a slave may wait for WVALID before AWREADY).
// A burst is issued when its AW is first presented: in that cycle its note (beats, strobes)
// goes to the data side, so the burst's W beats may be presented before, with or after its AW
// handshake; AWVALID and the AW payload then stay stable until AWREADY. The address side may
// run up to 4 bursts ahead of the data side; the data side is never more than the one burst
// whose AW is presented ahead of the address handshakes. `burst_issue` pulses with each
// issued burst (ID on m_awid): issued bursts minus B responses are the bursts in flight.
//
// Write responses are accepted at once; SLVERR/DECERR raise `b_err` for one cycle.
// Reset: synchronous, active high; do not reset with bursts in flight.
module axi_dma_wr #(
  parameter int unsigned DATA_W    = 64,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned MAX_BURST = 256,  // beats, 1..256
  parameter int unsigned ID_W      = 4
) (
  input  logic                clk,
  input  logic                rst,
  // command
  input  logic                cmd_valid,
  output logic                cmd_ready,
  input  logic [ADDR_W-1:0]   cmd_addr,
  input  logic [16:0]         cmd_len,      // bytes, >= 1
  input  logic [ID_W-1:0]     cmd_id,       // AXI ID of the command's bursts
  // data
  input  logic                in_valid,
  output logic                in_ready,
  input  logic [DATA_W-1:0]   in_data,
  input  logic [DATA_W/8-1:0] in_strb,      // lanes of this beat to write (within the region)
  // AXI4 write channels
  output logic [ID_W-1:0]     m_awid,
  output logic [ADDR_W-1:0]   m_awaddr,
  output logic [7:0]          m_awlen,
  output logic [2:0]          m_awsize,
  output logic [1:0]          m_awburst,
  output logic                m_awvalid,
  input  logic                m_awready,
  output logic [DATA_W-1:0]   m_wdata,
  output logic [DATA_W/8-1:0] m_wstrb,
  output logic                m_wlast,
  output logic                m_wvalid,
  input  logic                m_wready,
  input  logic [ID_W-1:0]     m_bid,
  input  logic [1:0]          m_bresp,
  input  logic                m_bvalid,
  output logic                m_bready,
  output logic                b_err,        // with b_err_id: the ID of the failed burst
  output logic [ID_W-1:0]     b_err_id,
  output logic                burst_issue, // a burst's AW is presented for the first time
  output logic                idle         // no command or burst in progress
);
  localparam int unsigned DB  = DATA_W / 8;
  localparam int unsigned LW  = $clog2(DB);          // lane index width
  localparam int unsigned BW  = 9;                   // burst beat count width (1..256)

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "axi_dma_wr: DATA_W must be a power of two >= 64");
    if (MAX_BURST < 1 || MAX_BURST > 256) $fatal(1, "axi_dma_wr: MAX_BURST must be 1..256");
  end

  typedef struct packed {
    logic [BW-1:0] beats;
    logic          first;      // first burst of the command
    logic          last;       // last burst of the command
    logic [LW-1:0] start_lane;
    logic [LW-1:0] end_lane;   // lanes [0, end_lane) of the command's last beat; 0 = all
  } burst_t;

  // ---------------------------------------------------------------- address side
  logic          aw_active_q, aw_first_q;
  logic          aw_pend_q;            // the burst's AW is presented (note queued), not accepted
  logic [ID_W-1:0] aw_id_q;
  logic [ADDR_W-1:0] aw_addr_q;        // next burst address, aligned to DB
  logic [13:0]   beats_left_q;         // beats of the command not yet issued
  logic [LW-1:0] start_lane_q, end_lane_q;
  logic [12:0]   to_4k;                // beats until the next 4 KiB boundary (up to 512)
  logic [BW-1:0] burst_beats;
  logic          wq_in_ready, aw_fire;
  burst_t        wq_in, wq_out;
  logic          wq_out_valid, wq_out_ready;
  logic [17:0]   total_bytes;
  logic [2:0]    wq_count;    // unused: the queue's own in_ready is the flow control

  assign to_4k = (13'h1000 - {1'b0, aw_addr_q[11:0]}) >> LW;

  always_comb begin
    burst_beats = BW'(MAX_BURST);
    if (to_4k < {4'd0, burst_beats}) burst_beats = BW'(to_4k);
    if (beats_left_q < {5'd0, burst_beats}) burst_beats = BW'(beats_left_q);
  end

  // A new command is taken while the previous one issues its last burst: one command per cycle.
  assign cmd_ready = !aw_active_q || (aw_fire && wq_in.last);
  assign total_bytes = {1'b0, cmd_len} + {{(18 - LW){1'b0}}, cmd_addr[LW-1:0]};

  // A burst is issued (its note queued) in the first cycle its AW is presented; from then on
  // AWVALID is held until AWREADY, whatever the data side's queue does.
  assign burst_issue = aw_active_q && !aw_pend_q && wq_in_ready;
  assign m_awvalid = aw_active_q && (aw_pend_q || wq_in_ready);
  assign m_awid    = aw_id_q;
  assign m_awaddr  = aw_addr_q;
  assign m_awlen   = 8'(burst_beats - 1'b1);
  assign m_awsize  = 3'(LW);
  assign m_awburst = 2'b01;               // INCR
  assign aw_fire   = m_awvalid && m_awready;

  assign wq_in.beats      = burst_beats;
  assign wq_in.first      = aw_first_q;
  assign wq_in.last       = ({5'd0, burst_beats} == beats_left_q);
  assign wq_in.start_lane = start_lane_q;
  assign wq_in.end_lane   = end_lane_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      aw_pend_q <= 1'b0;
    end else begin
      aw_pend_q <= m_awvalid && !m_awready;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      aw_active_q <= 1'b0;
    end else if (cmd_valid && cmd_ready) begin
      aw_active_q <= 1'b1;
    end else if (aw_fire && wq_in.last) begin
      aw_active_q <= 1'b0;
    end
  end

  always_ff @(posedge clk) begin
    if (cmd_valid && cmd_ready) begin
      aw_addr_q    <= {cmd_addr[ADDR_W-1:LW], {LW{1'b0}}};
      beats_left_q <= 14'((total_bytes + 18'(DB - 1)) >> LW);
      start_lane_q <= cmd_addr[LW-1:0];
      end_lane_q   <= LW'(cmd_addr[LW-1:0] + cmd_len[LW-1:0]);
      aw_first_q   <= 1'b1;
      aw_id_q      <= cmd_id;
    end else if (aw_fire) begin
      aw_addr_q    <= aw_addr_q + ADDR_W'({burst_beats, {LW{1'b0}}});
      beats_left_q <= beats_left_q - {5'd0, burst_beats};
      aw_first_q   <= 1'b0;
    end
  end

  sync_fifo #(.WIDTH($bits(burst_t)), .DEPTH(4)) u_wq (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (burst_issue),
    .in_ready  (wq_in_ready),
    .in_data   (wq_in),
    .out_valid (wq_out_valid),
    .out_ready (wq_out_ready),
    .out_data  (wq_out),
    .count     (wq_count)
  );

  // ---------------------------------------------------------------- data side
  logic [BW-1:0] wbeat_q;
  logic          w_first_beat, w_last_beat, w_fire;
  logic [DB-1:0] strb_lo, strb_hi;

  assign w_first_beat = wq_out.first && (wbeat_q == '0);
  assign w_last_beat  = wq_out.last && (wbeat_q == wq_out.beats - 1'b1);
  assign strb_lo      = w_first_beat ? ({DB{1'b1}} << wq_out.start_lane) : {DB{1'b1}};
  assign strb_hi      = (w_last_beat && wq_out.end_lane != '0) ? ~({DB{1'b1}} << wq_out.end_lane)
                                                                 : {DB{1'b1}};

  assign m_wvalid     = wq_out_valid && in_valid;
  assign in_ready     = wq_out_valid && m_wready;
  assign m_wdata      = in_data;
  assign m_wstrb      = strb_lo & strb_hi & in_strb;
  assign m_wlast      = (wbeat_q == wq_out.beats - 1'b1);
  assign w_fire       = m_wvalid && m_wready;
  assign wq_out_ready = w_fire && m_wlast;

  always_ff @(posedge clk) begin
    if (rst) begin
      wbeat_q <= '0;
    end else if (w_fire) begin
      wbeat_q <= m_wlast ? '0 : wbeat_q + 1'b1;
    end
  end

  // ---------------------------------------------------------------- responses
  assign m_bready = 1'b1;
  assign b_err    = m_bvalid && m_bresp[1];
  assign b_err_id = m_bid;
  assign idle     = !aw_active_q && !wq_out_valid;

  logic unused;
  assign unused = ^{m_bresp[0], wq_count};
endmodule
