import cocotb
from cocotb.triggers import Timer
from driver.rx_queue import RxQueueConfig
from tb.frames import Flow, build, pattern
from tb.nic_tb import NicTb, TrafficProfile
from tb.rx_env import bring_up
from tests.rtl.test_rx_split import FLOWS, PAYLOAD_SIZES

def st(dut):
    p = dut.u_dma.u_plan
    r = dut.u_dma.u_realign
    return (f"plan: bvalid={int(p.b_valid_q.value)} bst={int(p.bst_q.value)} avalid={int(p.a_valid_q.value)} "
            f"pcmd={int(p.pcmd_v_q.value)} bcmd={int(p.bcmd_v_q.value)} h={int(p.h_v_q.value)} bat={int(p.bat_v_q.value)} "
            f"step={int(p.step.value)} meta_valid={int(p.meta_valid.value)} | real: act={int(r.act_q.value)} pos={int(r.pos_q.value)} "
            f"start={int(r.start_q.value)} end={int(r.end_q.value)} flen={int(r.flen_q.value)} cv={int(r.cv_q.value)} emit={int(r.emit_q.value)} fe={int(r.fe_q.value)} tap={int(r.tap_q.value)} inv={int(r.in_valid.value)} "
            f"| pl_valid={int(dut.u_dma.pl_valid.value)} src={int(dut.u_dma.pl_out.value) >> 20 if False else ''} wr_in_valid={int(dut.u_dma.wr_in_valid.value)} tapv={int(dut.u_dma.tap_valid.value)} payv={int(dut.u_dma.pay_valid.value)} cwv={int(dut.u_dma.cw_valid.value)} nq={int(dut.u_dma.nq_valid.value)} rav={int(dut.u_dma.ra_valid.value)}")

@cocotb.test()
async def dbg(dut):
    tb = NicTb(dut, 1, TrafficProfile())
    await tb.reset()
    qcfg = RxQueueConfig(hdr_ring_log2=5, pay_ring_log2=5, cq_log2=6, tcp_data_split=True, hds_thresh=0)
    rxq, sb = await bring_up(tb, qcfg)
    n = 0
    from cocotb.triggers import RisingEdge, ReadOnly
    trace = []
    async def mon():
        r = dut.u_dma.u_realign
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(r.act_q.value) or int(r.in_valid.value):
                t = (f"act={int(r.act_q.value)} pos={int(r.pos_q.value)} st={int(r.start_q.value)} end={int(r.end_q.value)} flen={int(r.flen_q.value)} cv={int(r.cv_q.value)} em={int(r.emit_q.value)} fe={int(r.fe_q.value)} tap={int(r.tap_q.value)} inv={int(r.in_valid.value)} inr={int(r.in_ready.value)} fin={int(r.finishing.value)} skip={int(r.skip.value)} emt={int(r.emitting.value)} tl={int(r.tailing.value)} rv={int(r.rng_valid.value)} ov={int(r.out_valid.value)} ordy={int(r.out_ready.value)}")
                if not trace or trace[-1] != t: trace.append(t)
                del trace[:-40]
    cocotb.start_soon(mon())
    for flow in FLOWS:
        for sz in PAYLOAD_SIZES + [flow.max_payload()]:
            f = build(flow, pattern(sz, period=251, start=n))
            sb.sent_frame(f)
            await tb.send(f)
            ok = False
            for _ in range(50):
                await tb.delay(200)
                got = await rxq.napi_poll()
                for g in got:
                    h, p = sb.check(g)
                    await sb.post_hdr(rxq, h); await sb.post_pay(rxq, p)
                    ok = True
                if ok: break
            if not ok:
                dut._log.error("frame %d flow %s size %d len %d hung: %s", n, flow, sz, len(f), st(dut))
                for t in trace: dut._log.error(t)
                return
            n += 1
    dut._log.info("all %d ok", n)
