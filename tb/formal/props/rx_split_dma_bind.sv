// Binds tb/formal/props/rx_split_dma_props.sv into every rx_split_dma (testbench side, not rtl/).
bind rx_split_dma rx_split_dma_props #(
  .DATA_W(DATA_W), .ADDR_W(ADDR_W), .NUM_RXQ(NUM_RXQ), .PARSE_BYTES(PARSE_BYTES), .CACHE_DEPTH(CACHE_DEPTH)
) u_rx_split_dma_props (
  .*,
  .fr_q_q(fr_q.q), .fr_q_split(fr_q.split), .fr_q_hdr_len(fr_q.hdr_len), .fr_q_pay_end(fr_q.pay_end),
  .fr_q_log2(fr_q.log2), .state_q(2'(state_q))
);
