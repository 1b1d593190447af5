// Read planning of a descriptor fetch, shared by desc_engine (RX rings) and tx_desc_engine
// (TX rings): how many ring entries the next read of a ring takes. Combinational.
//
// Entries to fetch from fetch index `fidx` of a ring of 2^log2 entries whose entry `fidx` is
// at an address ending in `addr_lo`: at most MAX_BATCH, what software posted (`sw`), what is
// left before the ring wraps and before the next 4 KiB boundary, what the cache has room for
// (`room`), and never more than one ring ahead of what was consumed (`hw`), whatever `sw`
// says. With BEAT > 1 (entries per DMA beat) a batch that leaves posted entries behind is
// cut back to the longest fitting batch that ends on a beat boundary, if there is one (so no
// R beat carries the same entries twice).
//
// For timing the bounds are not compared in a chain: each bound is compared with each batch
// length j = 1..MAX_BATCH at once, giving a thermometer code `fits` (a batch of j fits every
// bound), and the batch is read off it with ORs. The compares are narrow: a bound is first
// saturated to KW bits (any bound of 2^KW or more fits every j <= MAX_BATCH < 2^KW), and its
// thermometer is a constant shifted by it (`therm`: a mux tree in LUTs, where 16-bit compares
// with each j would be a carry chain each). The result is exactly that of the 16-bit compares.
module desc_batch #(
  parameter int unsigned MAX_BATCH = 8,      // 1..256
  parameter int unsigned BEAT      = 1,      // entries per DMA beat (a power of two); 1: no cut
  localparam int unsigned KW = $clog2(MAX_BATCH + 1)
) (
  input  logic [15:0]   sw,
  input  logic [15:0]   fidx,
  input  logic [15:0]   hw,
  input  logic [3:0]    log2,
  input  logic [11:0]   addr_lo,
  input  logic [15:0]   room,
  output logic [KW-1:0] k
);
  localparam int unsigned LW = (BEAT > 1) ? $clog2(BEAT) : 1;

  initial begin
    if (MAX_BATCH < 1 || MAX_BATCH > 256) $fatal(1, "desc_batch: MAX_BATCH must be 1..256");
    if (BEAT < 1 || (BEAT & (BEAT - 1)) != 0) $fatal(1, "desc_batch: BEAT must be a power of two");
  end

  // Bit j - 1 set for every j = 1..MAX_BATCH with v >= j.
  function automatic logic [MAX_BATCH-1:0] therm(input logic [15:0] v);
    automatic logic [KW-1:0] s = (v[15:KW] != '0) ? '1 : v[KW-1:0];
    return ~({MAX_BATCH{1'b1}} << s);
  endfunction

  logic [15:0] size, pending, in_ring, to_4k, ahead, ring_room;
  logic [8:0]  units_to_4k;          // whole entries before the next 4 KiB boundary
  logic [MAX_BATCH+BEAT:1] fits;
  logic [LW-1:0] lane;               // the first entry's lane in its beat
  logic [KW-1:0] k_top, k_beat;
  logic          at_pending, any_beat;

  always_comb begin
    size        = 16'd1 << log2;
    pending     = sw - fidx;
    in_ring     = size - (fidx & (size - 16'd1));
    units_to_4k = 9'h100 - {1'b0, addr_lo[11:4]} - {8'd0, addr_lo[3:0] != 4'd0};
    to_4k       = {7'd0, units_to_4k};
    ahead       = fidx - hw;
    ring_room   = (ahead >= size) ? 16'd0 : size - ahead;
    fits        = '0;
    fits[MAX_BATCH:1] = therm(pending) & therm(ring_room) & therm(in_ring) & therm(to_4k) & therm(room);
  end

  assign lane = (BEAT > 1) ? LW'(addr_lo[11:4]) : '0;

  always_comb begin
    k_top      = '0;
    k_beat     = '0;
    at_pending = 1'b0;
    any_beat   = 1'b0;
    for (int unsigned j = 1; j <= MAX_BATCH; j++) begin
      // the first entry's lane plus j is a multiple of BEAT: a batch of j ends a beat
      automatic logic ends_beat = ((32'(lane) + j) % BEAT) == 0;
      if (fits[j] && !fits[j + 1]) begin             // one j at most: fits is a thermometer
        k_top      = k_top | KW'(j);
        at_pending = at_pending || pending == 16'(j);
      end
      // the longest such batch: the next one (j + BEAT) does not fit
      if (ends_beat && fits[j] && !fits[j + BEAT]) k_beat = k_beat | KW'(j);
      if (ends_beat && fits[j]) any_beat = 1'b1;
    end
  end

  assign k = (BEAT == 1 || at_pending || !any_beat) ? k_top : k_beat;
endmodule
