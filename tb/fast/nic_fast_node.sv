// One NIC of the fast testbench (testbench code: never part of rtl/): nic_top with its bus
// partners in HDL and compiled C (tb/fast/fastmem.cpp, through DPI), so Python only wakes up
// per transaction. nic_fast_top (tb/fast/nic_fast_top.sv) is the clock plus one of these; the
// cluster testbench (tb/cluster/cluster_top.sv) is the clock plus N of these behind a switch.
//   - the DMA target is an AXI4 slave whose storage is the node's shared block (host and
//     device memory as Python's HostMemory/DeviceMemory see them), with optional seeded
//     stalls on every channel (xorshift in HDL); its AWREADY ignores W or waits for the
//     burst's write data (`awready_mode`, TrafficProfile.awready);
//   - CSR accesses are commands Python queues; an HDL AXI4-Lite master runs them and toggles
//     csr_ack when one has finished;
//   - with MAC_PORTS = 0, the MAC side is in the node too: an RX stream source that plays
//     back frames Python queued in bulk in the shared block, one beat per cycle, with
//     optional seeded idle cycles (drawn in C), and a TX stream sink that appends every beat
//     the NIC sends to a frame queue in the shared block (compiled C), with optional seeded
//     tready stalls, toggling tx_done when a frame has ended (tready is held low while that
//     queue is full, so no frame is lost when Python drains late). With MAC_PORTS = 1 the
//     NIC's MAC streams are the node's mac_rx_* / mac_tx_* ports instead (to a switch).
// INST names the node's state in fastmem.cpp (its own shared block): one number per node of
// a simulation, 0 .. 15.
//
// Ports the NIC gains later are tied off by the generated connection list
// (tb/fast/build.py): unknown inputs named *tready are 1, other unknown inputs 0, unknown
// outputs are left open.
module nic_fast_node #(
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned DMA_DATA_W  = 2 * DATA_W,
  parameter int unsigned NUM_RXQ     = 8,
  parameter int unsigned NUM_TXQ     = 4,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int          INST        = 0,
  parameter int          MAC_PORTS   = 0      // 1: the MAC streams are ports of this node
) (
  input  logic              clk,
  input  logic              rst_i,          // registered reset (the top's)
  input  int                fm_attach,      // (generation << 16) | memfd of the shared block
  input  logic [31:0]       dma_stall_thr,  // stall probability per channel and cycle, * 2^32
  input  logic [31:0]       tx_stall_thr,   // chance m_axis_tx_tready is low in a cycle, * 2^32
  input  logic [31:0]       stall_seed,
  input  logic              r_interleave,   // 1: R beats of two bursts with different IDs alternate
  input  logic [1:0]        awready_mode,   // 0: AWREADY ignores W; 1: waits for the burst's first
                                            // W beat; 2: for its last (tb/axi_wr_slave.py AwReady)
  output logic              fm_attached,
  output logic              csr_ack,        // toggles when a CSR command has finished
  output logic              tx_done,        // toggles when the TX sink has taken a frame's last beat
  output logic              rx_busy,        // frames queued or a beat not yet taken
  output logic [31:0]       r_interleaved,  // R beats served ahead of an older burst (r_interleave)
  output logic [31:0]       w_first_bursts, // AWs taken after their burst's first W beat was taken
  output logic              irq_any,        // an RX or TX interrupt of the NIC in this cycle
  // MAC streams (MAC_PORTS = 1): into the NIC's RX port, out of its TX port
  input  logic [DATA_W-1:0]   mac_rx_tdata,
  input  logic [DATA_W/8-1:0] mac_rx_tkeep,
  input  logic                mac_rx_tvalid,
  output logic                mac_rx_tready,
  input  logic                mac_rx_tlast,
  input  logic                mac_rx_tuser,
  output logic [DATA_W-1:0]   mac_tx_tdata,
  output logic [DATA_W/8-1:0] mac_tx_tkeep,
  output logic                mac_tx_tvalid,
  input  logic                mac_tx_tready,
  output logic                mac_tx_tlast
);
  localparam int unsigned ID_W = 8;             // at least nic_top's ID_W (its default is used)
  localparam int unsigned ADDR_W = 64;
  localparam int unsigned MB = DMA_DATA_W / 8;   // DMA bus bytes
  localparam int unsigned DB = DATA_W / 8;       // MAC bytes

  // ------------------------------------------------------------------ DPI
  import "DPI-C" function int fm_dpi_attach(input int inst, input int token);
  import "DPI-C" function int fm_wbeat(input int inst, input longint bus_addr, input bit [1023:0] data,
                                       input bit [127:0] strb, input int bus_bytes, input int last);
  import "DPI-C" function int fm_rbeat(input int inst, input longint bus_addr, input longint lo,
                                       input longint hi, output bit [1023:0] data, input int bus_bytes,
                                       input int first, input int last, input int slot);
  import "DPI-C" function int fm_rx_beat(input int inst, output bit [511:0] data, output longint keep,
                                         input int nbytes);
  import "DPI-C" function int fm_csr_next(input int inst, output int addr, output int wdata, output int we);
  import "DPI-C" function void fm_csr_done(input int inst, input int rdata, input int resp);
  import "DPI-C" function int fm_tx_beat(input int inst, input bit [511:0] data, input longint keep,
                                         input int nbytes, input int last);
  import "DPI-C" function int fm_tx_room(input int inst, input int nbytes);
  import "DPI-C" function void fm_tx_reset(input int inst);

  int attached_token = 0;
  always_ff @(posedge clk) begin
    if (fm_attach != attached_token && fm_attach != 0) begin
      void'(fm_dpi_attach(INST, fm_attach));
      attached_token <= fm_attach;
    end
  end
  assign fm_attached = attached_token != 0;

  // ------------------------------------------------------------------ NIC ports
  logic [DATA_W-1:0]       s_axis_rx_tdata;
  logic [DATA_W/8-1:0]     s_axis_rx_tkeep;
  logic                    s_axis_rx_tvalid;
  logic                    s_axis_rx_tready;
  logic                    s_axis_rx_tlast;
  logic                    s_axis_rx_tuser;
  logic                    s_axil_awvalid = 1'b0, s_axil_awready;
  logic [15:0]             s_axil_awaddr;
  logic [2:0]              s_axil_awprot = '0;
  logic                    s_axil_wvalid = 1'b0, s_axil_wready;
  logic [31:0]             s_axil_wdata;
  logic [3:0]              s_axil_wstrb = 4'hf;
  logic                    s_axil_bvalid, s_axil_bready = 1'b0;
  logic [1:0]              s_axil_bresp;
  logic                    s_axil_arvalid = 1'b0, s_axil_arready;
  logic [15:0]             s_axil_araddr;
  logic [2:0]              s_axil_arprot = '0;
  logic                    s_axil_rvalid, s_axil_rready = 1'b0;
  logic [31:0]             s_axil_rdata;
  logic [1:0]              s_axil_rresp;
  logic [ID_W-1:0]         m_axi_awid;
  logic [ADDR_W-1:0]       m_axi_awaddr;
  logic [7:0]              m_axi_awlen;
  logic [2:0]              m_axi_awsize;
  logic [1:0]              m_axi_awburst;
  logic                    m_axi_awlock;
  logic [3:0]              m_axi_awcache;
  logic [2:0]              m_axi_awprot;
  logic                    m_axi_awvalid, m_axi_awready;
  logic [DMA_DATA_W-1:0]   m_axi_wdata;
  logic [DMA_DATA_W/8-1:0] m_axi_wstrb;
  logic                    m_axi_wlast, m_axi_wvalid, m_axi_wready;
  logic [ID_W-1:0]         m_axi_bid;
  logic [1:0]              m_axi_bresp;
  logic                    m_axi_bvalid, m_axi_bready;
  logic [ID_W-1:0]         m_axi_arid;
  logic [ADDR_W-1:0]       m_axi_araddr;
  logic [7:0]              m_axi_arlen;
  logic [2:0]              m_axi_arsize;
  logic [1:0]              m_axi_arburst;
  logic                    m_axi_arlock;
  logic [3:0]              m_axi_arcache;
  logic [2:0]              m_axi_arprot;
  logic                    m_axi_arvalid, m_axi_arready;
  logic [ID_W-1:0]         m_axi_rid;
  logic [DMA_DATA_W-1:0]   m_axi_rdata;
  logic [1:0]              m_axi_rresp;
  logic                    m_axi_rlast, m_axi_rvalid, m_axi_rready;
  logic [DATA_W-1:0]       m_axis_tx_tdata;
  logic [DATA_W/8-1:0]     m_axis_tx_tkeep;
  logic                    m_axis_tx_tvalid, m_axis_tx_tready, m_axis_tx_tlast;
  logic [NUM_RXQ-1:0]      irq;
  logic [NUM_TXQ-1:0]      tx_irq;

  nic_top #(
    .DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .NUM_RXQ(NUM_RXQ), .NUM_TXQ(NUM_TXQ), .ADDR_W(ADDR_W),
    .PARSE_BYTES(PARSE_BYTES)
  ) u_nic (
`include "nic_top_conn.svh"
  );

  assign irq_any = |irq || |tx_irq;

  // ------------------------------------------------------------------ stall generators
  // One xorshift32 per channel (five DMA channels, then m_axis_tx); a channel stalls in a
  // cycle when its draw is below its threshold. With a threshold of 0 the channel is simply on.
  logic [31:0] rng [6];
  logic [5:0]  stall;
  always_ff @(posedge clk) begin
    for (int i = 0; i < 6; i++) begin
      logic [31:0] x, thr;
      thr = (i == 5) ? tx_stall_thr : dma_stall_thr;
      x = (rst_i || rng[i] == 0) ? (stall_seed ^ (32'h9e3779b9 * (i + 1))) | 32'd1 : rng[i];
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      rng[i] <= x;
      stall[i] <= thr != 0 && x < thr;
    end
  end

  if (MAC_PORTS == 0) begin : g_mac_sim
    // ---------------------------------------------------------------- RX stream source
    logic                rx_valid_q = 1'b0;
    logic [DATA_W-1:0]   rx_data_q;
    logic [DATA_W/8-1:0] rx_keep_q;
    logic                rx_last_q, rx_user_q;
    assign s_axis_rx_tvalid = rx_valid_q;
    assign s_axis_rx_tdata  = rx_data_q;
    assign s_axis_rx_tkeep  = rx_keep_q;
    assign s_axis_rx_tlast  = rx_last_q;
    assign s_axis_rx_tuser  = rx_user_q;
    always_ff @(posedge clk) begin
      if (rst_i) begin
        rx_valid_q <= 1'b0;
        rx_busy <= 1'b0;
      end else if (!rx_valid_q || s_axis_rx_tready) begin
        bit [511:0] d;
        longint     k;
        int         r;
        r = fm_rx_beat(INST, d, k, DB);
        rx_valid_q <= r[0];
        rx_data_q  <= d[DATA_W-1:0];
        rx_keep_q  <= k[DB-1:0];
        rx_last_q  <= r[1];
        rx_user_q  <= r[2];
        rx_busy <= r[0] || r[3];
      end
    end

    // ---------------------------------------------------------------- TX stream sink
    // Every beat taken goes to C (fm_tx_beat), which appends its tkeep bytes to the frame in
    // progress and queues the frame at tlast. tready is low while the queue has no room for
    // another beat (asked again each cycle until it has), or in a stall cycle. A reset drops
    // the beats of a frame not finished.
    logic tx_room_q = 1'b0;
    logic tx_done_q = 1'b0;
    assign m_axis_tx_tready = tx_room_q && !stall[5];
    assign tx_done = tx_done_q;

    always_ff @(posedge clk) begin
      if (rst_i) begin
        tx_room_q <= 1'b0;
        fm_tx_reset(INST);                 // a frame cut short by the reset is dropped
      end else begin
        if (m_axis_tx_tvalid && m_axis_tx_tready) begin
          bit [511:0] d;
          d = '0;
          d[DATA_W-1:0] = m_axis_tx_tdata;
          void'(fm_tx_beat(INST, d, longint'(m_axis_tx_tkeep), DB, int'(m_axis_tx_tlast)));
          if (m_axis_tx_tlast) tx_done_q <= ~tx_done_q;
        end
        if (!tx_room_q || (m_axis_tx_tvalid && m_axis_tx_tready)) tx_room_q <= fm_tx_room(INST, DB) != 0;
      end
    end
    assign mac_rx_tready = 1'b0;
    assign mac_tx_tdata  = '0;
    assign mac_tx_tkeep  = '0;
    assign mac_tx_tvalid = 1'b0;
    assign mac_tx_tlast  = 1'b0;
  end else begin : g_mac_ports
    assign s_axis_rx_tdata  = mac_rx_tdata;
    assign s_axis_rx_tkeep  = mac_rx_tkeep;
    assign s_axis_rx_tvalid = mac_rx_tvalid;
    assign s_axis_rx_tlast  = mac_rx_tlast;
    assign s_axis_rx_tuser  = mac_rx_tuser;
    assign mac_rx_tready    = s_axis_rx_tready;
    assign mac_tx_tdata     = m_axis_tx_tdata;
    assign mac_tx_tkeep     = m_axis_tx_tkeep;
    assign mac_tx_tvalid    = m_axis_tx_tvalid;
    assign mac_tx_tlast     = m_axis_tx_tlast;
    assign m_axis_tx_tready = mac_tx_tready;
    assign rx_busy = 1'b0;
    assign tx_done = 1'b0;
  end

  // ------------------------------------------------------------------ DMA: AXI4 slave
  // Write: up to 16 AWs queued; B queued per burst. awready_mode 0: WREADY waits for a queued
  // AW and W beats go to C as they arrive; AWREADY ignores W. Modes 1 and 2: W beats are taken
  // into a buffer (WREADY does not wait for AW) and go to C from there once their burst's AW
  // is queued; AWREADY for the next burst waits until that burst's first W beat (1) or its
  // WLAST beat (2) has been taken. Stalls apply to AWREADY and WREADY in every mode.
  localparam int QD = 16;
  logic [ADDR_W-1:0] aw_addr [QD];
  logic [2:0]        aw_size [QD];
  logic [ID_W-1:0]   aw_id   [QD];
  logic [4:0]        aw_wp = '0, aw_rp = '0;
  logic [ID_W-1:0]   b_id    [QD];
  logic [1:0]        b_resp  [QD];
  logic [4:0]        b_wp = '0, b_rp = '0;
  logic [ADDR_W-1:0] w_addr;        // address of the next W beat of the head AW
  logic              w_first = 1'b1;
  logic [1:0]        w_resp = '0;

  // W buffer (modes 1, 2): room for two whole bursts of 256 beats
  localparam int WQ = 512;
  logic [DMA_DATA_W-1:0]   wf_data [WQ];
  logic [DMA_DATA_W/8-1:0] wf_strb [WQ];
  logic                    wf_last [WQ];
  logic [9:0]              wf_wp = '0, wf_rp = '0;
  logic [31:0]             w_firsts = '0, w_lasts = '0, aw_taken = '0;  // bursts' W beats taken, AWs
  logic                    w_bus_first = 1'b1;    // the next W beat on the bus is a burst's first
  logic                    w_buffered, aw_data_ok, w_room;
  // The beat the memory side takes this cycle: from the bus (mode 0) or the buffer.
  logic                    wb_valid;
  logic [DMA_DATA_W-1:0]   wb_data;
  logic [DMA_DATA_W/8-1:0] wb_strb;
  logic                    wb_last;

  assign w_buffered = awready_mode != 2'd0;
  assign w_room     = (b_wp - b_rp) != 5'(QD);
  assign aw_data_ok = awready_mode == 2'd1 ? w_firsts != aw_taken
                    : awready_mode == 2'd2 ? w_lasts != aw_taken : 1'b1;
  assign m_axi_awready = (aw_wp - aw_rp) != 5'(QD) && !stall[0] && aw_data_ok;
  assign m_axi_wready  = w_buffered ? (wf_wp - wf_rp) != 10'(WQ) && !stall[1]
                                    : aw_wp != aw_rp && w_room && !stall[1];
  assign wb_valid = w_buffered ? wf_wp != wf_rp && aw_wp != aw_rp && w_room : m_axi_wvalid && m_axi_wready;
  assign wb_data  = w_buffered ? wf_data[wf_rp[8:0]] : m_axi_wdata;
  assign wb_strb  = w_buffered ? wf_strb[wf_rp[8:0]] : m_axi_wstrb;
  assign wb_last  = w_buffered ? wf_last[wf_rp[8:0]] : m_axi_wlast;
  assign m_axi_bvalid  = b_wp != b_rp && !stall[2];
  assign m_axi_bid     = b_id[b_rp[3:0]];
  assign m_axi_bresp   = b_resp[b_rp[3:0]];

  always_ff @(posedge clk) begin
    if (rst_i) begin
      aw_wp <= '0; aw_rp <= '0; b_wp <= '0; b_rp <= '0; w_first <= 1'b1; w_resp <= '0;
      wf_wp <= '0; wf_rp <= '0; w_firsts <= '0; w_lasts <= '0; aw_taken <= '0; w_bus_first <= 1'b1;
      w_first_bursts <= '0;
    end else begin
      if (m_axi_awvalid && m_axi_awready) begin
        aw_addr[aw_wp[3:0]] <= m_axi_awaddr;
        aw_size[aw_wp[3:0]] <= m_axi_awsize;
        aw_id[aw_wp[3:0]]   <= m_axi_awid;
        aw_wp <= aw_wp + 5'd1;
        aw_taken <= aw_taken + 32'd1;
        if (w_firsts != aw_taken) w_first_bursts <= w_first_bursts + 32'd1;
      end
      if (m_axi_wvalid && m_axi_wready) begin      // the bus side: count bursts, buffer beats
        if (w_bus_first) w_firsts <= w_firsts + 32'd1;
        if (m_axi_wlast) w_lasts <= w_lasts + 32'd1;
        w_bus_first <= m_axi_wlast;
        if (w_buffered) begin
          wf_data[wf_wp[8:0]] <= m_axi_wdata;
          wf_strb[wf_wp[8:0]] <= m_axi_wstrb;
          wf_last[wf_wp[8:0]] <= m_axi_wlast;
          wf_wp <= wf_wp + 10'd1;
        end
      end
      if (wb_valid) begin                          // the memory side
        logic [ADDR_W-1:0] a, step;
        bit [1023:0] d;
        bit [127:0]  s;
        int r;
        if (w_buffered) wf_rp <= wf_rp + 10'd1;
        a = w_first ? aw_addr[aw_rp[3:0]] : w_addr;
        step = ADDR_W'(1) << aw_size[aw_rp[3:0]];
        d = '0;
        s = '0;
        d[DMA_DATA_W-1:0] = wb_data;
        s[MB-1:0] = wb_strb;
        r = fm_wbeat(INST, a & ~ADDR_W'(MB - 1), d, s, MB, int'(wb_last));
        w_addr <= (a & ~(step - 1)) + step;
        if (wb_last) begin
          b_id[b_wp[3:0]]   <= aw_id[aw_rp[3:0]];
          b_resp[b_wp[3:0]] <= (r != 0) ? 2'(r) : w_resp;
          b_wp <= b_wp + 5'd1;
          aw_rp <= aw_rp + 5'd1;
          w_first <= 1'b1;
          w_resp <= '0;
        end else begin
          w_first <= 1'b0;
          if (r != 0) w_resp <= 2'(r);
        end
      end
      if (m_axi_bvalid && m_axi_bready) b_rp <= b_rp + 5'd1;
    end
  end

  // Read: up to 16 ARs queued; one R beat per cycle, read from C when it is produced. Bursts
  // are served in AR order; with r_interleave, the beats of the two oldest bursts alternate
  // when their IDs differ (AXI allows interleaving between IDs, never within one), and the
  // second may finish first: it is then marked done and skipped when the first finishes.
  logic [ADDR_W-1:0] ar_addr [QD];
  logic [2:0]        ar_size [QD];
  logic [7:0]        ar_len  [QD];
  logic [ID_W-1:0]   ar_id   [QD];
  logic [4:0]        ar_wp = '0, ar_rp = '0;
  logic [ADDR_W-1:0] s_addr [QD];     // per burst: next beat's address and number
  logic [7:0]        s_beat [QD];
  logic [QD-1:0]     s_done = '0;     // the second oldest burst has had all its beats
  logic              r_alt = 1'b0;    // interleaving: the next beat is the second burst's
  logic              r_valid = 1'b0;

  assign m_axi_arready = (ar_wp - ar_rp) != 5'(QD) && !stall[3];
  assign m_axi_rvalid  = r_valid;

  always_ff @(posedge clk) begin
    if (rst_i) begin
      ar_wp <= '0; ar_rp <= '0; r_valid <= 1'b0; s_done <= '0; r_alt <= 1'b0; r_interleaved <= '0;
      for (int i = 0; i < QD; i++) s_beat[i] <= '0;
    end else begin
      if (m_axi_arvalid && m_axi_arready) begin
        ar_addr[ar_wp[3:0]] <= m_axi_araddr;
        ar_size[ar_wp[3:0]] <= m_axi_arsize;
        ar_len[ar_wp[3:0]]  <= m_axi_arlen;
        ar_id[ar_wp[3:0]]   <= m_axi_arid;
        ar_wp <= ar_wp + 5'd1;
      end
      if (!r_valid || m_axi_rready) begin
        if (ar_wp != ar_rp && !stall[4]) begin
          logic [ADDR_W-1:0] a, step, hi;
          logic [3:0] h0, h1, h;
          bit [1023:0] d;
          int r;
          logic last, two;
          h0 = ar_rp[3:0];
          h1 = h0 + 4'd1;
          two = r_interleave && (ar_wp - ar_rp) >= 5'd2 && ar_id[h1] != ar_id[h0] && !s_done[h1];
          h = (two && r_alt) ? h1 : h0;
          a = s_beat[h] == 0 ? ar_addr[h] : s_addr[h];
          step = ADDR_W'(1) << ar_size[h];
          hi = (a & ~(step - 1)) + step;
          last = s_beat[h] == ar_len[h];
          r = fm_rbeat(INST, a & ~ADDR_W'(MB - 1), a, hi, d, MB, int'(s_beat[h] == 0), int'(last), int'(h));
          m_axi_rdata <= d[DMA_DATA_W-1:0];
          m_axi_rresp <= 2'(r);
          m_axi_rid   <= ar_id[h];
          m_axi_rlast <= last;
          r_valid <= 1'b1;
          s_addr[h] <= hi;
          r_alt <= two && !r_alt;
          if (h == h1) r_interleaved <= r_interleaved + 32'd1;
          if (!last) begin
            s_beat[h] <= s_beat[h] + 8'd1;
          end else begin
            s_beat[h] <= '0;
            if (h == h1) begin
              s_done[h1] <= 1'b1;             // taken out of order: skip it later
            end else if (s_done[h1] && (ar_wp - ar_rp) >= 5'd2) begin
              s_done[h1] <= 1'b0;             // the second had finished already
              ar_rp <= ar_rp + 5'd2;
            end else begin
              ar_rp <= ar_rp + 5'd1;
            end
          end
        end else begin
          r_valid <= 1'b0;
        end
      end
    end
  end

  // ------------------------------------------------------------------ CSR master
  typedef enum logic [2:0] {C_IDLE, C_WR, C_WRESP, C_RD, C_RRESP} cstate_t;
  cstate_t cst = C_IDLE;
  logic    c_aw_done, c_w_done;
  logic    ack_q = 1'b0;
  assign csr_ack = ack_q;

  always_ff @(posedge clk) begin
    if (rst_i) begin
      cst <= C_IDLE;
      s_axil_awvalid <= 1'b0; s_axil_wvalid <= 1'b0; s_axil_arvalid <= 1'b0;
      s_axil_bready <= 1'b0; s_axil_rready <= 1'b0;
    end else begin
      case (cst)
        C_IDLE: begin
          int a, d, we;
          if (fm_csr_next(INST, a, d, we) != 0) begin
            if (we != 0) begin
              s_axil_awaddr <= a[15:0];
              s_axil_wdata <= d;
              s_axil_awvalid <= 1'b1;
              s_axil_wvalid <= 1'b1;
              c_aw_done <= 1'b0;
              c_w_done <= 1'b0;
              cst <= C_WR;
            end else begin
              s_axil_araddr <= a[15:0];
              s_axil_arvalid <= 1'b1;
              cst <= C_RD;
            end
          end
        end
        C_WR: begin
          logic aw_ok, w_ok;
          aw_ok = c_aw_done || (s_axil_awvalid && s_axil_awready);
          w_ok = c_w_done || (s_axil_wvalid && s_axil_wready);
          if (s_axil_awvalid && s_axil_awready) s_axil_awvalid <= 1'b0;
          if (s_axil_wvalid && s_axil_wready) s_axil_wvalid <= 1'b0;
          c_aw_done <= aw_ok;
          c_w_done <= w_ok;
          if (aw_ok && w_ok) begin
            s_axil_bready <= 1'b1;
            cst <= C_WRESP;
          end
        end
        C_WRESP: if (s_axil_bvalid) begin
          s_axil_bready <= 1'b0;
          fm_csr_done(INST, 0, int'(s_axil_bresp));
          ack_q <= ~ack_q;
          cst <= C_IDLE;
        end
        C_RD: if (s_axil_arready) begin
          s_axil_arvalid <= 1'b0;
          s_axil_rready <= 1'b1;
          cst <= C_RRESP;
        end
        C_RRESP: if (s_axil_rvalid) begin
          s_axil_rready <= 1'b0;
          fm_csr_done(INST, int'(s_axil_rdata), int'(s_axil_rresp));
          ack_q <= ~ack_q;
          cst <= C_IDLE;
        end
        default: cst <= C_IDLE;
      endcase
    end
  end
endmodule
