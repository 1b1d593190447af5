// Flow-steering registers: the STEER block of the register map (rtl/csr/nic_csr.rdl,
// STEER_BLOCK; docs/rss.md sections 4 and 5), behind the CSR block's external-block port.
//
// Holds what the classifier needs as plain registers: the mask of each flow type
// (STEER_TYPE[1..6]) and the staging registers of one slot (STEER_ENTRY_*). The slots
// themselves live in block RAM in flow_steer; a write of STEER_SLOT_CMD becomes one write of
// a whole slot on the slot port (slot_wr_*) in the cycle of the register write: the staged
// entry with valid set (op 1) or an empty slot (op 2). Op 3 clears every slot: one bucket of
// every bank and way per cycle for BUCKETS cycles, STEER_STATUS.busy meanwhile; slot
// commands written while busy are ignored (the driver waits for busy to fall).
//
// Register layout (byte offsets in the block; must match nic_csr.rdl, which
// tests/rtl/test_csr.py checks through the generated driver/regs.py):
//   0x00 STEER_CAPS (RO)    rules[15:0], bucket_log2[23:16], ways[27:24], banks[31:28]
//   0x04 STEER_STATUS (RO)  busy[0]
//   0x40 + 8t MASK          src_len[7:0], dst_len[15:8], proto_mask[23:16]   (t = 0..7)
//   0x44 + 8t PORT_MASK     sport_mask[15:0], dport_mask[31:16]
//   0x80 ENTRY_CTRL         ftype[2:0], proto[15:8]
//   0x84 ENTRY_ACTION       queue[7:0], ctx[11:8], ctx_en[12], loc[31:16] (the slot keeps
//                           loc[10:0])
//   0x88 ENTRY_PORTS        sport[15:0], dport[31:16]
//   0x90-0x9C ENTRY_SRC[0..3], 0xA0-0xAC ENTRY_DST[0..3]: word w is bits [32w+31:32w]
//   0xC0 SLOT_CMD (WO)      bucket[15:0], bank[16], way[17], op[31:30]
// (types 0 and 7 hold their values, but no frame has those types). Other offsets and bits
// outside the fields read as zero and ignore writes;
// writes honour the bit enables (csr_wr_biten).
//
// Timing: every access is answered (acked) in the cycle of its request, as the generated
// block answers its own registers; a write takes effect at that clock edge, a slot command
// writes the slot at that edge.
// Reset: synchronous, active high; every register to zero (the RDL reset), and a clear of
// every slot starts (BUCKETS cycles, STEER_STATUS.busy meanwhile), as op 3 does.
module steer_table
  import nic_pkg::*;
#(
  parameter int unsigned NUM_RULES = 1024,   // rule locations (STEER_CAPS.rules)
  parameter int unsigned BUCKETS   = 512,    // buckets per bank of flow_steer's table
  localparam int unsigned IW       = $clog2(BUCKETS)
) (
  input  logic                  clk,
  input  logic                  rst,
  // CSR external block: one request, its byte address in the block
  input  logic                  csr_req,
  input  logic [7:0]            csr_addr,
  input  logic                  csr_req_is_wr,
  input  logic [31:0]           csr_wr_data,
  input  logic [31:0]           csr_wr_biten,
  output logic                  csr_rd_ack,
  output logic                  csr_wr_ack,
  output logic [31:0]           csr_rd_data,
  // the flow-type masks, type t in element [t] (0 and 7 are never used)
  output steer_mask_t [7:0]     type_mask,
  // slot writes (to flow_steer)
  output logic                  slot_wr_valid,
  output logic                  slot_wr_all,     // every bank and way of the bucket
  output logic                  slot_wr_bank,
  output logic                  slot_wr_way,
  output logic [IW-1:0]         slot_wr_bucket,
  output steer_slot_t           slot_wr_data
);
  initial begin
    if (NUM_RULES < 1 || NUM_RULES > 2048) $fatal(1, "steer_table: NUM_RULES must be 1..2048 (an 11-bit slot loc)");
    if (BUCKETS < 2 || BUCKETS > 65536 || (BUCKETS & (BUCKETS - 1)) != 0) begin
      $fatal(1, "steer_table: BUCKETS must be a power of two, 2..65536");
    end
  end

  localparam logic [7:0] A_CAPS = 8'h00, A_STATUS = 8'h04, A_CTRL = 8'h80, A_ACTION = 8'h84,
                         A_PORTS = 8'h88, A_CMD = 8'hC0;
  localparam logic [1:0] OP_WRITE = 2'd1, OP_CLEAR = 2'd2, OP_CLEAR_ALL = 2'd3;

  // The staged slot, as software writes it.
  logic [2:0]        st_ftype_q;
  logic [7:0]        st_proto_q, st_queue_q;
  logic [3:0]        st_ctx_q;
  logic              st_ctx_en_q;
  logic [15:0]       st_loc_q, st_sport_q, st_dport_q;
  logic [127:0]      st_src_q, st_dst_q;
  steer_mask_t [7:0] mask_q;
  logic              busy_q;
  logic [IW-1:0]     sweep_q;

  logic [7:0] a;
  logic       is_type, is_word;
  logic [2:0] t_idx;        // the flow type of a STEER_TYPE access
  logic [1:0] w_idx;        // the word of an ENTRY_SRC/DST access
  assign a       = {csr_addr[7:2], 2'b00};
  assign is_type = a[7:6] == 2'b01;                      // 0x40..0x7F
  assign t_idx   = a[5:3];
  assign is_word = (a[7:4] == 4'h9) || (a[7:4] == 4'hA); // 0x90..0xAF
  assign w_idx   = a[3:2];

  // The addressed register as software reads it (reads and the write merge).
  logic [31:0] cur_word;
  always_comb begin
    cur_word = '0;
    if (csr_req) begin
      if (is_type) begin
        cur_word = a[2] ? {mask_q[t_idx].dport_mask, mask_q[t_idx].sport_mask}
                        : {8'd0, mask_q[t_idx].proto_mask, mask_q[t_idx].dst_len,
                           mask_q[t_idx].src_len};
      end else if (is_word) begin
        cur_word = a[5] ? st_dst_q[32 * w_idx +: 32] : st_src_q[32 * w_idx +: 32];
      end else begin
        unique case (a)
          A_CAPS:   cur_word = {4'd2, 4'd2, 8'(IW), 16'(NUM_RULES)};
          A_STATUS: cur_word = {31'd0, busy_q};
          A_CTRL:   cur_word = {16'd0, st_proto_q, 5'd0, st_ftype_q};
          A_ACTION: cur_word = {st_loc_q, 3'd0, st_ctx_en_q, st_ctx_q, st_queue_q};
          A_PORTS:  cur_word = {st_dport_q, st_sport_q};
          default:  cur_word = '0;      // SLOT_CMD and unmapped offsets read 0
        endcase
      end
    end
  end

  logic        wr;
  logic [31:0] v;           // the addressed register after the write, bit enables applied
  assign wr = csr_req && csr_req_is_wr;
  assign v  = csr_merge(cur_word, csr_wr_data, csr_wr_biten);

  always_ff @(posedge clk) begin
    if (rst) begin
      st_ftype_q <= '0;
      st_proto_q <= '0;
      st_queue_q <= '0;
      st_ctx_q   <= '0;
      st_ctx_en_q <= 1'b0;
      st_loc_q   <= '0;
      st_sport_q <= '0;
      st_dport_q <= '0;
      st_src_q   <= '0;
      st_dst_q   <= '0;
      mask_q     <= '0;
    end else if (wr) begin
      if (is_type) begin
        for (int t = 0; t < 8; t++) begin
          if (t_idx == 3'(t)) begin
            if (a[2]) {mask_q[t].dport_mask, mask_q[t].sport_mask} <= v;
            else      {mask_q[t].proto_mask, mask_q[t].dst_len, mask_q[t].src_len} <= v[23:0];
          end
        end
      end else if (is_word) begin
        for (int w = 0; w < 4; w++) begin
          if (w_idx == 2'(w)) begin
            if (a[5]) st_dst_q[32 * w +: 32] <= v;
            else      st_src_q[32 * w +: 32] <= v;
          end
        end
      end else begin
        unique case (a)
          A_CTRL:   {st_proto_q, st_ftype_q} <= {v[15:8], v[2:0]};
          A_ACTION: {st_loc_q, st_ctx_en_q, st_ctx_q, st_queue_q} <= {v[31:16], v[12:0]};
          A_PORTS:  {st_dport_q, st_sport_q} <= v;
          default: ;
        endcase
      end
    end
  end

  // ---------------------------------------------------------------- slot commands
  logic       cmd;
  logic [1:0] cmd_op;
  assign cmd    = wr && a == A_CMD && !busy_q;
  assign cmd_op = v[31:30];

  always_ff @(posedge clk) begin
    if (rst) begin
      busy_q  <= 1'b1;          // the slots are cleared after reset
      sweep_q <= '0;
    end else if (busy_q) begin
      sweep_q <= sweep_q + 1'b1;
      if (sweep_q == IW'(BUCKETS - 1)) busy_q <= 1'b0;
    end else if (cmd && cmd_op == OP_CLEAR_ALL) begin
      busy_q  <= 1'b1;
      sweep_q <= '0;
    end
  end

  always_comb begin
    slot_wr_valid  = busy_q || (cmd && (cmd_op == OP_WRITE || cmd_op == OP_CLEAR));
    slot_wr_all    = busy_q;
    slot_wr_bank   = v[16];
    slot_wr_way    = v[17];
    slot_wr_bucket = busy_q ? sweep_q : v[IW-1:0];
    slot_wr_data   = '{valid: !busy_q && cmd_op == OP_WRITE,
                       key: '{ftype: flow_type_e'(st_ftype_q), proto: st_proto_q, src: st_src_q,
                              dst: st_dst_q, sport: st_sport_q, dport: st_dport_q},
                       rxq: st_queue_q, ctx_en: st_ctx_en_q, ctx: st_ctx_q,
                       loc: st_loc_q[10:0]};
  end

  assign type_mask = mask_q;

  // Answers, in the cycle of the request (as the generated block answers its own registers).
  assign csr_rd_ack  = csr_req && !csr_req_is_wr;
  assign csr_wr_ack  = csr_req && csr_req_is_wr;
  assign csr_rd_data = csr_req_is_wr ? '0 : cur_word;

  logic unused;
  assign unused = ^{csr_addr[1:0], v[29:18], v[15:0] >> IW, st_loc_q[15:11]};

endmodule
