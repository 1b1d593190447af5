// Top level of the devmem NIC: RX port (AXI-Stream from the MAC), TX port (AXI-Stream to the
// MAC), control (AXI4-Lite slave) and one AXI4 DMA master that reads descriptors and TX
// segments and writes headers, payload and completions.
//
//   s_axis_rx ─► rx_ingress ─► rx_frame_fifo ─────────────────────► rx_dma ──────┐
//                  └─► rx_parser ─► rx_classify (RSS, steering) ─► metadata FIFO ─┘ (writer 0)
//   rx_desc_engine (every RX queue's header and payload ring) ────────────────┐    │
//   tx_engine (rtl/tx, docs/tx.md):                                            │    ▼
//     tx_desc_engine (every TX queue's ring) ─► tx_sched ─► segment reads ──────┤  axi_wr_mux ─► m_axi AW/W/B
//     R ─► tx_gather ─► tx_store (tx_csum, TX FIFO) ─► tx_egress ─► m_axis_tx  │    ▲
//     tx_cpl_wr (completions, writer 1) ───────────────────────────────────────┼────┘
//   AR: round robin over all readers ◄─────────────────────────────────────────┘ ─► m_axi AR/R
//   nic_csr (generated from rtl/csr/nic_csr.rdl) ◄─► s_axil;  irq[q] per RX queue, tx_irq[t] per TX queue
//
// AXI IDs: reads: RX queue q's descriptor rings q (header) and NUM_RXQ + q (payload), TX queue t's
// descriptor ring 16 + t, TX segment data 24 (one ID, so data returns in request order).
// Writes: RX queue q uses ID q, TX queue t's completions 8 + t. R and B route by ID; each
// queue's writes stay in order. The write port is shared round robin per burst, W in AW order.
// Reset: `rst` is synchronous and active high for the whole design. After reset every queue is
// disabled, all counters are zero, the RX port accepts and drops (rx_drop_queue_off) and
// m_axis_tx_tvalid is low.
module nic_top
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,     // MAC stream width, 64..512
  parameter int unsigned DMA_DATA_W  = 2 * DATA_W, // DMA port width (AXI allows up to 1024)
  parameter int unsigned NUM_RXQ     = 8,      // RX queues, 1..8 (the register map has 8)
  parameter int unsigned NUM_TXQ     = 4,      // TX queues, 1..8 (the register map has 8)
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 5,      // IDs up to 24 (TX segment reads)
  parameter int unsigned FIFO_BYTES  = 16384,  // RX frame FIFO
  parameter int unsigned TX_FIFO_BYTES = 16384, // TX store-and-forward FIFO (power of two, >= 16 KiB)
  parameter int unsigned META_DEPTH  = 64,     // frames the FIFO may hold at once
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned DESC_CACHE  = 16,     // prefetched descriptors per ring
  parameter int unsigned RX_DESC_BATCH = 16,   // descriptors one RX ring's prefetch read carries at most (<= DESC_CACHE)
  parameter int unsigned MAX_BURST   = 256,    // AXI burst length limit, beats
  parameter int unsigned CPL_BATCH   = 16,     // RX completions one batch holds (COALESCE.frames_max)
  parameter int unsigned CYCLES_PER_US = 250   // clock cycles per microsecond (RXQ/TXQ COALESCE.usecs)
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

  // TX to the MAC
  output logic [DATA_W-1:0]       m_axis_tx_tdata,
  output logic [DATA_W/8-1:0]     m_axis_tx_tkeep,
  output logic                    m_axis_tx_tvalid,
  input  logic                    m_axis_tx_tready,
  output logic                    m_axis_tx_tlast,

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
  output logic                    m_axi_rready,

  // one interrupt line per RX queue and per TX queue (a one-cycle pulse per interrupt)
  output logic [NUM_RXQ-1:0]      irq,
  output logic [NUM_TXQ-1:0]      tx_irq
);
  localparam int unsigned DMA_BYTES  = DMA_DATA_W / 8;
  localparam int unsigned FIFO_DEPTH = FIFO_BYTES / DMA_BYTES;
  localparam int unsigned CW         = $clog2(DESC_CACHE) + 1;
  localparam int unsigned NRD        = 2 * NUM_RXQ;            // RX descriptor rings (ARID 0..NRD-1)
  localparam int unsigned NAR        = 3;                      // AXI readers: RX rings, TX rings, TX data
  localparam int unsigned QW         = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1;
  localparam int unsigned AIW        = $clog2(NAR);
  localparam int unsigned TX_DESC_ID = 16;
  localparam int unsigned TX_DATA_ID = 24;

  initial begin
    if (DMA_DATA_W < DATA_W || DMA_DATA_W > 1024 || DMA_DATA_W % DATA_W != 0 ||
        ((DMA_DATA_W / DATA_W) & (DMA_DATA_W / DATA_W - 1)) != 0) begin
      $fatal(1, "nic_top: DMA_DATA_W must be DATA_W times a power of two, at most 1024");
    end
    if (NUM_RXQ < 1 || NUM_RXQ > 8) $fatal(1, "nic_top: NUM_RXQ must be 1..8");
    if (ADDR_W < 32 || ADDR_W > 64) $fatal(1, "nic_top: ADDR_W must be 32..64");
    if (NUM_TXQ < 1 || NUM_TXQ > 8) $fatal(1, "nic_top: NUM_TXQ must be 1..8");
    if (ID_W < 5) $fatal(1, "nic_top: ID_W must be at least 5 (TX data reads use ID 24)");
  end

  // ---------------------------------------------------------------- registers
  nic_csr_pkg::nic_csr__in_t  hwif_in;
  /* verilator lint_off UNUSEDSIGNAL */
  nic_csr_pkg::nic_csr__out_t hwif_out;   // some generated fields (e.g. CAPS values) are not read back here
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

  // Per-queue configuration: RXQ[] and TXQ[] are the CSR block's external blocks RXQ_BLOCK and
  // TXQ_BLOCK, held by rxq_regs / txq_regs (instantiated below, after the signals they show).
  localparam int unsigned QMAP = 8;                // RXQ[8] and TXQ[8] in nic_csr.rdl
  logic [NUM_RXQ-1:0]       q_enable, q_split_en, q_irq_arm, q_pay_mpb;
  logic [NUM_RXQ-1:0][15:0] q_hds_thresh, q_hdr_buf_bytes, q_coal_usecs;
  logic [NUM_RXQ-1:0][3:0]  q_pay_buf_log2, q_pay_stride_log2;
  logic [NUM_RXQ-1:0][7:0]  q_coal_frames;
  logic [NUM_RXQ-1:0][63:0] hdr_ring_base, pay_ring_base, cq_base;
  logic [NUM_RXQ-1:0][3:0]  hdr_ring_log2, pay_ring_log2, cq_log2;
  logic [NUM_RXQ-1:0][15:0] hdr_sw_idx, pay_sw_idx, cq_sw_idx;
  logic [NUM_RXQ-1:0][15:0] hdr_hw_idx, pay_hw_idx, cq_hw_idx;

  rxq_cfg_t                 qcfg [NUM_RXQ];

  for (genvar q = 0; q < NUM_RXQ; q++) begin : g_qcfg
    assign qcfg[q] = '{enable: q_enable[q], split_en: q_split_en[q], hds_thresh: q_hds_thresh[q],
                       hdr_buf_bytes: q_hdr_buf_bytes[q], pay_buf_log2: q_pay_buf_log2[q],
                       cq_base: cq_base[q], cq_log2: cq_log2[q], cq_sw_idx: cq_sw_idx[q],
                       pay_mpb: q_pay_mpb[q], pay_stride_log2: q_pay_stride_log2[q],
                       coal_usecs: q_coal_usecs[q], coal_frames: q_coal_frames[q]};
  end

  // Events counted by the register block.
  logic ev_frame, ev_runt, ev_fcs, ev_oversize, ev_fifo, ev_hdr_err, ev_queue_off;
  logic ev_no_hdr, ev_no_pay, ev_cq_full, ev_wr_err, ev_hdr_overflow;
  logic ev_steer_bad_queue, ev_rss_bad_queue;
  logic               ev_rd_err, ev_desc_err;
  logic [NUM_RXQ-1:0] q_wr_err, q_busy, irq_fire;
  logic               meta_in_valid;
  rx_meta_t           meta_in;

  // TX queue settings and state.
  txq_cfg_t [NUM_TXQ-1:0]   txq_cfg;
  logic [NUM_TXQ-1:0][15:0] tx_desc_hw_idx, tx_cq_hw_idx;
  logic [NUM_TXQ-1:0]       tx_q_busy, tx_q_wr_err, tx_irq_fire;
  logic                     tx_ev_valid;
  tx_status_e               tx_ev_status;
  logic [15:0]              tx_ev_len;
  logic                     tx_ev_tso;        // a TSO send's end: its segments and their bytes
  logic [15:0]              tx_ev_tso_segs;
  logic [17:0]              tx_ev_tso_bytes;

  logic [NUM_TXQ-1:0]       txq_enable, txq_inline_en, txq_irq_arm, tx_q_halted;
  logic [NUM_TXQ-1:0][63:0] txq_ring_base, txq_cq_base;
  logic [NUM_TXQ-1:0][3:0]  txq_ring_log2, txq_cq_log2;
  logic [NUM_TXQ-1:0][15:0] txq_sw_idx, txq_cq_sw_idx, txq_coal_usecs;
  logic [NUM_TXQ-1:0][7:0]  txq_coal_frames;

  for (genvar t = 0; t < NUM_TXQ; t++) begin : g_txq_cfg
    assign txq_cfg[t] = '{
      enable:    txq_enable[t],
      inline_en: txq_inline_en[t],
      ring_base: txq_ring_base[t],
      ring_log2: txq_ring_log2[t],
      sw_idx:    txq_sw_idx[t],
      cq_base:   txq_cq_base[t],
      cq_log2:   txq_cq_log2[t],
      cq_sw_idx: txq_cq_sw_idx[t],
      coal_usecs:  txq_coal_usecs[t],
      coal_frames: txq_coal_frames[t]
    };
  end

  // The external blocks of the CSR block (nic_csr.rdl RXQ_BLOCK, TXQ_BLOCK, RSS_BLOCK,
  // STEER_BLOCK): one request each, answered by the module that holds the registers.
  logic        rxq_rd_ack, rxq_wr_ack, txq_rd_ack, txq_wr_ack;
  logic        rss_rd_ack, rss_wr_ack, steer_rd_ack, steer_wr_ack;
  logic [31:0] rxq_csr_rd_data, txq_csr_rd_data, rss_csr_rd_data, steer_csr_rd_data;

  rxq_regs #(.NUM_RXQ(NUM_RXQ), .MAP_Q(QMAP), .CPL_BATCH(CPL_BATCH)) u_rxq_regs (
    .clk,
    .rst,
    .csr_req       (hwif_out.RXQ_BLOCK.req),
    .csr_addr      (hwif_out.RXQ_BLOCK.addr),
    .csr_req_is_wr (hwif_out.RXQ_BLOCK.req_is_wr),
    .csr_wr_data   (hwif_out.RXQ_BLOCK.wr_data),
    .csr_wr_biten  (hwif_out.RXQ_BLOCK.wr_biten),
    .csr_rd_ack    (rxq_rd_ack),
    .csr_wr_ack    (rxq_wr_ack),
    .csr_rd_data   (rxq_csr_rd_data),
    .hdr_hw_idx, .pay_hw_idx, .cq_hw_idx,
    .busy          (q_busy),
    .wr_err_set    (q_wr_err),
    .irq_fire      (irq_fire),
    .enable        (q_enable),
    .split_en      (q_split_en),
    .pay_mpb       (q_pay_mpb),
    .pay_stride_log2 (q_pay_stride_log2),
    .coal_usecs    (q_coal_usecs),
    .coal_frames   (q_coal_frames),
    .irq_arm       (q_irq_arm),
    .hds_thresh    (q_hds_thresh),
    .hdr_buf_bytes (q_hdr_buf_bytes),
    .pay_buf_log2  (q_pay_buf_log2),
    .hdr_ring_base, .hdr_ring_log2, .hdr_sw_idx,
    .pay_ring_base, .pay_ring_log2, .pay_sw_idx,
    .cq_base, .cq_log2, .cq_sw_idx
  );

  txq_regs #(.NUM_TXQ(NUM_TXQ), .MAP_Q(QMAP)) u_txq_regs (
    .clk,
    .rst,
    .csr_req       (hwif_out.TXQ_BLOCK.req),
    .csr_addr      (hwif_out.TXQ_BLOCK.addr),
    .csr_req_is_wr (hwif_out.TXQ_BLOCK.req_is_wr),
    .csr_wr_data   (hwif_out.TXQ_BLOCK.wr_data),
    .csr_wr_biten  (hwif_out.TXQ_BLOCK.wr_biten),
    .csr_rd_ack    (txq_rd_ack),
    .csr_wr_ack    (txq_wr_ack),
    .csr_rd_data   (txq_csr_rd_data),
    .desc_hw_idx   (tx_desc_hw_idx),
    .cq_hw_idx     (tx_cq_hw_idx),
    .busy          (tx_q_busy),
    .halted        (tx_q_halted),
    .wr_err_set    (tx_q_wr_err),
    .irq_fire      (tx_irq_fire),
    .enable        (txq_enable),
    .inline_en     (txq_inline_en),
    .coal_usecs    (txq_coal_usecs),
    .coal_frames   (txq_coal_frames),
    .irq_arm       (txq_irq_arm),
    .ring_base     (txq_ring_base),
    .ring_log2     (txq_ring_log2),
    .sw_idx        (txq_sw_idx),
    .cq_base       (txq_cq_base),
    .cq_log2       (txq_cq_log2),
    .cq_sw_idx     (txq_cq_sw_idx)
  );

  // RSS settings and flow-steering rules (rss_table, steer_table below; the CSR block's
  // external blocks RSS_BLOCK and STEER_BLOCK of nic_csr.rdl).
  localparam int unsigned NUM_RULES = 1024;   // flow-steering rule locations (STEER_CAPS)
  localparam int unsigned BUCKETS   = 512;    // buckets per bank of the steering table
  localparam int unsigned INDIR     = 128;
  localparam int unsigned KEY_WORDS = 10;

  always_comb begin
    hwif_in = '{default: '0};
    hwif_in.CAPS.data_bytes.next  = 8'(DATA_W / 8);
    hwif_in.CAPS.dma_bytes.next   = 8'(DMA_BYTES);
    hwif_in.CAPS.num_rxq.next     = 8'(NUM_RXQ);
    hwif_in.CAPS.parse_bytes.next = 8'(PARSE_BYTES);
    hwif_in.TX_CAPS.num_txq.next  = 8'(NUM_TXQ);
    hwif_in.TX_CAPS.max_segs.next = 8'(TX_MAX_SEGS);
    hwif_in.TX_CAPS.fifo_kib.next = 8'(TX_FIFO_BYTES / 1024);
    hwif_in.TX_OFFLOADS.inline_max.next = 8'(TX_INLINE_MAX);
    hwif_in.TX_OFFLOADS.tso.next        = 1'b1;   // TSO in the TX path (docs/tx.md, tests/rtl/test_tx_tso.py)
    hwif_in.RXQ_BLOCK   = '{rd_ack: rxq_rd_ack, rd_data: rxq_csr_rd_data, wr_ack: rxq_wr_ack};
    hwif_in.TXQ_BLOCK   = '{rd_ack: txq_rd_ack, rd_data: txq_csr_rd_data, wr_ack: txq_wr_ack};
    hwif_in.RSS_BLOCK   = '{rd_ack: rss_rd_ack, rd_data: rss_csr_rd_data, wr_ack: rss_wr_ack};
    hwif_in.STEER_BLOCK = '{rd_ack: steer_rd_ack, rd_data: steer_csr_rd_data, wr_ack: steer_wr_ack};
    // A frame counts when its completion is taken; a TSO send's segments all at once, with
    // the send's (those sent, also before a DMA_RD_ERR).
    hwif_in.TX_FRAMES.count.incr       = tx_ev_valid && (tx_ev_tso ? tx_ev_tso_segs != '0 : tx_ev_status == TX_OK);
    hwif_in.TX_FRAMES.count.incrvalue  = tx_ev_tso ? tx_ev_tso_segs : 16'd1;
    hwif_in.TX_BYTES.count.incr        = tx_ev_valid && (tx_ev_tso ? tx_ev_tso_segs != '0 : tx_ev_status == TX_OK);
    hwif_in.TX_BYTES.count.incrvalue   = tx_ev_tso ? tx_ev_tso_bytes : 18'(tx_ev_len);
    hwif_in.TX_TSO_SENDS.count.incr    = tx_ev_valid && tx_ev_tso && tx_ev_status == TX_OK;
    hwif_in.TX_TSO_SEGS.count.incr     = tx_ev_valid && tx_ev_tso && tx_ev_tso_segs != '0;
    hwif_in.TX_TSO_SEGS.count.incrvalue = tx_ev_tso_segs;
    hwif_in.TX_ERR_TSO_HDR.count.incr  = tx_ev_valid && tx_ev_status == TX_TSO_BAD_HDR;
    hwif_in.TX_ERR_TSO_LEN.count.incr  = tx_ev_valid && tx_ev_status == TX_TSO_BAD_LEN;
    hwif_in.TX_ERR_TSO_MSS.count.incr  = tx_ev_valid && tx_ev_status == TX_TSO_BAD_MSS;
    hwif_in.TX_ERR_BAD_SEG.count.incr  = tx_ev_valid && tx_ev_status == TX_BAD_SEG;
    hwif_in.TX_ERR_BAD_LEN.count.incr  = tx_ev_valid && tx_ev_status == TX_BAD_LEN;
    hwif_in.TX_ERR_BAD_CSUM.count.incr = tx_ev_valid && tx_ev_status == TX_BAD_CSUM;
    hwif_in.TX_DMA_RD_ERR.count.incr   = tx_ev_valid && tx_ev_status == TX_DMA_RD_ERR;
    hwif_in.TX_DESC_RD_ERR.count.incr  = tx_ev_valid && tx_ev_status == TX_DESC_RD_ERR;
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
    // At most one descriptor read completes per cycle (R beats arrive one at a time).
    hwif_in.RX_DMA_RD_ERR.count.incr      = ev_rd_err;
    hwif_in.RX_DESC_ERR.count.incr        = ev_desc_err;
    hwif_in.RX_VLAN.count.incr            = meta_in_valid && meta_in.vlan_tags != 2'd0;
    hwif_in.RX_QINQ.count.incr            = meta_in_valid && meta_in.qinq;
    hwif_in.RX_NON_IP.count.incr          = meta_in_valid && meta_in.l3_type == L3_NONE;
    hwif_in.RX_IPV4_OPTIONS.count.incr    = meta_in_valid && meta_in.ipv4_opts;
    hwif_in.RX_IPV6_EXT.count.incr        = meta_in_valid && meta_in.ipv6_ext;
    hwif_in.RX_IP_FRAG.count.incr         = meta_in_valid && meta_in.ip_frag;
    hwif_in.RX_HDR_OVERFLOW.count.incr    = ev_hdr_overflow;
    hwif_in.RX_STEER_BAD_QUEUE.count.incr = ev_steer_bad_queue;
    hwif_in.RX_RSS_BAD_QUEUE.count.incr   = ev_rss_bad_queue;
  end

  // ---------------------------------------------------------------- interrupts
  // An armed queue fires as soon as it has a completion the driver has not consumed.
  always_comb begin
    for (int q = 0; q < NUM_RXQ; q++) begin
      irq_fire[q] = q_enable[q] && q_irq_arm[q] && (cq_hw_idx[q] != cq_sw_idx[q]);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) irq <= '0;
    else     irq <= irq_fire;
  end

  always_comb begin
    for (int t = 0; t < NUM_TXQ; t++) begin
      tx_irq_fire[t] = txq_cfg[t].enable && txq_irq_arm[t] &&
                       (tx_cq_hw_idx[t] != txq_cfg[t].cq_sw_idx);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) tx_irq <= '0;
    else     tx_irq <= tx_irq_fire;
  end

  // ---------------------------------------------------------------- ingress, FIFO, parser
  logic                  fifo_wr_valid, fifo_wr_full, fifo_wr_end, fifo_wr_keep;
  logic [DMA_DATA_W-1:0] fifo_wr_data;
  logic                  frame_end, frame_keep;
  logic [15:0]           frame_len;
  logic                  frame_room;
  logic [$clog2(META_DEPTH):0] frames_q;
  logic                  meta_valid, meta_ready;
  rx_meta_t              meta;
  rx_tuple_t             tuple_in;
  rx_class_t             cls;

  // Frames kept by the ingress and not yet taken by the DMA side; the metadata FIFO can
  // always take the parser's result because the ingress never keeps more than META_DEPTH.
  assign frame_room = frames_q < META_DEPTH[$clog2(META_DEPTH):0];
  always_ff @(posedge clk) begin
    if (rst) frames_q <= '0;
    else     frames_q <= frames_q + {{$clog2(META_DEPTH){1'b0}}, frame_keep}
                                  - {{$clog2(META_DEPTH){1'b0}}, meta_valid && meta_ready};
  end

  rx_ingress #(.DATA_W(DATA_W), .FIFO_W(DMA_DATA_W)) u_ingress (
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

  logic                  ff_rd_valid, ff_rd_ready;
  logic [DMA_DATA_W-1:0] ff_rd_data;

  rx_frame_fifo #(.DATA_W(DMA_DATA_W), .DEPTH(FIFO_DEPTH)) u_frame_fifo (
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

  logic         parse_addr_valid, parse_addr_v6;
  logic [127:0] parse_addr_src, parse_addr_dst;

  rx_parser #(.DATA_W(DATA_W), .PARSE_BYTES(PARSE_BYTES)) u_parser (
    .clk,
    .rst,
    .beat_valid (s_axis_rx_tvalid && s_axis_rx_tready),
    .beat_data  (s_axis_rx_tdata),
    .beat_keep  (s_axis_rx_tkeep),
    .beat_last  (s_axis_rx_tlast),
    .frame_keep,
    .frame_len,
    .addr_valid (parse_addr_valid),
    .addr_v6    (parse_addr_v6),
    .addr_src   (parse_addr_src),
    .addr_dst   (parse_addr_dst),
    .meta_valid (meta_in_valid),
    .meta       (meta_in),
    .tuple      (tuple_in)
  );

  // ---------------------------------------------------------------- classification
  // RSS and flow steering (rtl/rss/rx_classify.sv, docs/rss.md) choose each frame's queue.
  // The parse result waits beside it in a delay line of the classifier's latency. A frame with
  // a header error is not classified (it is dropped anyway) and keeps queue 0.
  localparam int unsigned CLS_LAT   = 4;            // rx_classify.LATENCY

  logic [5:0]                  rss_type_en;
  logic [319:0]                rss_key;
  logic                        indir_wr_valid;
  logic [$clog2(INDIR/4)-1:0]  indir_wr_word;
  logic [31:0]                 indir_wr_data;
  logic                        ctx_wr_valid;
  logic [$clog2(NUM_RSS_CTX*INDIR/4)-1:0] ctx_wr_idx;
  logic [31:0]                 ctx_wr_data;
  logic [3:0]                  ctx_wr_be;
  steer_mask_t [7:0]           steer_type_mask;
  logic                        slot_wr_valid, slot_wr_all, slot_wr_bank, slot_wr_way;
  logic [$clog2(BUCKETS)-1:0]  slot_wr_bucket;
  steer_slot_t                 slot_wr_data;
  logic                        cls_out_valid;
  rx_class_t                   cls_out;

  rss_table #(.KEY_WORDS(KEY_WORDS), .INDIR_WORDS(INDIR / 4), .NUM_CTX(NUM_RSS_CTX)) u_rss_table (
    .clk,
    .rst,
    .csr_req       (hwif_out.RSS_BLOCK.req),
    .csr_addr      (hwif_out.RSS_BLOCK.addr),
    .csr_req_is_wr (hwif_out.RSS_BLOCK.req_is_wr),
    .csr_wr_data   (hwif_out.RSS_BLOCK.wr_data),
    .csr_wr_biten  (hwif_out.RSS_BLOCK.wr_biten),
    .csr_rd_ack    (rss_rd_ack),
    .csr_wr_ack    (rss_wr_ack),
    .csr_rd_data   (rss_csr_rd_data),
    .type_en       (rss_type_en),
    .key           (rss_key),
    .indir_wr_valid, .indir_wr_word, .indir_wr_data,
    .ctx_wr_valid, .ctx_wr_idx, .ctx_wr_data, .ctx_wr_be
  );

  steer_table #(.NUM_RULES(NUM_RULES), .BUCKETS(BUCKETS)) u_steer_table (
    .clk,
    .rst,
    .csr_req       (hwif_out.STEER_BLOCK.req),
    .csr_addr      (hwif_out.STEER_BLOCK.addr),
    .csr_req_is_wr (hwif_out.STEER_BLOCK.req_is_wr),
    .csr_wr_data   (hwif_out.STEER_BLOCK.wr_data),
    .csr_wr_biten  (hwif_out.STEER_BLOCK.wr_biten),
    .csr_rd_ack    (steer_rd_ack),
    .csr_wr_ack    (steer_wr_ack),
    .csr_rd_data   (steer_csr_rd_data),
    .type_mask     (steer_type_mask),
    .slot_wr_valid, .slot_wr_all, .slot_wr_bank, .slot_wr_way, .slot_wr_bucket, .slot_wr_data
  );

  rx_classify #(.DATA_W(DATA_W), .BUCKETS(BUCKETS), .INDIR_ENTRIES(INDIR),
                .NUM_CTX(NUM_RSS_CTX)) u_classify (
    .clk,
    .rst,
    .in_valid   (meta_in_valid && !meta_in.hdr_err),
    .in_tuple   (tuple_in),
    .addr_valid (parse_addr_valid),
    .addr_v6    (parse_addr_v6),
    .addr_src   (parse_addr_src),
    .addr_dst   (parse_addr_dst),
    .rss_type_en, .rss_key, .indir_wr_valid, .indir_wr_word, .indir_wr_data,
    .ctx_wr_valid, .ctx_wr_idx, .ctx_wr_data, .ctx_wr_be,
    .num_queues (8'(NUM_RXQ)),
    .type_mask  (steer_type_mask),
    .slot_wr_valid, .slot_wr_all, .slot_wr_bank, .slot_wr_way, .slot_wr_bucket, .slot_wr_data,
    .out_valid           (cls_out_valid),
    .out_class           (cls_out),
    .out_steer_bad_queue (ev_steer_bad_queue),
    .out_rss_bad_queue   (ev_rss_bad_queue)
  );

  logic     [CLS_LAT-1:0] dly_valid_q;
  rx_meta_t               dly_meta_q [CLS_LAT];
  logic                   cls_valid_q;
  rx_meta_t               cls_meta_q;
  rx_class_t              cls_q;

  always_ff @(posedge clk) begin
    if (rst) dly_valid_q <= '0;
    else     dly_valid_q <= {dly_valid_q[CLS_LAT-2:0], meta_in_valid};
  end
  always_ff @(posedge clk) begin
    dly_meta_q[0] <= meta_in;
    for (int k = 1; k < CLS_LAT; k++) dly_meta_q[k] <= dly_meta_q[k - 1];
  end
  assign cls_valid_q = dly_valid_q[CLS_LAT-1];
  assign cls_meta_q  = dly_meta_q[CLS_LAT-1];
  assign cls_q       = cls_out_valid ? cls_out : '{qid: 7'd0, rss_hash: 32'd0, rss_type: RSS_NONE, steered: 1'b0};

  logic meta_fifo_in_ready;
  logic [$clog2(META_DEPTH):0] meta_count;
  sync_fifo #(.WIDTH($bits(rx_meta_t) + $bits(rx_class_t)), .DEPTH(META_DEPTH)) u_meta_fifo (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (cls_valid_q),
    .in_ready  (meta_fifo_in_ready),
    .in_data   ({cls_meta_q, cls_q}),
    .out_valid (meta_valid),
    .out_ready (meta_ready),
    .out_data  ({meta, cls}),
    .count     (meta_count)
  );

  // ---------------------------------------------------------------- descriptor fetch
  // One engine for every RX ring (ring q is queue q's header ring, NUM_RXQ + q its payload ring;
  // ARID = ring), per-ring state in arrays: an idle queue costs nothing per cycle.
  logic                        rxd_arvalid, rxd_arready, rxd_rvalid, rxd_rready;
  logic [ADDR_W-1:0]           rxd_araddr;
  logic [7:0]                  rxd_arlen;
  logic [ID_W-1:0]             rxd_arid;
  logic [NUM_RXQ-1:0]          hdr_desc_valid, hdr_desc_pop, pay_desc_valid, pay_desc_pop;
  logic [63:0]                 hdr_desc_addr, pay_desc_addr;
  logic [15:0]                 hdr_desc_id, pay_desc_id;
  logic [QW-1:0]               hdr_sel, pay_sel;
  logic [NUM_RXQ-1:0][15:0]    hdr_posted, pay_posted;
  logic [NUM_RXQ-1:0][CW-1:0]  pay_cached;

  rx_desc_engine #(
    .NUM_RXQ(NUM_RXQ), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .CACHE_DEPTH(DESC_CACHE),
    .MAX_BATCH(RX_DESC_BATCH)
  ) u_desc (
    .clk,
    .rst,
    .enable        (q_enable),
    .hdr_ring_base, .hdr_ring_log2, .hdr_sw_idx,
    .pay_ring_base, .pay_ring_log2, .pay_sw_idx,
    .m_arvalid     (rxd_arvalid),
    .m_arready     (rxd_arready),
    .m_araddr      (rxd_araddr),
    .m_arlen       (rxd_arlen),
    .m_arid        (rxd_arid),
    .m_rvalid      (rxd_rvalid),
    .m_rready      (rxd_rready),
    .m_rid         (m_axi_rid),
    .m_rdata       (m_axi_rdata),
    .m_rresp       (m_axi_rresp),
    .m_rlast       (m_axi_rlast),
    .hdr_desc_valid, .pay_desc_valid, .pay_cached, .hdr_desc_pop, .pay_desc_pop,
    .hdr_sel, .hdr_desc_addr, .hdr_desc_id,
    .pay_sel, .pay_desc_addr, .pay_desc_id,
    .hdr_hw_idx, .pay_hw_idx, .hdr_posted, .pay_posted,
    .rd_err        (ev_rd_err),
    .desc_err      (ev_desc_err)
  );
  // Read address arbitration: round robin over every reader (the RX descriptor engine, the
  // TX descriptor engine, TX segment reads); ARID names an RX ring, a TX queue or TX data.
  logic           ar_gnt_valid;
  logic [AIW-1:0] ar_gnt;
  logic [NAR-1:0]             ar_req;
  logic [NAR-1:0][ADDR_W-1:0] ar_addr;
  logic [NAR-1:0][7:0]        ar_len;
  logic [NAR-1:0][ID_W-1:0]   ar_id;

  logic rx_desc_rid, tx_desc_rid;     // the R beat's ID is an RX ring's, a TX queue's
  assign rx_desc_rid = 32'(m_axi_rid) < NRD;
  assign tx_desc_rid = (32'(m_axi_rid) >= TX_DESC_ID) && (32'(m_axi_rid) < TX_DESC_ID + NUM_TXQ);
  assign rxd_rvalid  = m_axi_rvalid && rx_desc_rid;
  assign ar_req[0]   = rxd_arvalid;
  assign ar_addr[0]  = rxd_araddr;
  assign ar_len[0]   = rxd_arlen;
  assign ar_id[0]    = rxd_arid;
  assign rxd_arready = m_axi_arready && ar_gnt_valid && (ar_gnt == AIW'(0));

  // TX readers: the descriptor engine (every TX queue's ring) and the segment reads.
  logic              txf_arvalid, txf_arready, txf_rvalid;
  logic [ADDR_W-1:0] txf_araddr;
  logic [7:0]        txf_arlen;
  logic [ID_W-1:0]   txf_arid;
  logic              txd_arvalid, txd_arready, txd_rvalid, txd_rready;
  logic [ADDR_W-1:0] txd_araddr;
  logic [7:0]        txd_arlen;

  assign ar_req[1]   = txf_arvalid;
  assign ar_addr[1]  = txf_araddr;
  assign ar_len[1]   = txf_arlen;
  assign ar_id[1]    = txf_arid;
  assign txf_arready = m_axi_arready && ar_gnt_valid && (ar_gnt == AIW'(1));
  assign txf_rvalid  = m_axi_rvalid && tx_desc_rid;
  assign ar_req[NAR-1]  = txd_arvalid;
  assign ar_addr[NAR-1] = txd_araddr;
  assign ar_len[NAR-1]  = txd_arlen;
  assign ar_id[NAR-1]   = ID_W'(TX_DATA_ID);
  assign txd_arready    = m_axi_arready && ar_gnt_valid && (ar_gnt == AIW'(NAR - 1));
  assign txd_rvalid     = m_axi_rvalid && (m_axi_rid == ID_W'(TX_DATA_ID));

  rr_arbiter #(.N(NAR)) u_ar_arb (
    .clk,
    .rst,
    .req       (ar_req),
    .accept    (m_axi_arvalid && m_axi_arready),
    .gnt_valid (ar_gnt_valid),
    .gnt_idx   (ar_gnt)
  );

  assign m_axi_arvalid = ar_gnt_valid && ar_req[ar_gnt];
  assign m_axi_araddr  = ar_addr[ar_gnt];
  assign m_axi_arlen   = ar_len[ar_gnt];
  assign m_axi_arid    = ar_id[ar_gnt];
  assign m_axi_arsize  = 3'($clog2(DMA_BYTES));
  assign m_axi_arburst = 2'b01;
  assign m_axi_arlock  = 1'b0;
  assign m_axi_arcache = 4'b0011;
  assign m_axi_arprot  = 3'b000;
  // R by ID: RX rings as the RX engine takes them, TX segment data as the gather takes it;
  // TX ring beats (and any unknown ID) are always taken.
  always_comb begin
    m_axi_rready = 1'b1;
    if (rx_desc_rid) m_axi_rready = rxd_rready;
    if (m_axi_rid == ID_W'(TX_DATA_ID)) m_axi_rready = txd_rready;
  end

  // ---------------------------------------------------------------- DMA
  // The shared write port (axi_wr_mux below).
  // Writer 0: rx_dma (IDs 0..7), writer 1: TX completions (IDs 8 + t).
  logic [1:0][ID_W-1:0]         w_awid;
  logic [1:0][ADDR_W-1:0]       w_awaddr;
  logic [1:0][7:0]              w_awlen;
  logic [1:0][2:0]              w_awsize;
  logic [1:0][1:0]              w_awburst;
  logic [1:0]                   w_awvalid, w_awready, w_wlast, w_wvalid, w_wready, w_bvalid, w_bready;
  logic [1:0][DMA_DATA_W-1:0]   w_wdata;
  logic [1:0][DMA_BYTES-1:0]    w_wstrb;

  rx_dma #(
    .DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .NUM_RXQ(NUM_RXQ), .PARSE_BYTES(PARSE_BYTES),
    .CACHE_DEPTH(DESC_CACHE), .MAX_BURST(MAX_BURST), .CPL_BATCH(CPL_BATCH),
    .CYCLES_PER_US(CYCLES_PER_US)
  ) u_dma (
    .clk,
    .rst,
    .meta_valid, .meta_ready, .meta, .cls,
    .ff_valid      (ff_rd_valid),
    .ff_ready      (ff_rd_ready),
    .ff_data       (ff_rd_data),
    .qcfg,
    .cq_hw_idx,
    .hdr_desc_valid, .hdr_desc_pop, .hdr_sel, .hdr_desc_addr, .hdr_desc_id, .hdr_posted,
    .pay_desc_valid, .pay_desc_pop, .pay_sel, .pay_desc_addr, .pay_desc_id, .pay_posted, .pay_cached,
    .m_awid (w_awid[0]), .m_awaddr (w_awaddr[0]), .m_awlen (w_awlen[0]), .m_awsize (w_awsize[0]),
    .m_awburst (w_awburst[0]), .m_awvalid (w_awvalid[0]), .m_awready (w_awready[0]),
    .m_wdata (w_wdata[0]), .m_wstrb (w_wstrb[0]), .m_wlast (w_wlast[0]), .m_wvalid (w_wvalid[0]),
    .m_wready (w_wready[0]),
    .m_bid (m_axi_bid), .m_bresp (m_axi_bresp), .m_bvalid (w_bvalid[0]), .m_bready (w_bready[0]),
    .ev_frame,
    .ev_drop_hdr_err    (ev_hdr_err),
    .ev_drop_queue_off  (ev_queue_off),
    .ev_drop_no_hdr_buf (ev_no_hdr),
    .ev_drop_no_pay_buf (ev_no_pay),
    .ev_drop_cq_full    (ev_cq_full),
    .ev_hdr_overflow,
    .ev_wr_err,
    .q_wr_err,
    .q_busy
  );

  // ---------------------------------------------------------------- TX
  tx_engine #(
    .DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .DESC_ID(TX_DESC_ID),
    .NUM_TXQ(NUM_TXQ), .FIFO_BYTES(TX_FIFO_BYTES), .MAX_BURST(MAX_BURST), .CYCLES_PER_US(CYCLES_PER_US)
  ) u_tx (
    .clk,
    .rst,
    .qcfg          (txq_cfg),
    .max_frame_len (hwif_out.TX_FRAME_LIMIT.max_frame_len.value),
    .f_arvalid (txf_arvalid), .f_arready (txf_arready), .f_araddr (txf_araddr), .f_arlen (txf_arlen),
    .f_arid    (txf_arid),    .f_rvalid  (txf_rvalid),  .m_rid (m_axi_rid),
    .d_arvalid (txd_arvalid), .d_arready (txd_arready), .d_araddr (txd_araddr), .d_arlen (txd_arlen),
    .d_rvalid  (txd_rvalid),  .d_rready  (txd_rready),
    .m_rdata   (m_axi_rdata), .m_rresp (m_axi_rresp), .m_rlast (m_axi_rlast),
    .m_awid (w_awid[1]), .m_awaddr (w_awaddr[1]), .m_awlen (w_awlen[1]), .m_awsize (w_awsize[1]),
    .m_awburst (w_awburst[1]), .m_awvalid (w_awvalid[1]), .m_awready (w_awready[1]),
    .m_wdata (w_wdata[1]), .m_wstrb (w_wstrb[1]), .m_wlast (w_wlast[1]), .m_wvalid (w_wvalid[1]),
    .m_wready (w_wready[1]),
    .m_bid (m_axi_bid), .m_bresp (m_axi_bresp), .m_bvalid (w_bvalid[1]), .m_bready (w_bready[1]),
    .m_axis_tdata  (m_axis_tx_tdata),
    .m_axis_tkeep  (m_axis_tx_tkeep),
    .m_axis_tvalid (m_axis_tx_tvalid),
    .m_axis_tready (m_axis_tx_tready),
    .m_axis_tlast  (m_axis_tx_tlast),
    .desc_hw_idx (tx_desc_hw_idx),
    .cq_hw_idx   (tx_cq_hw_idx),
    .q_busy      (tx_q_busy),
    .q_halted    (tx_q_halted),
    .q_wr_err    (tx_q_wr_err),
    .ev_valid    (tx_ev_valid),
    .ev_status   (tx_ev_status),
    .ev_len      (tx_ev_len),
    .ev_tso      (tx_ev_tso),
    .ev_tso_segs (tx_ev_tso_segs),
    .ev_tso_bytes (tx_ev_tso_bytes)
  );

  // ---------------------------------------------------------------- write port

  axi_wr_mux #(.DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .S1_ID_MIN(8)) u_wr_mux (
    .clk,
    .rst,
    .s_awid (w_awid), .s_awaddr (w_awaddr), .s_awlen (w_awlen), .s_awsize (w_awsize),
    .s_awburst (w_awburst), .s_awvalid (w_awvalid), .s_awready (w_awready),
    .s_wdata (w_wdata), .s_wstrb (w_wstrb), .s_wlast (w_wlast), .s_wvalid (w_wvalid),
    .s_wready (w_wready), .s_bvalid (w_bvalid), .s_bready (w_bready),
    .m_awid (m_axi_awid), .m_awaddr (m_axi_awaddr), .m_awlen (m_axi_awlen), .m_awsize (m_axi_awsize),
    .m_awburst (m_axi_awburst), .m_awvalid (m_axi_awvalid), .m_awready (m_axi_awready),
    .m_wdata (m_axi_wdata), .m_wstrb (m_axi_wstrb), .m_wlast (m_axi_wlast), .m_wvalid (m_axi_wvalid),
    .m_wready (m_axi_wready),
    .m_bid (m_axi_bid), .m_bvalid (m_axi_bvalid), .m_bready (m_axi_bready)
  );

  assign m_axi_awlock  = 1'b0;
  assign m_axi_awcache = 4'b0011;
  assign m_axi_awprot  = 3'b000;

  // Kept for interface completeness and debug visibility.
  logic unused;
  assign unused = ^{meta_fifo_in_ready, meta_count, frame_end, tuple_in};
endmodule
