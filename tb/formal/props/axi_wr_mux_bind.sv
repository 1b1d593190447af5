// Binds tb/formal/props/axi_wr_mux_props.sv into every axi_wr_mux (testbench side, not rtl/).
bind axi_wr_mux axi_wr_mux_props #(
  .DATA_W(DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .S1_ID_MIN(S1_ID_MIN), .DEPTH(DEPTH)
) u_axi_wr_mux_props (
  .*,
  .arb_held_q(u_arb.held_q), .arb_held_idx_q(u_arb.held_idx_q),
  .ord_rd_ptr(u_order.rd_ptr_q[$clog2(DEPTH)-1:0]), .ord_mem(u_order.mem_q)
);
