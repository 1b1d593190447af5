// Binds tb/formal/props/rx_split_dma_props.sv into every rx_split_dma (testbench side, not rtl/).
bind rx_split_dma rx_split_dma_props #(
  .DATA_W(DATA_W), .ADDR_W(ADDR_W), .NUM_RXQ(NUM_RXQ), .PARSE_BYTES(PARSE_BYTES),
  .CACHE_DEPTH(CACHE_DEPTH), .CPL_BATCH(CPL_BATCH)
) u_rx_split_dma_props (.*, .pcmd_q_q(pcmd_q.q));
