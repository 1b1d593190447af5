// Binds tb/formal/props/desc_engine_props.sv into every desc_engine (testbench side, not rtl/).
bind desc_engine desc_engine_props #(
  .NR(NR), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .ID_BASE(ID_BASE),
  .CACHE_DEPTH(CACHE_DEPTH), .MAX_BATCH(MAX_BATCH), .CACHE_W(CACHE_W), .NHEAD(NHEAD)
) u_desc_engine_props (.*);
