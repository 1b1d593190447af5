// Top level of the devmem NIC: RX port (AXI-Stream from the MAC), control (AXI4-Lite slave) and
// one AXI4 DMA master that reads descriptors and writes headers, payload and completions.
//
//   s_axis_rx -> rx_ingress -> rx_frame_fifo -> rx_realign -> rx_split_dma -> axi_dma_wr -> m_axi (AW/W/B)
//                    \-> rx_parser -> metadata FIFO ----------------^
//   rx_desc_fetch (header ring) + rx_desc_fetch (payload ring) ----------------------------> m_axi (AR/R)
//   nic_csr (generated from rtl/csr/nic_csr.rdl) <-> s_axil
//
// This release implements RX queue 0 (NUM_RXQ = 1); the register map already reserves 8.
// AXI IDs: writes use ID 0; descriptor reads use ID 0 (header ring) and 1 (payload ring).
// Reset: `rst` is synchronous and active high for the whole design. After reset every queue is
// disabled, all counters are zero and the RX port accepts and drops (rx_drop_queue_off).
module nic_top
  import nic_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,     // MAC stream width, 64..512
  parameter int unsigned DMA_DATA_W  = DATA_W, // DMA port width (this release: equal to DATA_W)
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 4,
  parameter int unsigned FIFO_BYTES  = 16384,  // RX frame FIFO
  parameter int unsigned META_DEPTH  = 64,     // frames the FIFO may hold at once
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned DESC_CACHE  = 16,     // prefetched descriptors per ring
  parameter int unsigned MAX_BURST   = 256     // AXI burst length limit, beats
) (
  input  logic                    clk,
  input  logic                    rst,

  // RX from the MAC
  input  logic [DATA_W-1:0]       s_axis_rx_tdata,
  input  logic [DATA_W/8-1:0]     s_axis_rx_tkeep,
  input  logic                    s_axis_rx_tvalid,
  output logic                    s_axis_rx_tready,
  input  logic                    s_axis_rx_tlast,
  input  logic                    s_axis_rx_tuser,

  // control
  input  logic                    s_axil_awvalid,
  output logic                    s_axil_awready,
  input  logic [15:0]             s_axil_awaddr,
  input  logic [2:0]              s_axil_awprot,
  input  logic                    s_axil_wvalid,
  output logic                    s_axil_wready,
  input  logic [31:0]             s_axil_wdata,
  input  logic [3:0]              s_axil_wstrb,
  output logic                    s_axil_bvalid,
  input  logic                    s_axil_bready,
  output logic [1:0]              s_axil_bresp,
  input  logic                    s_axil_arvalid,
  output logic                    s_axil_arready,
  input  logic [15:0]             s_axil_araddr,
  input  logic [2:0]              s_axil_arprot,
  output logic                    s_axil_rvalid,
  input  logic                    s_axil_rready,
  output logic [31:0]             s_axil_rdata,
  output logic [1:0]              s_axil_rresp,

  // DMA master
  output logic [ID_W-1:0]         m_axi_awid,
  output logic [ADDR_W-1:0]       m_axi_awaddr,
  output logic [7:0]              m_axi_awlen,
  output logic [2:0]              m_axi_awsize,
  output logic [1:0]              m_axi_awburst,
  output logic                    m_axi_awlock,
  output logic [3:0]              m_axi_awcache,
  output logic [2:0]              m_axi_awprot,
  output logic                    m_axi_awvalid,
  input  logic                    m_axi_awready,
  output logic [DMA_DATA_W-1:0]   m_axi_wdata,
  output logic [DMA_DATA_W/8-1:0] m_axi_wstrb,
  output logic                    m_axi_wlast,
  output logic                    m_axi_wvalid,
  input  logic                    m_axi_wready,
  input  logic [ID_W-1:0]         m_axi_bid,
  input  logic [1:0]              m_axi_bresp,
  input  logic                    m_axi_bvalid,
  output logic                    m_axi_bready,
  output logic [ID_W-1:0]         m_axi_arid,
  output logic [ADDR_W-1:0]       m_axi_araddr,
  output logic [7:0]              m_axi_arlen,
  output logic [2:0]              m_axi_arsize,
  output logic [1:0]              m_axi_arburst,
  output logic                    m_axi_arlock,
  output logic [3:0]              m_axi_arcache,
  output logic [2:0]              m_axi_arprot,
  output logic                    m_axi_arvalid,
  input  logic                    m_axi_arready,
  input  logic [ID_W-1:0]         m_axi_rid,
  input  logic [DMA_DATA_W-1:0]   m_axi_rdata,
  input  logic [1:0]              m_axi_rresp,
  input  logic                    m_axi_rlast,
  input  logic                    m_axi_rvalid,
  output logic                    m_axi_rready
);
  localparam int unsigned FIFO_DEPTH = FIFO_BYTES / (DATA_W / 8);

  initial begin
    if (DMA_DATA_W != DATA_W) $fatal(1, "nic_top: this release needs DMA_DATA_W == DATA_W");
    if (ADDR_W < 32 || ADDR_W > 64) $fatal(1, "nic_top: ADDR_W must be 32..64");
    if (ID_W < 1) $fatal(1, "nic_top: ID_W must be at least 1");
  end

  // ---------------------------------------------------------------- registers
  nic_csr_pkg::nic_csr__in_t  hwif_in;
  /* verilator lint_off UNUSEDSIGNAL */
  nic_csr_pkg::nic_csr__out_t hwif_out;   // queues 1..7 are not implemented in this release
  /* verilator lint_on UNUSEDSIGNAL */

  nic_csr u_csr (
    .clk,
    .rst,
    .s_axil_awready, .s_axil_awvalid, .s_axil_awaddr, .s_axil_awprot,
    .s_axil_wready,  .s_axil_wvalid,  .s_axil_wdata,  .s_axil_wstrb,
    .s_axil_bready,  .s_axil_bvalid,  .s_axil_bresp,
    .s_axil_arready, .s_axil_arvalid, .s_axil_araddr, .s_axil_arprot,
    .s_axil_rready,  .s_axil_rvalid,  .s_axil_rdata,  .s_axil_rresp,
    .hwif_in,
    .hwif_out
  );

  logic        q_enable, q_split_en;
  logic [15:0] q_hds_thresh, q_hdr_buf_bytes;
  logic [3:0]  q_pay_buf_log2;
  logic [63:0] hdr_ring_base, pay_ring_base, cq_base;
  logic [3:0]  hdr_ring_log2, pay_ring_log2, cq_log2;
  logic [15:0] hdr_sw_idx, pay_sw_idx, cq_sw_idx;
  logic [15:0] hdr_hw_idx, pay_hw_idx, cq_hw_idx;

  assign q_enable        = hwif_out.RXQ[0].CTRL.enable.value;
  assign q_split_en      = hwif_out.RXQ[0].CTRL.split_en.value;
  assign q_hds_thresh    = hwif_out.RXQ[0].HDS_THRESH.bytes.value;
  assign q_hdr_buf_bytes = hwif_out.RXQ[0].BUF_SIZE.hdr_buf_bytes.value;
  assign q_pay_buf_log2  = hwif_out.RXQ[0].BUF_SIZE.pay_buf_log2.value;
  assign hdr_ring_base   = {hwif_out.RXQ[0].HDR_RING.BASE_HI.addr.value, hwif_out.RXQ[0].HDR_RING.BASE_LO.addr.value};
  assign pay_ring_base   = {hwif_out.RXQ[0].PAY_RING.BASE_HI.addr.value, hwif_out.RXQ[0].PAY_RING.BASE_LO.addr.value};
  assign cq_base         = {hwif_out.RXQ[0].CQ.BASE_HI.addr.value, hwif_out.RXQ[0].CQ.BASE_LO.addr.value};
  assign hdr_ring_log2   = hwif_out.RXQ[0].HDR_RING.SIZE.log2_entries.value;
  assign pay_ring_log2   = hwif_out.RXQ[0].PAY_RING.SIZE.log2_entries.value;
  assign cq_log2         = hwif_out.RXQ[0].CQ.SIZE.log2_entries.value;
  assign hdr_sw_idx      = hwif_out.RXQ[0].HDR_RING.SW_IDX.idx.value;
  assign pay_sw_idx      = hwif_out.RXQ[0].PAY_RING.SW_IDX.idx.value;
  assign cq_sw_idx       = hwif_out.RXQ[0].CQ.SW_IDX.idx.value;

  // Events counted by the register block.
  logic ev_frame, ev_runt, ev_fcs, ev_oversize, ev_fifo, ev_hdr_err, ev_queue_off;
  logic ev_no_hdr, ev_no_pay, ev_cq_full, ev_wr_err, ev_hdr_rd_err, ev_pay_rd_err;
  logic ev_hdr_desc_err, ev_pay_desc_err;

  always_comb begin
    hwif_in = '{default: '0};
    hwif_in.CAPS.data_bytes.next  = 8'(DATA_W / 8);
    hwif_in.CAPS.dma_bytes.next   = 8'(DMA_DATA_W / 8);
    hwif_in.CAPS.num_rxq.next     = 8'd1;
    hwif_in.CAPS.parse_bytes.next = 8'(PARSE_BYTES);
    hwif_in.RX_FRAMES.count.incr          = ev_frame;
    hwif_in.RX_DROP_RUNT.count.incr       = ev_runt;
    hwif_in.RX_DROP_FCS.count.incr        = ev_fcs;
    hwif_in.RX_DROP_OVERSIZE.count.incr   = ev_oversize;
    hwif_in.RX_DROP_FIFO.count.incr       = ev_fifo;
    hwif_in.RX_DROP_HDR_ERR.count.incr    = ev_hdr_err;
    hwif_in.RX_DROP_QUEUE_OFF.count.incr  = ev_queue_off;
    hwif_in.RX_DROP_NO_HDR_BUF.count.incr = ev_no_hdr;
    hwif_in.RX_DROP_NO_PAY_BUF.count.incr = ev_no_pay;
    hwif_in.RX_DROP_CQ_FULL.count.incr    = ev_cq_full;
    hwif_in.RX_DMA_WR_ERR.count.incr      = ev_wr_err;
    // Both rings cannot fail a read in the same cycle: R beats arrive one per cycle.
    hwif_in.RX_DMA_RD_ERR.count.incr      = ev_hdr_rd_err || ev_pay_rd_err;
    hwif_in.RX_DESC_ERR.count.incr        = ev_hdr_desc_err || ev_pay_desc_err;
    hwif_in.RXQ[0].HDR_RING.HW_IDX.idx.next = hdr_hw_idx;
    hwif_in.RXQ[0].PAY_RING.HW_IDX.idx.next = pay_hw_idx;
    hwif_in.RXQ[0].CQ.HW_IDX.idx.next       = cq_hw_idx;
  end

  // ---------------------------------------------------------------- ingress, FIFO, parser
  logic              fifo_wr_valid, fifo_wr_full, fifo_wr_end, fifo_wr_keep;
  logic [DATA_W-1:0] fifo_wr_data;
  logic              frame_end, frame_keep;
  logic [15:0]       frame_len;
  logic              frame_room;
  logic [$clog2(META_DEPTH):0] frames_q;
  logic              meta_in_valid, meta_valid, meta_ready;
  rx_meta_t          meta_in, meta;

  // Frames kept by the ingress and not yet taken by the DMA engine; the metadata FIFO can
  // always take the parser's result because the ingress never keeps more than META_DEPTH.
  assign frame_room = frames_q < META_DEPTH[$clog2(META_DEPTH):0];
  always_ff @(posedge clk) begin
    if (rst) frames_q <= '0;
    else     frames_q <= frames_q + {{$clog2(META_DEPTH){1'b0}}, frame_keep}
                                  - {{$clog2(META_DEPTH){1'b0}}, meta_valid && meta_ready};
  end

  rx_ingress #(.DATA_W(DATA_W)) u_ingress (
    .clk,
    .rst,
    .s_axis_tdata   (s_axis_rx_tdata),
    .s_axis_tkeep   (s_axis_rx_tkeep),
    .s_axis_tvalid  (s_axis_rx_tvalid),
    .s_axis_tready  (s_axis_rx_tready),
    .s_axis_tlast   (s_axis_rx_tlast),
    .s_axis_tuser   (s_axis_rx_tuser),
    .max_frame_len  (hwif_out.RX_FRAME_LIMIT.max_frame_len.value),
    .frame_room,
    .fifo_wr_valid, .fifo_wr_data, .fifo_wr_full, .fifo_wr_end, .fifo_wr_keep,
    .frame_end, .frame_keep, .frame_len,
    .drop_fcs       (ev_fcs),
    .drop_runt      (ev_runt),
    .drop_oversize  (ev_oversize),
    .drop_fifo      (ev_fifo)
  );

  logic              ff_rd_valid, ff_rd_ready;
  logic [DATA_W-1:0] ff_rd_data;

  rx_frame_fifo #(.DATA_W(DATA_W), .DEPTH(FIFO_DEPTH)) u_frame_fifo (
    .clk,
    .rst,
    .wr_valid (fifo_wr_valid),
    .wr_data  (fifo_wr_data),
    .wr_full  (fifo_wr_full),
    .wr_end   (fifo_wr_end),
    .wr_keep  (fifo_wr_keep),
    .rd_valid (ff_rd_valid),
    .rd_ready (ff_rd_ready),
    .rd_data  (ff_rd_data)
  );

  rx_parser #(.DATA_W(DATA_W), .PARSE_BYTES(PARSE_BYTES)) u_parser (
    .clk,
    .rst,
    .beat_valid (s_axis_rx_tvalid && s_axis_rx_tready),
    .beat_data  (s_axis_rx_tdata),
    .beat_keep  (s_axis_rx_tkeep),
    .beat_last  (s_axis_rx_tlast),
    .frame_keep,
    .frame_len,
    .meta_valid (meta_in_valid),
    .meta       (meta_in)
  );

  logic meta_fifo_in_ready;
  logic [$clog2(META_DEPTH):0] meta_count;
  sync_fifo #(.WIDTH($bits(rx_meta_t)), .DEPTH(META_DEPTH)) u_meta_fifo (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (meta_in_valid),
    .in_ready  (meta_fifo_in_ready),
    .in_data   (meta_in),
    .out_valid (meta_valid),
    .out_ready (meta_ready),
    .out_data  (meta),
    .count     (meta_count)
  );

  // ---------------------------------------------------------------- descriptor fetch
  logic                  hdr_arvalid, hdr_arready, pay_arvalid, pay_arready;
  logic [ADDR_W-1:0]     hdr_araddr, pay_araddr;
  logic [7:0]            hdr_arlen, pay_arlen;
  logic                  hdr_rvalid, pay_rvalid, hdr_rready, pay_rready;
  logic                  hdr_desc_valid, hdr_desc_pop, pay_desc_valid, pay_desc_pop;
  logic [63:0]           hdr_desc_addr, pay_desc_addr;
  logic [15:0]           hdr_desc_id, pay_desc_id, hdr_posted, pay_posted;
  logic [$clog2(DESC_CACHE):0] pay_cached, hdr_cached;

  rx_desc_fetch #(.DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .CACHE_DEPTH(DESC_CACHE)) u_hdr_fetch (
    .clk,
    .rst,
    .enable      (q_enable),
    .ring_base   (hdr_ring_base),
    .ring_log2   (hdr_ring_log2),
    .sw_idx      (hdr_sw_idx),
    .m_arvalid   (hdr_arvalid),
    .m_arready   (hdr_arready),
    .m_araddr    (hdr_araddr),
    .m_arlen     (hdr_arlen),
    .m_rvalid    (hdr_rvalid),
    .m_rready    (hdr_rready),
    .m_rdata     (m_axi_rdata),
    .m_rresp     (m_axi_rresp),
    .m_rlast     (m_axi_rlast),
    .desc_valid  (hdr_desc_valid),
    .desc_pop    (hdr_desc_pop),
    .desc_addr   (hdr_desc_addr),
    .desc_buf_id (hdr_desc_id),
    .cache_count (hdr_cached),
    .hw_idx      (hdr_hw_idx),
    .posted      (hdr_posted),
    .rd_err      (ev_hdr_rd_err),
    .desc_err    (ev_hdr_desc_err)
  );

  rx_desc_fetch #(.DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .CACHE_DEPTH(DESC_CACHE)) u_pay_fetch (
    .clk,
    .rst,
    .enable      (q_enable),
    .ring_base   (pay_ring_base),
    .ring_log2   (pay_ring_log2),
    .sw_idx      (pay_sw_idx),
    .m_arvalid   (pay_arvalid),
    .m_arready   (pay_arready),
    .m_araddr    (pay_araddr),
    .m_arlen     (pay_arlen),
    .m_rvalid    (pay_rvalid),
    .m_rready    (pay_rready),
    .m_rdata     (m_axi_rdata),
    .m_rresp     (m_axi_rresp),
    .m_rlast     (m_axi_rlast),
    .desc_valid  (pay_desc_valid),
    .desc_pop    (pay_desc_pop),
    .desc_addr   (pay_desc_addr),
    .desc_buf_id (pay_desc_id),
    .cache_count (pay_cached),
    .hw_idx      (pay_hw_idx),
    .posted      (pay_posted),
    .rd_err      (ev_pay_rd_err),
    .desc_err    (ev_pay_desc_err)
  );

  // Read address arbiter: alternate between the rings; a granted request is held until
  // accepted, as AXI requires.
  logic ar_sel_q, ar_hold_q, ar_sel;
  always_comb begin
    if (ar_hold_q)                    ar_sel = ar_sel_q;
    else if (hdr_arvalid && pay_arvalid) ar_sel = !ar_sel_q;
    else                              ar_sel = pay_arvalid;
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      ar_sel_q  <= 1'b0;
      ar_hold_q <= 1'b0;
    end else begin
      ar_sel_q  <= ar_sel;
      ar_hold_q <= m_axi_arvalid && !m_axi_arready;
    end
  end

  assign m_axi_arvalid = ar_sel ? pay_arvalid : hdr_arvalid;
  assign m_axi_araddr  = ar_sel ? pay_araddr : hdr_araddr;
  assign m_axi_arlen   = ar_sel ? pay_arlen : hdr_arlen;
  assign m_axi_arid    = ID_W'(ar_sel);
  assign hdr_arready   = !ar_sel && m_axi_arready;
  assign pay_arready   = ar_sel && m_axi_arready;
  assign m_axi_arsize  = 3'($clog2(DMA_DATA_W / 8));
  assign m_axi_arburst = 2'b01;
  assign m_axi_arlock  = 1'b0;
  assign m_axi_arcache = 4'b0011;
  assign m_axi_arprot  = 3'b000;

  assign hdr_rvalid   = m_axi_rvalid && (m_axi_rid == ID_W'(0));
  assign pay_rvalid   = m_axi_rvalid && (m_axi_rid == ID_W'(1));
  assign m_axi_rready = (m_axi_rid == ID_W'(0)) ? hdr_rready : pay_rready;

  // ---------------------------------------------------------------- split DMA
  logic              rng_valid, rng_ready, rng_emit, rng_frame_end, rng_done;
  logic [15:0]       rng_end;
  logic              ra_valid, ra_ready;
  logic [DATA_W-1:0] ra_data;
  logic              wr_cmd_valid, wr_cmd_ready, wr_valid, wr_ready;
  logic [ADDR_W-1:0] wr_cmd_addr;
  logic [16:0]       wr_cmd_len;
  logic [DATA_W-1:0] wr_data;

  rx_realign #(.DATA_W(DATA_W)) u_realign (
    .clk,
    .rst,
    .in_valid      (ff_rd_valid),
    .in_ready      (ff_rd_ready),
    .in_data       (ff_rd_data),
    .rng_valid, .rng_ready, .rng_end, .rng_emit, .rng_frame_end, .rng_done,
    .out_valid     (ra_valid),
    .out_ready     (ra_ready),
    .out_data      (ra_data)
  );

  rx_split_dma #(
    .DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .PARSE_BYTES(PARSE_BYTES), .CACHE_DEPTH(DESC_CACHE), .QUEUE(0)
  ) u_split_dma (
    .clk,
    .rst,
    .meta_valid, .meta_ready, .meta,
    .enable        (q_enable),
    .split_en      (q_split_en),
    .hds_thresh    (q_hds_thresh),
    .hdr_buf_bytes (q_hdr_buf_bytes),
    .pay_buf_log2  (q_pay_buf_log2),
    .cq_base, .cq_log2, .cq_sw_idx, .cq_hw_idx,
    .hdr_desc_valid, .hdr_desc_pop, .hdr_desc_addr, .hdr_desc_id, .hdr_posted,
    .pay_desc_valid, .pay_desc_pop, .pay_desc_addr, .pay_desc_id, .pay_posted, .pay_cached,
    .rng_valid, .rng_ready, .rng_end, .rng_emit, .rng_frame_end, .rng_done,
    .ra_valid, .ra_ready, .ra_data,
    .wr_cmd_valid, .wr_cmd_ready, .wr_cmd_addr, .wr_cmd_len,
    .wr_valid, .wr_ready, .wr_data,
    .ev_frame,
    .ev_drop_hdr_err    (ev_hdr_err),
    .ev_drop_queue_off  (ev_queue_off),
    .ev_drop_no_hdr_buf (ev_no_hdr),
    .ev_drop_no_pay_buf (ev_no_pay),
    .ev_drop_cq_full    (ev_cq_full)
  );

  axi_dma_wr #(.DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .MAX_BURST(MAX_BURST)) u_dma_wr (
    .clk,
    .rst,
    .cmd_valid (wr_cmd_valid),
    .cmd_ready (wr_cmd_ready),
    .cmd_addr  (wr_cmd_addr),
    .cmd_len   (wr_cmd_len),
    .in_valid  (wr_valid),
    .in_ready  (wr_ready),
    .in_data   (wr_data),
    .m_awaddr  (m_axi_awaddr),
    .m_awlen   (m_axi_awlen),
    .m_awsize  (m_axi_awsize),
    .m_awburst (m_axi_awburst),
    .m_awvalid (m_axi_awvalid),
    .m_awready (m_axi_awready),
    .m_wdata   (m_axi_wdata),
    .m_wstrb   (m_axi_wstrb),
    .m_wlast   (m_axi_wlast),
    .m_wvalid  (m_axi_wvalid),
    .m_wready  (m_axi_wready),
    .m_bresp   (m_axi_bresp),
    .m_bvalid  (m_axi_bvalid),
    .m_bready  (m_axi_bready),
    .b_err     (ev_wr_err),
    .idle      (dma_wr_idle)
  );

  logic dma_wr_idle;
  assign m_axi_awid    = '0;
  assign m_axi_awlock  = 1'b0;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot  = 3'b000;

  // Ports and results kept for interface completeness.
  logic unused;
  assign unused = ^{m_axi_bid, meta_fifo_in_ready, meta_count, frame_end, hdr_cached, dma_wr_idle};
endmodule
