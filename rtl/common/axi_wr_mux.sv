// AXI4 write-channel multiplexer: two write masters share one AXI write port.
//
// AW: round robin between the two masters, the grant held while the winner waits (valid stays
// stable, as AXI requires). The order of bursts is decided when the mux first presents an AW,
// not when the AW is accepted: in that cycle a note of its master goes into an order FIFO, and
// AWVALID with the AW payload is then held until AWREADY. W beats are taken from the master
// named at the FIFO's head until that burst's WLAST: W follows AW order, as AXI requires
// without write interleaving, and a burst's W beats may go out before, with or after its AW
// handshake (IHI 0022, A3.3.1: a slave may wait for WVALID before it asserts AWREADY, so W
// must not wait for AWREADY). A master's W beats wait (WREADY low) until the mux has presented
// that burst's AW, as a slave may make them wait; so a master may present W before its AW too.
// B is routed by BID: IDs at or above S1_ID_MIN belong to master 1, the others to master 0.
// Reset: synchronous, active high; do not reset with bursts in flight.
module axi_wr_mux #(
  parameter int unsigned DATA_W    = 128,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned ID_W      = 5,
  parameter int unsigned S1_ID_MIN = 8,
  parameter int unsigned DEPTH     = 8      // presented AW bursts whose W beats are not all out
) (
  input  logic                         clk,
  input  logic                         rst,
  // masters (index 0 and 1)
  input  logic [1:0][ID_W-1:0]         s_awid,
  input  logic [1:0][ADDR_W-1:0]       s_awaddr,
  input  logic [1:0][7:0]              s_awlen,
  input  logic [1:0][2:0]              s_awsize,
  input  logic [1:0][1:0]              s_awburst,
  input  logic [1:0]                   s_awvalid,
  output logic [1:0]                   s_awready,
  input  logic [1:0][DATA_W-1:0]       s_wdata,
  input  logic [1:0][DATA_W/8-1:0]     s_wstrb,
  input  logic [1:0]                   s_wlast,
  input  logic [1:0]                   s_wvalid,
  output logic [1:0]                   s_wready,
  output logic [1:0]                   s_bvalid,
  input  logic [1:0]                   s_bready,
  // the shared port
  output logic [ID_W-1:0]              m_awid,
  output logic [ADDR_W-1:0]            m_awaddr,
  output logic [7:0]                   m_awlen,
  output logic [2:0]                   m_awsize,
  output logic [1:0]                   m_awburst,
  output logic                         m_awvalid,
  input  logic                         m_awready,
  output logic [DATA_W-1:0]            m_wdata,
  output logic [DATA_W/8-1:0]          m_wstrb,
  output logic                         m_wlast,
  output logic                         m_wvalid,
  input  logic                         m_wready,
  input  logic [ID_W-1:0]              m_bid,
  input  logic                         m_bvalid,
  output logic                         m_bready
);
  initial begin
    if (S1_ID_MIN < 1 || S1_ID_MIN >= (1 << ID_W)) $fatal(1, "axi_wr_mux: S1_ID_MIN must be a valid ID above 0");
  end

  logic       gnt_valid, gnt, ord_in_ready, ord_valid, ord_head;
  logic       aw_pend_q;      // the granted AW is presented (order noted), not yet accepted
  logic       aw_new;         // an AW is presented for the first time: its order is noted
  logic [$clog2(DEPTH):0] ord_count;

  rr_arbiter #(.N(2)) u_arb (
    .clk,
    .rst,
    .req       (s_awvalid),
    .accept    (m_awvalid && m_awready),
    .gnt_valid,
    .gnt_idx   (gnt)
  );

  // The arbiter holds the grant while the AW waits, and the master holds its AWVALID, so a
  // presented AW stays presented (with its payload) until accepted, even with the FIFO full.
  assign m_awvalid = gnt_valid && s_awvalid[gnt] && (aw_pend_q || ord_in_ready);
  assign aw_new    = m_awvalid && !aw_pend_q;
  assign m_awid    = s_awid[gnt];
  assign m_awaddr  = s_awaddr[gnt];
  assign m_awlen   = s_awlen[gnt];
  assign m_awsize  = s_awsize[gnt];
  assign m_awburst = s_awburst[gnt];
  always_comb begin
    s_awready      = '0;
    s_awready[gnt] = m_awready && m_awvalid;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      aw_pend_q <= 1'b0;
    end else begin
      aw_pend_q <= m_awvalid && !m_awready;
    end
  end

  sync_fifo #(.WIDTH(1), .DEPTH(DEPTH)) u_order (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (aw_new),
    .in_ready  (ord_in_ready),
    .in_data   (gnt),
    .out_valid (ord_valid),
    .out_ready (m_wvalid && m_wready && m_wlast),
    .out_data  (ord_head),
    .count     (ord_count)
  );

  assign m_wvalid = ord_valid && s_wvalid[ord_head];
  assign m_wdata  = s_wdata[ord_head];
  assign m_wstrb  = s_wstrb[ord_head];
  assign m_wlast  = s_wlast[ord_head];
  always_comb begin
    s_wready           = '0;
    s_wready[ord_head] = m_wready && ord_valid;
  end

  logic b_sel;
  assign b_sel    = 32'(m_bid) >= S1_ID_MIN;
  assign m_bready = s_bready[b_sel];
  always_comb begin
    s_bvalid        = '0;
    s_bvalid[b_sel] = m_bvalid;
  end

  logic unused;
  assign unused = ^ord_count;
endmodule
