// Types shared by the NIC's RX and TX modules: the parse result that travels with each frame,
// the classification, the queue settings and what the TX stages pass along. The memory formats
// (descriptors, completions, and the enums of their fields: l3_type_e, l4_type_e, rss_type_e,
// tx_status_e) are in nic_dma_pkg, generated from rtl/formats/dma_formats.toml.
package nic_pkg;
  import nic_dma_pkg::*;

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
    // properties counted by the RX_* information counters
    logic        qinq;        // two VLAN tags, or more (then non-IP)
    logic        ipv4_opts;   // IPv4 with IHL > 5
    logic        ipv6_ext;    // IPv6 with at least one extension header
  } rx_meta_t;

  // The flow a frame belongs to, as RSS and flow steering see it (docs/rss.md). Addresses are
  // numbers in network byte order: an IPv4 address's first byte is bits [31:24] (upper 96 bits
  // zero), an IPv6 address's first byte is bits [127:120]. Ports are valid only when the frame
  // is TCP or UDP and not a fragment (l4_type TCP/UDP); proto is the IPv4 protocol or the
  // IPv6 next header after any extension headers.
  typedef struct packed {
    l3_type_e     l3_type;
    l4_type_e     l4_type;
    logic         ip_frag;
    logic [7:0]   proto;
    logic [127:0] src_addr;
    logic [127:0] dst_addr;
    logic [15:0]  sport;
    logic [15:0]  dport;
  } rx_tuple_t;

  // Where classification sent a frame.
  typedef struct packed {
    logic [6:0]  qid;
    logic [31:0] rss_hash;
    rss_type_e   rss_type;
    logic        steered;     // a flow-steering rule chose the queue (else RSS or queue 0)
  } rx_class_t;

  // ---------------------------------------------------------------- flow steering
  // docs/rss.md section 4. Flow types (STEER_TYPE[t], the key's type byte): a frame's type is
  // its IP version and proto (TCP 6, UDP 17, any other).
  typedef enum logic [2:0] {
    FT_NONE = 3'd0,
    FT_TCP4 = 3'd1,
    FT_UDP4 = 3'd2,
    FT_IP4  = 3'd3,
    FT_TCP6 = 3'd4,
    FT_UDP6 = 3'd5,
    FT_IP6  = 3'd6
  } flow_type_e;

  // The mask of one flow type (STEER_TYPE[t].MASK / PORT_MASK).
  typedef struct packed {
    logic [7:0]  src_len;       // address prefix lengths compared
    logic [7:0]  dst_len;
    logic [7:0]  proto_mask;    // ip4/ip6 types
    logic [15:0] sport_mask;    // TCP/UDP types
    logic [15:0] dport_mask;
  } steer_mask_t;

  // A key: the 38-byte string of docs/rss.md without the 5 always-zero bits of the type byte
  // ({5'd0, steer_key_t} is the string, byte 0 most significant).
  typedef struct packed {
    flow_type_e   ftype;
    logic [7:0]   proto;
    logic [127:0] src;
    logic [127:0] dst;
    logic [15:0]  sport;
    logic [15:0]  dport;
  } steer_key_t;

  // One slot of the steering table: 324 bits, nine 36-bit block RAM words.
  typedef struct packed {
    logic        valid;
    steer_key_t  key;
    logic [7:0]  rxq;       // the rule's queue (with ctx_en: the offset added to the context's)
    logic        ctx_en;    // the rule spreads with RSS context ctx (ethtool FLOW_RSS)
    logic [3:0]  ctx;       // 0 = the default table, 1..NUM_RSS_CTX = RSS_CTX_INDIR
    logic [10:0] loc;       // the rule's location (STEER_ENTRY_ACTION.loc[10:0])
  } steer_slot_t;

  // RSS contexts besides the default (docs/rss.md section 3a; RSS_CTX_CAPS.contexts).
  localparam int unsigned NUM_RSS_CTX = 8;

  // One RX queue's settings, as the register block holds them (docs/registers.md, RXQ[q]).
  typedef struct packed {
    logic        enable;         // CTRL.enable
    logic        split_en;       // CTRL.split_en
    logic [15:0] hds_thresh;     // HDS_THRESH.bytes
    logic [15:0] hdr_buf_bytes;  // BUF_SIZE.hdr_buf_bytes
    logic [3:0]  pay_buf_log2;   // BUF_SIZE.pay_buf_log2
    logic [63:0] cq_base;        // CQ.BASE_HI/LO
    logic [3:0]  cq_log2;        // CQ.SIZE
    logic [15:0] cq_sw_idx;      // CQ.SW_IDX
    logic        pay_mpb;        // CTRL.pay_mpb
    logic [3:0]  pay_stride_log2;// BUF_SIZE.pay_stride_log2 (as written; the planner clamps it)
    logic [15:0] coal_usecs;     // COALESCE.usecs
    logic [7:0]  coal_frames;    // COALESCE.frames
  } rxq_cfg_t;

  // ---------------------------------------------------------------- TX (docs/tx.md)
  // One TX queue's settings, as the register block holds them (docs/registers.md, TXQ[t]).
  typedef struct packed {
    logic        enable;      // CTRL.enable
    logic        inline_en;   // CTRL.inline_en
    logic [63:0] ring_base;   // DESC_RING.BASE_HI/LO
    logic [3:0]  ring_log2;   // DESC_RING.SIZE
    logic [15:0] sw_idx;      // DESC_RING.SW_IDX
    logic [63:0] cq_base;     // CQ.BASE_HI/LO
    logic [3:0]  cq_log2;     // CQ.SIZE
    logic [15:0] cq_sw_idx;   // CQ.SW_IDX
    logic [15:0] coal_usecs;  // COALESCE.usecs (tx-usecs)
    logic [7:0]  coal_frames; // COALESCE.frames (tx-frames)
  } txq_cfg_t;

  // A frame the scheduler took, as the later stages need it.
  typedef struct packed {
    logic [2:0]  qid;
    logic [15:0] desc_idx;    // free-running ring index of the first descriptor
    logic [15:0] ndesc;
    logic [15:0] len;         // sum of the segment lengths
    logic [15:0] tag;
    logic        csum_en;
    logic        csum_udp;
    logic [7:0]  csum_start;
    logic [15:0] csum_pos;    // csum_start + csum_offset
    // A TCP segment of a `TSO` send (docs/tx.md, "TCP segmentation offload"): every segment is
    // a frame of its own; the send's completion is merged from its segments' results.
    logic        tso;         // the frame is a segment of a TSO send
    logic        tso_last;    // ... its last
    logic        tso_poison;  // ... and the send's header read failed: not sent
    logic [15:0] tso_pay;     // the send's payload bytes (P, the completion's len)
  } tx_frame_t;

  // A frame's outcome: its TX completion before the ring slot (and so the generation bit) is known.
  typedef struct packed {
    logic [2:0]  qid;
    logic [15:0] desc_idx;
    logic [15:0] ndesc;
    logic [15:0] len;
    logic [15:0] tag;
    logic [15:0] csum;
    tx_status_e  status;
    logic        tso;         // a TSO send (tso_segs valid) or, from tx_store, one of its segments
    logic        tso_more;    // tx_store: a segment that is not its send's last
    logic [15:0] tso_segs;    // segments sent (tx_store: 1 for a sent segment, else 0)
    logic [15:0] tso_pay;     // tx_store: the send's payload bytes (the merged len)
    logic [17:0] tso_bytes;   // the bytes of the segments sent (TX_BYTES)
  } tx_result_t;

  // The TX completion ring entry of a frame's outcome (docs/tx.md).
  /* verilator lint_off UNUSEDSIGNAL */       // the TSO merge fields are not in the entry
  function automatic tx_cpl_t pack_tx_cpl(input tx_result_t r, input logic gen);
  /* verilator lint_on UNUSEDSIGNAL */
    tx_cpl_t c;
    c          = '0;
    c.desc_idx = r.desc_idx;
    c.ndesc    = r.ndesc;
    c.len      = r.len;
    c.tag      = r.tag;
    c.csum     = r.csum;
    c.tso_segs = r.tso_segs;
    c.status   = r.status;
    c.queue    = 7'(r.qid);
    c.gen      = gen;
    return c;
  endfunction

  // ---------------------------------------------------------------- external register tables
  // The register tables behind the CSR block's external blocks (queue_regs, ring_regs,
  // rss_table, steer_table) share two rules. A write merges the data under the bit enables
  // into the register's current value (csr_merge). The current value is read in its own
  // always_comb (it is also the read data), and the write process only writes, with constant
  // indices (loops over the elements unroll): a process that wrote an element of a packed
  // array at a computed index and also read the array made Verilator copy the whole array
  // into a shadow every cycle (docs/performance.md, "Write tables in place").
  function automatic logic [31:0] csr_merge(input logic [31:0] old, input logic [31:0] data,
                                            input logic [31:0] biten);
    return (old & ~biten) | (data & biten);
  endfunction

  // ---------------------------------------------------------------- ring registers
  // One ring's registers (nic_csr.rdl regfile ring_t) as software reads them: word w of the
  // ring block (0 BASE_LO, 1 BASE_HI, 2 SIZE, 3 SW_IDX, 4 HW_IDX; others read zero). Bases
  // are 16-byte aligned (BASE_LO[3:0] read as zero). Used by rtl/common/queue_regs.sv for reads
  // and for the write merge, so the layout is written once.
  function automatic logic [31:0] ring_reg_word(input logic [63:4] base, input logic [3:0] log2_entries,
                                                input logic [15:0] sw_idx, input logic [15:0] hw_idx,
                                                input logic [2:0] w);
    logic [31:0] v;
    unique case (w)
      3'd0:    v = {base[31:4], 4'd0};   // 16-byte aligned
      3'd1:    v = base[63:32];
      3'd2:    v = {28'd0, log2_entries};
      3'd3:    v = {16'd0, sw_idx};
      3'd4:    v = {16'd0, hw_idx};
      default: v = '0;
    endcase
    return v;
  endfunction

endpackage
