// Binds tb/formal/props/sync_fifo_props.sv into every sync_fifo (testbench side, not rtl/).
bind sync_fifo sync_fifo_props #(.WIDTH(WIDTH), .DEPTH(DEPTH)) u_sync_fifo_props (.*);
