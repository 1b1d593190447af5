// Binds tb/formal/props/rx_split_dma_props.sv into every rx_split_dma (testbench side, not rtl/).
bind rx_split_dma rx_split_dma_props #(
  .DATA_W(DATA_W), .ADDR_W(ADDR_W), .NUM_RXQ(NUM_RXQ), .PARSE_BYTES(PARSE_BYTES),
  .CACHE_DEPTH(CACHE_DEPTH), .CPL_BATCH(CPL_BATCH)
) u_rx_split_dma_props (
  .*, .pcmd_q_q(pcmd_q.q), .pcmd_src(pcmd_q.src),
  .a_q_q(a_q.q), .a_split(a_q.split), .a_hdr_len(a_q.hdr_len), .a_pay_len(a_q.pay_len), .a_n_fresh(a_q.n_fresh),
  .bst_q(bst_q), .b_q_q(b_q.q), .b_split(b_q.split), .b_hdr_len(b_q.hdr_len), .b_pay_len(b_q.pay_len),
  .b_n_fresh(b_q.n_fresh), .bcmd_addr(bcmd_q.addr), .bcmd_len(bcmd_q.len), .bcmd_src(bcmd_q.src),
  .bcmd_qq(bcmd_q.q), .bcmd_ncpl(bcmd_q.ncpl),
  .a_pay_end(a_q.pay_end), .a_log2(a_q.log2), .a_first_len(a_q.first_len), .a_first_last(a_q.first_last),
  .b_pay_end(b_q.pay_end), .b_log2(b_q.log2),
  .a_hdr_err(a_q.hdr_err), .b_hdr_err(b_q.hdr_err),
  .a_need(a_q.need), .a_slog2(a_q.slog2), .b_need(b_q.need), .b_slog2(b_q.slog2),
  .a_first_str(a_q.first_str),
  .pcmd_addr(pcmd_q.addr), .pcmd_len(pcmd_q.len), .a_mpb(a_q.mpb), .b_mpb(b_q.mpb)
);
