// Binds tb/formal/props/axi_dma_wr_props.sv into every axi_dma_wr (testbench side, not rtl/).
bind axi_dma_wr axi_dma_wr_props #(
  .DATA_W(DATA_W), .ADDR_W(ADDR_W), .MAX_BURST(MAX_BURST), .ID_W(ID_W)
) u_axi_dma_wr_props (
  .*,
  .wq_count(u_wq.count), .wq_rd_ptr(u_wq.rd_ptr_q[1:0]), .wq_mem(u_wq.mem_q)
);
