// Types shared by the NIC's RX modules: the parse result that travels with each frame and the
// completion record layout of docs/dma-formats.md.
package nic_pkg;

  typedef enum logic [1:0] {
    L3_NONE = 2'd0,
    L3_IPV4 = 2'd1,
    L3_IPV6 = 2'd2
  } l3_type_e;

  typedef enum logic [1:0] {
    L4_NONE  = 2'd0,
    L4_TCP   = 2'd1,
    L4_UDP   = 2'd2,
    L4_OTHER = 2'd3
  } l4_type_e;

  // What the parser learnt about one frame that the ingress accepted (docs/rx-rules.md §2).
  typedef struct packed {
    logic [15:0] frame_len;   // bytes, without FCS
    l3_type_e    l3_type;
    l4_type_e    l4_type;
    logic        ip_frag;
    logic [1:0]  vlan_tags;
    logic        hdr_err;     // a header lies: the frame is dropped (RX_DROP_HDR_ERR)
    logic [15:0] pay_off;     // first byte after the headers the NIC splits off
    logic [15:0] ip_end;      // one past the last IP byte (start of Ethernet padding)
  } rx_meta_t;

  localparam int unsigned CPL_BYTES  = 16;

  // Completion flag bits (byte 14).
  localparam int unsigned CPL_SOP          = 0;
  localparam int unsigned CPL_EOP          = 1;
  localparam int unsigned CPL_SPLIT        = 2;
  localparam int unsigned CPL_HDR_VALID    = 3;
  localparam int unsigned CPL_PAY_VALID    = 4;
  localparam int unsigned CPL_HDR_OVERFLOW = 5;

  // Pack a completion into its 16 little-endian bytes (docs/dma-formats.md).
  function automatic logic [127:0] pack_cpl(
    input logic [15:0] pay_buf_id,
    input logic [15:0] pay_len,
    input logic [15:0] hdr_buf_id,
    input logic [15:0] hdr_len,
    input logic [31:0] rss_hash,
    input logic [7:0]  rss_type,
    input logic [7:0]  l3l4,
    input logic [7:0]  flags,
    input logic [6:0]  queue,
    input logic        gen
  );
    return {gen, queue, flags, l3l4, rss_type, rss_hash, hdr_len, hdr_buf_id, pay_len, pay_buf_id};
  endfunction

endpackage
