/*
 * Amlogic Meson6/8/8b/8m2 SDHC host controller model
 *
 * Register layout and behaviour follow what Linux's
 * drivers/mmc/host/meson-mx-sdhc-mmc.c (and meson-mx-sdhc.h) relies on:
 *
 *  - a command is issued by writing SEND (index, response/data flags,
 *    TOTAL_PACK); ARGU holds the argument;
 *  - responses are read back through ARGU after PDMA.DMA_MODE is cleared
 *    and PDMA.PIO_RDRESP selects the word (0: 48-bit response; 4..1: the
 *    four words of a 136-bit response, most significant first);
 *  - data moves by DMA at the single address in ADDR: (TOTAL_PACK + 1)
 *    packets of CTRL.PACK_LEN bytes (0 means 512), in both directions;
 *  - ICTL enables interrupts, ISTA latches them (write 1 to clear); the
 *    interrupt output is high while ICTL & ISTA.  The SoC wires it to the
 *    GIC as a rising edge (meson.dtsi: IRQ_TYPE_EDGE_RISING), which is what
 *    the DT node says by default (irq-trigger=edge; irq-trigger=level for
 *    a level-high line): the GIC then latches only the rising edges of
 *    (ICTL & ISTA) != 0;
 *  - SRST resets the state machine and FIFOs; STAT shows CMD_BUSY, the
 *    FIFO counts and the DAT lines; ESTA is zero (no pending error) except
 *    under a busy-hold fault;
 *  - reads on meson8/meson8b (no hardware flush): the last rx-tail-words
 *    words of a successful read stay in the RX FIFO (STAT.RXFIFO_CNT) until
 *    the driver writes PDMA with RXFIFO_MANUAL_FLUSH bit 1 (PDMA bit 30);
 *    they reach memory rx-flush-ns after that write, and an SRST (RXFIFO or
 *    MAIN_CTRL) or a new SEND before then drops them.  meson8m2 flushes by
 *    itself before it signals completion;
 *  - late-status-ns: a data command whose data phase fails (CRC, timeout)
 *    latches what a success would at completion, stays busy
 *    (STAT.CMD_BUSY) and latches the error this long after;
 *  - busy-while-programming: STAT.CMD_BUSY stays set while the card holds
 *    DAT0 busy programming a write (after the completion interrupt); the
 *    long-program fault makes one write's programming long-program-ns;
 *    partial-program makes a multi-block write fail its CRC check half
 *    way, with the error at completion, while the card programs the
 *    first half for long-program-ns (a driver must wait for the card
 *    after a failed write, not reset it under the core's next command);
 *  - r1b-busy-ns: the card holds DAT0 busy this long after an R1b
 *    response (default 0: not modelled); the completion comes with the
 *    response (the driver waits for DAT0 itself), or with r1b-done-at-dat0
 *    once DAT0 is released.  A command other than CMD12 or CMD13 sent while
 *    the card is busy is counted (cmds_while_card_busy) and starts when the
 *    card is done; CMD12 and CMD13 are answered at once, CMD13 with the
 *    card's state PRG;
 *  - stop-after-error: a failed multi-block transfer leaves the card in its
 *    sending- or receiving-data state until CMD12 (default false), or the
 *    controller stops it (true);
 *  - CLKC: divider [11:0], gates sd/rx/tx/mod [12..15], source mux [17:16],
 *    MEM_PWR_OFF [26:25]; CLK2 holds the RX/SD clock phases; MISC the
 *    manual-stop bit.  A command sent with the RX phase (CLK2[11:0]) beyond
 *    the divider (CLKC[11:0]) freezes the controller until SRST, as Linux
 *    commit c82efcaad2a4 reports for the silicon (rx-phase-freeze=off turns
 *    this off).
 *  - rx-window: above 52 MHz (HS200) the card's data (read blocks, the
 *    CMD19/CMD21 tuning blocks) is sampled correctly only at the RX phases
 *    inside the window; outside it the read ends with a data CRC error, as
 *    fault-kind=data-crc injects one (garbage in memory, ISTA.DATA_ERR_CRC),
 *    counted in rx_window_crc_errors.  "all" (default), "none" or "LO-HI",
 *    in percent of the SD clock period: phase * 100 / (divider + 1); LO > HI
 *    wraps (LO-100 and 0-HI: the phase counts within one period).
 *
 * Timing model (QEMU_CLOCK_VIRTUAL; run with -icount so results do not
 * depend on the host): every command costs cmd-latency-ns plus its bits on
 * the CMD line at the programmed SD clock; a data command adds
 * read-access-ns (reads) and the packets on DAT at the programmed clock and
 * bus width (plus start/CRC/end bits per packet).  After a write the card
 * holds DAT0 low for prog-base-ns + prog-ns-per-kib per KiB: STAT shows it
 * and the next command starts only when the card is ready again.
 *
 * Counters and fault injection are QOM properties (qom-get/qom-set over
 * QMP); see docs in the project's Documentation/emulated-board.rst.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/bitops.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "hw/sd/meson_mx_sdhc.h"
#include "system/dma.h"
#include "exec/address-spaces.h"
#include "migration/vmstate.h"

#define R_ARGU  (0x00 / 4)
#define R_SEND  (0x04 / 4)
#define R_CTRL  (0x08 / 4)
#define R_STAT  (0x0c / 4)
#define R_CLKC  (0x10 / 4)
#define R_ADDR  (0x14 / 4)
#define R_PDMA  (0x18 / 4)
#define R_MISC  (0x1c / 4)
#define R_DATA  (0x20 / 4)
#define R_ICTL  (0x24 / 4)
#define R_ISTA  (0x28 / 4)
#define R_SRST  (0x2c / 4)
#define R_ESTA  (0x30 / 4)
#define R_ENHC  (0x34 / 4)
#define R_CLK2  (0x38 / 4)

/* SEND */
#define SEND_CMD_INDEX(v)       ((v) & 0x3f)
#define SEND_CMD_HAS_RESP       BIT(6)
#define SEND_CMD_HAS_DATA       BIT(7)
#define SEND_RESP_LEN           BIT(8)
#define SEND_RESP_NO_CRC        BIT(9)
#define SEND_DATA_DIR           BIT(10)
#define SEND_DATA_STOP          BIT(11)
#define SEND_R1B                BIT(12)
#define SEND_TOTAL_PACK(v)      (((v) >> 16) & 0xffff)

/* CTRL */
#define CTRL_DAT_TYPE(v)        ((v) & 0x3)
#define CTRL_DDR_MODE           BIT(2)
#define CTRL_PACK_LEN(v)        (((v) >> 4) & 0x1ff)
/*
 * The vendor driver's description: "cmd or wcrc Receiving Timeout": how long
 * the controller waits for a response or a write's CRC status, taken here as
 * bus clocks.  It does not bound a read's access time or DAT0 busy.
 */
#define CTRL_RX_TIMEOUT(v)      (((v) >> 13) & 0x7f)
#define CTRL_SDIO_IRQ_MODE      BIT(27)

/* STAT */
#define STAT_CMD_BUSY           BIT(0)
#define STAT_DAT3_0_SHIFT       1
#define STAT_CMD                BIT(5)
#define STAT_RXFIFO_CNT_SHIFT   6
#define STAT_TXFIFO_CNT_SHIFT   13
#define STAT_FIFO_CNT_MASK      0x7f
#define STAT_DAT7_4_SHIFT       20

/* CLKC */
#define CLKC_CLK_DIV(v)         ((v) & 0xfff)
#define CLKC_SD_CLK_EN          BIT(12)
#define CLKC_RX_CLK_EN          BIT(13)
#define CLKC_TX_CLK_EN          BIT(14)
#define CLKC_MOD_CLK_EN         BIT(15)
#define CLKC_SRC_SEL(v)         (((v) >> 16) & 0x3)
#define CLKC_CLK_JIC            BIT(24)
#define CLKC_MEM_PWR_OFF        (3u << 25)

/* MISC */
#define MISC_MANUAL_STOP        BIT(28)

/* PDMA */
#define PDMA_DMA_MODE           BIT(0)
#define PDMA_PIO_RDRESP(v)      (((v) >> 1) & 0x7)
/* RXFIFO_MANUAL_FLUSH is bits 30:29; its bit 1 starts the flush */
#define PDMA_RXFIFO_FLUSH       BIT(30)
#define PDMA_TXFIFO_FILL        BIT(31)

/* ICTL / ISTA */
#define IRQ_RESP_OK             BIT(0)
#define IRQ_RESP_TIMEOUT        BIT(1)
#define IRQ_RESP_ERR_CRC        BIT(2)
#define IRQ_RESP_OK_NOCLEAR     BIT(3)
#define IRQ_DATA_1PACK_OK       BIT(4)
#define IRQ_DATA_TIMEOUT        BIT(5)
#define IRQ_DATA_ERR_CRC        BIT(6)
#define IRQ_DATA_XFER_OK        BIT(7)
#define IRQ_DAT1                BIT(10)
#define IRQ_DMA_DONE            BIT(11)
#define IRQ_RXFIFO_FULL         BIT(12)
#define IRQ_TXFIFO_EMPTY        BIT(13)
#define IRQ_ADDI_DAT1           BIT(14)
#define ICTL_DAT1_IRQ_DELAY(v)  (((v) >> 16) & 0x3)
#define IRQ_ALL                 0x7fff

/* ESTA: what the drivers poll to be 0 before a command */
#define ESTA_11_13              (7u << 11)

/* ENHC */
#define ENHC_SDIO_IRQ_PERIOD(v) (((v) >> 8) & 0xff)
#define ENHC_DMA_WR_RESP        (1u << 17) /* meson6/8/8b: no write resp check */
/* meson8/meson8b only (meson8m2 has other fields there) */
#define ENHC_RX_TIMEOUT(v)      ((v) & 0xff)

/* SRST */
#define SRST_MAIN_CTRL          BIT(0)
#define SRST_RXFIFO             BIT(1)
#define SRST_TXFIFO             BIT(2)
#define SRST_DMA_IF             BIT(5)

#define TX_FIFO_WORDS           64
/*
 * rx-flush-ns: from the flush write to the RX FIFO's tail in memory (see
 * Documentation/emulated-board.rst for how the default was chosen)
 */
#define RX_FLUSH_NS_DEFAULT     600
/*
 * dram-ack-ns: from the tail leaving the RX FIFO to its write acknowledgement
 * from DRAM (see meson_mx_sdhc_wr_resp_check()).  2 us: well within what the
 * C driver leaves between its flush and a use of the data (its STAT read
 * alone comes 1222 ns after the flush write), longer than a driver that
 * polls RXFIFO_CNT and copies the data at once takes.
 */
#define DRAM_ACK_NS_DEFAULT     2000
/*
 * dram-late-bursts: how many of a read's last bursts before the RX FIFO's
 * tail reach memory after the tail does, over dram-late-ns (see
 * meson_mx_sdhc_rx_late_hold()).  8 bursts, 256 bytes: the less kind
 * reading, more than one burst and so more than any mark on the last words
 * alone can show.
 */
#define DRAM_LATE_BURSTS_DEFAULT 8
/*
 * dram-late-ns: from the tail in memory to the last of those bursts.  2 us,
 * as dram-ack-ns: a reading the C driver survives.
 */
#define DRAM_LATE_NS_DEFAULT    2000
#define MAX_XFER                (65536u * 512u)

static const char *const fault_names[MESON_FAULT__MAX] = {
    [MESON_FAULT_NONE] = "none",
    [MESON_FAULT_DATA_CRC] = "data-crc",
    [MESON_FAULT_DATA_TIMEOUT] = "data-timeout",
    [MESON_FAULT_RESP_CRC] = "resp-crc",
    [MESON_FAULT_RESP_TIMEOUT] = "resp-timeout",
    [MESON_FAULT_MIXED] = "mixed",
    [MESON_FAULT_LOST_IRQ] = "lost-irq",
    [MESON_FAULT_FREEZE] = "freeze",
    [MESON_FAULT_LATE_DMA] = "late-dma",
    [MESON_FAULT_LOST_EDGE] = "lost-edge",
    [MESON_FAULT_BUSY_HOLD] = "busy-hold",
    [MESON_FAULT_LONG_PROGRAM] = "long-program",
    [MESON_FAULT_PARTIAL_PROGRAM] = "partial-program",
};

/* the kinds a command can get (counted in stats.faults) */
static bool meson_mx_sdhc_fault_is_kind(int k)
{
    return k > MESON_FAULT_NONE && k < MESON_FAULT__MAX &&
           k != MESON_FAULT_MIXED;
}

static const char *const fault_dir_names[] = {
    "any", "read", "write", "data", "read-multi"
};

/*
 * The interrupt output: high while ICTL & ISTA, except after a lost-edge
 * fault, which holds it low until the driver writes ISTA or ICTL.
 */
static void meson_mx_sdhc_update_irq(MesonMxSdhcState *s)
{
    qemu_set_irq(s->irq, !s->irq_edge_lost &&
                 (s->regs[R_ICTL] & s->regs[R_ISTA] & IRQ_ALL));
}

/* The SD clock in Hz, 0 when it is gated or the memory is powered off. */
static uint64_t meson_mx_sdhc_sd_clk(MesonMxSdhcState *s)
{
    uint32_t clkc = s->regs[R_CLKC];

    if (!(clkc & CLKC_SD_CLK_EN) || (clkc & CLKC_MEM_PWR_OFF)) {
        return 0;
    }
    return s->clkin_hz[CLKC_SRC_SEL(clkc)] / (CLKC_CLK_DIV(clkc) + 1);
}

static unsigned meson_mx_sdhc_bus_width(MesonMxSdhcState *s)
{
    switch (CTRL_DAT_TYPE(s->regs[R_CTRL])) {
    case 0:
        return 1;
    case 1:
        return 4;
    default:
        return 8;
    }
}

/*
 * Whether the controller samples read data correctly at the current RX
 * phase (rx-window); only above 52 MHz, where tuning is needed.
 */
static bool meson_mx_sdhc_rx_sampled_ok(MesonMxSdhcState *s, uint64_t hz)
{
    uint64_t phase = s->regs[R_CLK2] & 0xfff;
    uint64_t period = CLKC_CLK_DIV(s->regs[R_CLKC]) + 1;

    if (hz <= 52000000) {
        return true;
    }
    if (s->rx_window_none) {
        return false;
    }
    if (s->rx_window_lo > s->rx_window_hi) {
        /* wrapped: the RX phase counts within one SD clock period */
        return phase * 100 >= s->rx_window_lo * period ||
               phase * 100 <= s->rx_window_hi * period;
    }
    return phase * 100 >= s->rx_window_lo * period &&
           phase * 100 <= s->rx_window_hi * period;
}

/* Nanoseconds for the given number of SD clock cycles. */
static int64_t meson_mx_sdhc_clocks_ns(uint64_t clocks, uint64_t hz)
{
    return muldiv64(clocks, NANOSECONDS_PER_SECOND, hz);
}

/* xorshift64*: reproducible from fault-seed (stall-seed) */
static uint64_t meson_mx_sdhc_rand_from(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static uint64_t meson_mx_sdhc_rand(MesonMxSdhcState *s)
{
    return meson_mx_sdhc_rand_from(&s->fault_rng);
}

/*
 * busy-stall: how long the card stalls inside this data command (0: not at
 * all).  stall-count stalls, at most one per block.
 */
static int64_t meson_mx_sdhc_pick_stall(MesonMxSdhcState *s, uint32_t send)
{
    uint32_t blocks = SEND_TOTAL_PACK(send) + 1;
    bool is_write = send & SEND_DATA_DIR;
    int64_t each = is_write ? s->stall_write_ns : s->stall_read_ns;
    int64_t total;

    if (!s->stall_ppm || !s->stall_count || !each ||
        meson_mx_sdhc_rand_from(&s->stall_rng) % 1000000 >= s->stall_ppm) {
        return 0;
    }
    total = each * MIN(s->stall_count, blocks);
    s->stats.busy_stalls++;
    s->stats.stall_ns += total;
    return total;
}

/*
 * ENHC.RX_TIMEOUT ("Data Rx Timeout Setting", meson8/meson8b; both drivers
 * program 255): how long the controller waits for a read's next block, in
 * ns at bus clock hz; 0: for ever (meson8m2, a field of 0, or the property
 * rx-data-timeout-unit-clks 0).
 */
static int64_t meson_mx_sdhc_rx_data_timeout_ns(MesonMxSdhcState *s,
                                                uint64_t hz)
{
    uint64_t units = ENHC_RX_TIMEOUT(s->regs[R_ENHC]);

    if (s->hw_flush || !units || !s->rx_data_timeout_unit_clks) {
        return 0;
    }
    return meson_mx_sdhc_clocks_ns(units * s->rx_data_timeout_unit_clks, hz);
}

static bool meson_mx_sdhc_fault_eligible(int kind, uint32_t send)
{
    switch (kind) {
    case MESON_FAULT_LOST_IRQ:
    case MESON_FAULT_FREEZE:
    case MESON_FAULT_LOST_EDGE:
    case MESON_FAULT_BUSY_HOLD:
        return true;
    case MESON_FAULT_LATE_DMA:
        /* a read whose response the card sends while its data follows */
        return (send & SEND_CMD_HAS_DATA) && !(send & SEND_DATA_DIR) &&
               (send & SEND_CMD_HAS_RESP);
    case MESON_FAULT_LONG_PROGRAM:
        return (send & SEND_CMD_HAS_DATA) && (send & SEND_DATA_DIR);
    case MESON_FAULT_PARTIAL_PROGRAM:
        return (send & SEND_CMD_HAS_DATA) && (send & SEND_DATA_DIR) &&
               SEND_TOTAL_PACK(send) >= 1;
    case MESON_FAULT_DATA_CRC:
    case MESON_FAULT_DATA_TIMEOUT:
        return send & SEND_CMD_HAS_DATA;
    case MESON_FAULT_RESP_CRC:
    case MESON_FAULT_RESP_TIMEOUT:
        return send & SEND_CMD_HAS_RESP;
    default:
        return false;
    }
}

/* Decide whether the command being issued gets a fault, and which. */
static int meson_mx_sdhc_pick_fault(MesonMxSdhcState *s, uint32_t send)
{
    int kind = s->fault_kind;

    if (kind == MESON_FAULT_NONE) {
        return MESON_FAULT_NONE;
    }
    if (s->fault_limit && s->faults_done >= s->fault_limit) {
        return MESON_FAULT_NONE;
    }
    if (s->fault_dir != MESON_FAULT_DIR_ANY) {
        bool is_write = send & SEND_DATA_DIR;

        if (!(send & SEND_CMD_HAS_DATA)) {
            return MESON_FAULT_NONE;
        }
        if (s->fault_dir == MESON_FAULT_DIR_READ_MULTI &&
            (is_write || SEND_TOTAL_PACK(send) < 1)) {
            return MESON_FAULT_NONE;
        }
        if (s->fault_dir != MESON_FAULT_DIR_DATA &&
            s->fault_dir != MESON_FAULT_DIR_READ_MULTI &&
            is_write != (s->fault_dir == MESON_FAULT_DIR_WRITE)) {
            return MESON_FAULT_NONE;
        }
    }

    if (s->fault_after) {
        /* one shot on the Nth next eligible command */
        if (kind == MESON_FAULT_MIXED) {
            kind = MESON_FAULT_RESP_TIMEOUT;
        }
        if (!meson_mx_sdhc_fault_eligible(kind, send)) {
            return MESON_FAULT_NONE;
        }
        if (--s->fault_after) {
            return MESON_FAULT_NONE;
        }
        s->fault_kind = MESON_FAULT_NONE;
        return kind;
    }

    if (!s->fault_ppm) {
        return MESON_FAULT_NONE;
    }
    if (kind == MESON_FAULT_MIXED) {
        kind = MESON_FAULT_DATA_CRC + meson_mx_sdhc_rand(s) % 4;
    }
    if (!meson_mx_sdhc_fault_eligible(kind, send)) {
        return MESON_FAULT_NONE;
    }
    if (meson_mx_sdhc_rand(s) % 1000000 >= s->fault_ppm) {
        return MESON_FAULT_NONE;
    }
    return kind;
}

static void meson_mx_sdhc_count_fault(MesonMxSdhcState *s, int fault)
{
    if (fault != MESON_FAULT_NONE) {
        s->stats.faults[fault]++;
        s->faults_done++;
    }
}

static void meson_mx_sdhc_hist(MesonMxSdhcState *s, uint64_t bytes)
{
    unsigned b = bytes <= 1 ? 0 : 64 - clz64(bytes - 1);

    s->stats.size_hist[MIN(b, MESON_MX_SDHC_HIST_BUCKETS - 1)]++;
}

/*
 * Completion reaches ISTA, unless a lost-irq fault has left the interrupt
 * logic stuck: then nothing latches (and the line never rises) until SRST.
 */
static void meson_mx_sdhc_latch(MesonMxSdhcState *s, uint32_t ista)
{
    if (s->irq_stuck) {
        s->lost_ista |= ista;
        s->stats.lost_irq_commands++;
        return;
    }
    s->regs[R_ISTA] |= ista;
    meson_mx_sdhc_update_irq(s);
}

/*
 * SDIO card interrupts.  The card pulls DAT1 low (GPIO input "sdio-dat1")
 * while it interrupts; with CTRL.SDIO_IRQ_MODE set the controller samples
 * DAT1 in the interrupt period:
 *  - bus idle (no data command in flight): ISTA.DAT1_IRQ latches after DAT1
 *    has been low for (ICTL.DAT1_IRQ_DELAY + 1) * 2 SD clocks;
 *  - during a multi-block transfer on a 4-bit bus: ISTA.ADDI_DAT1_IRQ
 *    latches at the end of the next block but the last, if
 *    ENHC.SDIO_IRQ_PERIOD (the sampling window, SD clocks) is not 0;
 *    otherwise, and for single blocks, DAT1_IRQ once the transfer is over.
 * Like every ISTA bit they stay until written 1.  dat1-latch=level: cleared
 * while DAT1 is still low they latch again.  dat1-latch=edge (default):
 * one latch per low period of DAT1; once DAT1_IRQ or ADDI_DAT1_IRQ has
 * latched for it (or the bit was still set from an earlier one when it
 * would have latched), nothing more until DAT1 goes high and low again.
 * dat1-lose-edges (QMP): the next N low periods latch nothing at all.
 * ICTL decides whether they raise the interrupt; with dat1-latch-masked=off
 * (default) nothing latches while ICTL has both DAT1 enables off: under
 * level DAT1 latches once they are on again, under edge a low period that
 * began while they were off never latches.  Without SDIO_IRQ_MODE nothing
 * latches.
 */
/*
 * dat1-clock-gating: the controller gates its clock between commands unless
 * CLKC.CLK_JIC ("1: will turn off clock gating", Amlogic's header, which
 * says CTRL.SDIO_IRQ_MODE needs clock gating off); gated, it does not sample
 * DAT1 while no command runs.
 */
static bool meson_mx_sdhc_dat1_gated(MesonMxSdhcState *s)
{
    return s->dat1_clock_gating && !s->busy &&
           !(s->regs[R_CLKC] & CLKC_CLK_JIC);
}

static void meson_mx_sdhc_dat1_check(MesonMxSdhcState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t hz = meson_mx_sdhc_sd_clk(s);
    uint32_t bit;
    int64_t when;

    if (!s->dat1_low || !(s->regs[R_CTRL] & CTRL_SDIO_IRQ_MODE) || !hz ||
        s->frozen || s->dat1_lost || (s->dat1_edge && s->dat1_latched) ||
        (!s->dat1_latch_masked &&
         !(s->regs[R_ICTL] & (IRQ_DAT1 | IRQ_ADDI_DAT1)))) {
        timer_del(s->dat1_timer);
        return;
    }
    if (s->busy && (s->cur_send & SEND_CMD_HAS_DATA) &&
        meson_mx_sdhc_bus_width(s) != 1) {
        uint32_t blocks = SEND_TOTAL_PACK(s->cur_send) + 1;
        int64_t k;

        if (blocks < 2 || !ENHC_SDIO_IRQ_PERIOD(s->regs[R_ENHC]) ||
            meson_mx_sdhc_bus_width(s) != 4 || s->cur_block_ns <= 0) {
            timer_del(s->dat1_timer);   /* at completion */
            return;
        }
        k = now <= s->cur_data_start ? 1 :
            (now - s->cur_data_start) / s->cur_block_ns + 1;
        if (k > blocks - 1) {
            timer_del(s->dat1_timer);
            return;
        }
        bit = IRQ_ADDI_DAT1;
        when = s->cur_data_start + k * s->cur_block_ns;
    } else if (meson_mx_sdhc_dat1_gated(s)) {
        /* not sampled until the next command runs the clock */
        timer_del(s->dat1_timer);
        return;
    } else {
        bit = IRQ_DAT1;
        when = now + meson_mx_sdhc_clocks_ns(
                   (ICTL_DAT1_IRQ_DELAY(s->regs[R_ICTL]) + 1) * 2, hz);
    }
    if (s->regs[R_ISTA] & bit) {
        /* latched, not yet cleared */
        if (s->dat1_edge) {
            /* this low period's edge merges into the bit still set */
            s->dat1_latched = true;
            timer_del(s->dat1_timer);
        }
        return;
    }
    if (!timer_pending(s->dat1_timer) || s->dat1_bit != bit) {
        s->dat1_bit = bit;
        timer_mod(s->dat1_timer, when);
    }
}

static void meson_mx_sdhc_dat1_latch(void *opaque)
{
    MesonMxSdhcState *s = opaque;
    bool in_data = s->busy && (s->cur_send & SEND_CMD_HAS_DATA) &&
                   meson_mx_sdhc_bus_width(s) != 1;

    if (!s->dat1_low || in_data != (s->dat1_bit == IRQ_ADDI_DAT1) ||
        s->dat1_lost || (s->dat1_edge && s->dat1_latched)) {
        /* a transfer started or ended meanwhile: look again */
        meson_mx_sdhc_dat1_check(s);
        return;
    }
    if (s->dat1_bit == IRQ_ADDI_DAT1) {
        s->stats.addi_dat1_irqs++;
    } else {
        s->stats.dat1_irqs++;
    }
    s->dat1_latched = true;
    meson_mx_sdhc_latch(s, s->dat1_bit);
}

/* the card's DAT1: level 1 while it pulls the line low (interrupts) */
static void meson_mx_sdhc_dat1_in(void *opaque, int n, int level)
{
    MesonMxSdhcState *s = opaque;
    bool low = level;

    if (low && !s->dat1_low) {
        /* a new low period: the card's next interrupt */
        s->dat1_latched = false;
        s->dat1_lost = false;
        if ((s->regs[R_CTRL] & CTRL_SDIO_IRQ_MODE) &&
            !(s->regs[R_ICTL] & (IRQ_DAT1 | IRQ_ADDI_DAT1))) {
            /* raised while the driver has it masked (between service and ack) */
            s->stats.dat1_asserted_masked++;
            if (!s->dat1_latch_masked && s->dat1_edge) {
                /* the edge passes unseen: this low period never latches */
                s->dat1_lost = true;
                s->stats.dat1_masked_unlatched++;
            }
        }
        if ((s->regs[R_CTRL] & CTRL_SDIO_IRQ_MODE) &&
            meson_mx_sdhc_dat1_gated(s)) {
            s->stats.dat1_asserted_gated++;
        }
        if (s->dat1_lose_edges) {
            s->dat1_lose_edges--;
            s->dat1_lost = true;
            s->stats.dat1_edges_lost++;
        }
    } else if (!low) {
        s->dat1_latched = false;
        s->dat1_lost = false;
    }
    s->dat1_low = low;
    meson_mx_sdhc_dat1_check(s);
}

/* Write the late DMA's block i to memory (see meson_mx_sdhc_late_dma). */
static void meson_mx_sdhc_late_write(MesonMxSdhcState *s, uint32_t i)
{
    uint64_t off = (uint64_t)i * s->late_blksz;

    if (dma_memory_write(&address_space_memory, s->late_addr + off,
                         s->late_buf + off, s->late_blksz,
                         MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: late DMA write at 0x%" PRIx64
                      " is outside RAM\n", s->late_addr + off);
        s->stats.dma_errors++;
        return;
    }
    if (s->draining) {
        s->stats.drain_bytes += s->late_blksz;
        if (s->cmd_since_srst) {
            s->stats.drain_bytes_after_cmd += s->late_blksz;
        }
    } else {
        s->stats.late_dma_bytes += s->late_blksz;
    }
}

static void meson_mx_sdhc_late_free(MesonMxSdhcState *s)
{
    timer_del(s->late_timer);
    g_free(s->late_buf);
    s->late_buf = NULL;
    s->draining = false;
}

/* Stop a late DMA (SRST): what it had not written yet never arrives. */
static void meson_mx_sdhc_late_cancel(MesonMxSdhcState *s)
{
    if (!s->late_buf) {
        return;
    }
    s->stats.late_dma_cancelled +=
        (uint64_t)(s->late_blocks - s->late_next) * s->late_blksz;
    meson_mx_sdhc_late_free(s);
}

/*
 * SRST with reset-drain-ns: the DMA engine goes on writing what it still
 * moves for that long.  The FIFOs were reset, so what it writes now is not
 * the card's data: a pattern (0xd7) that a test finds in memory.
 */
static void meson_mx_sdhc_dma_reset(MesonMxSdhcState *s)
{
    uint64_t off;

    if (!s->late_buf || !s->reset_drain_ns || s->draining) {
        meson_mx_sdhc_late_cancel(s);
        return;
    }
    off = (uint64_t)s->late_next * s->late_blksz;
    memset(s->late_buf + off, 0xd7,
           (uint64_t)(s->late_blocks - s->late_next) * s->late_blksz);
    s->draining = true;
    s->cmd_since_srst = false;
    s->drain_until = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->reset_drain_ns;
}

/* late_timer: the next block of a late DMA lands in memory. */
static void meson_mx_sdhc_late_dma(void *opaque)
{
    MesonMxSdhcState *s = opaque;

    if (!s->late_buf) {
        return;
    }
    if (s->draining &&
        qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) > s->drain_until) {
        meson_mx_sdhc_late_cancel(s);
        return;
    }
    meson_mx_sdhc_late_write(s, s->late_next++);
    if (s->late_next >= s->late_blocks) {
        meson_mx_sdhc_late_free(s);
        return;
    }
    timer_mod(s->late_timer,
              s->late_start + (int64_t)s->late_next * s->late_block_ns);
}

/*
 * CMD12 sent by the controller itself: after a multi-block transfer unless
 * MISC.MANUAL_STOP is set (the C driver sets it only for multi-block
 * SD_IO_RW_EXTENDED), and to abort a transfer that failed, so that the card
 * is back in the transfer state.
 */
static bool meson_mx_sdhc_auto_stop(MesonMxSdhcState *s)
{
    SDRequest req = { .cmd = 12, .arg = 0 };
    uint8_t rsp[16];

    return sdbus_do_command(&s->sdbus, &req, rsp) > 0;
}

/*
 * stop-after-error: whether the controller sends CMD12 itself after a data
 * transfer that failed.  After a successful multi-block transfer it does
 * (MISC.MANUAL_STOP clear); FreeBSD's aml8726_sdxc-m8.c says so and sends
 * the request's stop itself after any error; Amlogic's aml_sdhc_m8.c does
 * after a timeout or a FIFO error on an eMMC (not after a CRC error, not
 * on an SD card).  false (default): a failed
 * multi-block transfer leaves the card in its sending-data or
 * receiving-data state until it gets CMD12 (counted in data_state_left);
 * true: the controller stops it.  A failed single-block transfer ends as
 * the card ends it under either reading.  Returns whether to send CMD12.
 */
static bool meson_mx_sdhc_stop_card(MesonMxSdhcState *s, uint32_t blocks,
                                    bool auto_stop, uint32_t err)
{
    bool in_data = sdbus_data_ready(&s->sdbus) ||
                   sdbus_receive_ready(&s->sdbus);

    if (!err) {
        return auto_stop;
    }
    if (blocks > 1 && !s->stop_after_error) {
        s->stats.data_state_left += in_data;
        return false;
    }
    return auto_stop || in_data;
}

/*
 * A command other than CMD12 that reaches a card left in its sending-data
 * or receiving-data state (cmds_while_card_in_data_state): the card takes
 * only CMD12 and CMD13 there, as QEMU's card model does.
 */
static void meson_mx_sdhc_count_data_state(MesonMxSdhcState *s, uint32_t send)
{
    if (SEND_CMD_INDEX(send) != 12 &&
        (sdbus_data_ready(&s->sdbus) || sdbus_receive_ready(&s->sdbus))) {
        s->stats.cmds_while_card_in_data_state++;
    }
}

/*
 * The RX FIFO's tail.  On meson8 and meson8b the driver flushes the RX FIFO
 * by hand after a read (PDMA.RXFIFO_MANUAL_FLUSH: 1 before the command, bit
 * 1 set after it); what the flush moves is not documented.  The model takes
 * the harsh reading: the last rx-tail-words words (the PDMA.RXFIFO_TH both
 * drivers program is 7) are still in the FIFO when the read signals its
 * completion, STAT.RXFIFO_CNT counts them, and they reach memory only
 * rx-flush-ns after the flush is written.  An SRST of the RX FIFO or of
 * the main controller, or a new SEND, before then drops them: the memory
 * keeps its old bytes there.  meson8m2 flushes by itself.
 */
static uint64_t meson_mx_sdhc_rx_tail_len(MesonMxSdhcState *s, uint64_t total)
{
    if (s->hw_flush) {
        return 0;
    }
    return MIN((uint64_t)s->rx_tail_words * 4, total);
}

/*
 * The DRAM write acknowledgement.  The flushed tail leaves the RX FIFO
 * rx-flush-ns after the flush write and is in memory dram-ack-ns after
 * that.  ENHC bit 17 (meson6/8/8b, "No Write DMA Response Check" in the
 * vendor's register header) set, as both drivers program it: RXFIFO_CNT
 * reads 0 as soon as the words left the FIFO, before they are in memory.
 * Clear: the controller waits for the write responses, and RXFIFO_CNT
 * counts the tail until it is in memory.
 */
static bool meson_mx_sdhc_wr_resp_check(MesonMxSdhcState *s)
{
    return !(s->regs[R_ENHC] & ENHC_DMA_WR_RESP);
}

/* Whether the tail has left the RX FIFO (it may not be in memory yet). */
static bool meson_mx_sdhc_rx_tail_left(MesonMxSdhcState *s, int64_t now)
{
    return s->rx_flushing && now >= s->rx_flush_due;
}

/* The RX FIFO count STAT shows for the tail (words), at @now. */
static uint32_t meson_mx_sdhc_rx_tail_count(MesonMxSdhcState *s, int64_t now)
{
    if (!s->rx_tail_len) {
        return 0;
    }
    if (meson_mx_sdhc_rx_tail_left(s, now) &&
        !meson_mx_sdhc_wr_resp_check(s)) {
        if (!s->rx_early_counted) {
            s->rx_early_counted = true;
            s->stats.rx_tail_early_empty++;
        }
        return 0;
    }
    return DIV_ROUND_UP(s->rx_tail_len, 4);
}

static void meson_mx_sdhc_rx_late_schedule(MesonMxSdhcState *s,
                                           int64_t after);

static void meson_mx_sdhc_rx_tail_lose(MesonMxSdhcState *s)
{
    meson_mx_sdhc_rx_late_schedule(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    if (!s->rx_tail_len) {
        return;
    }
    if (meson_mx_sdhc_rx_tail_left(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL))) {
        return; /* on its way to memory: a FIFO reset cannot take it back */
    }
    s->stats.rx_tail_bytes_lost += s->rx_tail_len;
    s->rx_tail_len = 0;
    s->rx_flushing = false;
    timer_del(s->rx_flush_timer);
}

/*
 * The burst of those dram-late-bursts held back (meson_mx_sdhc_rx_late_hold())
 * nearest the tail, the end of what is still held, reaches memory.
 */
static void meson_mx_sdhc_rx_late_land_one(MesonMxSdhcState *s)
{
    uint32_t n = MIN(s->rx_late_len, MESON_MX_SDHC_BURST_BYTES);
    uint32_t off = s->rx_late_len - n;

    if (dma_memory_write(&address_space_memory, s->rx_late_addr + off,
                         s->rx_late + off, n,
                         MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: a late burst of %u bytes at 0x%08x is"
                      " outside RAM\n", n, s->rx_late_addr + off);
        s->stats.dma_errors++;
    } else {
        s->stats.rx_late_bytes += n;
    }
    s->rx_late_len = off;
    s->rx_late_landed++;
}

/*
 * When held burst @j (0: the one next to the tail) reaches memory: the
 * first with the tail (rx_late_base), the others spread evenly over the
 * dram-late-ns after it, the farthest from the tail last.
 */
static int64_t meson_mx_sdhc_rx_late_burst_due(MesonMxSdhcState *s,
                                               uint32_t j)
{
    uint32_t n = s->rx_late_bursts;

    return s->rx_late_base +
           (n > 1 ? (int64_t)muldiv64(s->dram_late_ns, j, n - 1) : 0);
}

/* Lands the held bursts due by @now and arms the timer for the next one. */
static void meson_mx_sdhc_rx_late_progress(MesonMxSdhcState *s, int64_t now)
{
    if (!s->rx_late_base) {
        return;
    }
    while (s->rx_late_len &&
           meson_mx_sdhc_rx_late_burst_due(s, s->rx_late_landed) <= now) {
        meson_mx_sdhc_rx_late_land_one(s);
    }
    if (s->rx_late_len) {
        timer_mod(s->rx_late_timer,
                  meson_mx_sdhc_rx_late_burst_due(s, s->rx_late_landed));
    } else {
        timer_del(s->rx_late_timer);
        s->rx_late_base = 0;
    }
}

/* All held bursts reach memory now: before a later read's data. */
static void meson_mx_sdhc_rx_late_land(MesonMxSdhcState *s)
{
    while (s->rx_late_len) {
        meson_mx_sdhc_rx_late_land_one(s);
    }
    timer_del(s->rx_late_timer);
    s->rx_late_base = 0;
}

static void meson_mx_sdhc_rx_late_timer(void *opaque)
{
    meson_mx_sdhc_rx_late_progress(opaque,
                                   qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
}

/*
 * The held bursts start landing at @after: with the tail's own
 * acknowledgement once the tail is flushed, at the SEND or SRST that
 * dropped an unflushed tail otherwise (they had left the FIFO).  Once.
 */
static void meson_mx_sdhc_rx_late_schedule(MesonMxSdhcState *s, int64_t after)
{
    if (!s->rx_late_len || s->rx_late_base) {
        return;
    }
    s->rx_late_base = after;
    timer_mod(s->rx_late_timer, after);
}

/*
 * The less kind reading of the DRAM write acknowledgement: nothing orders
 * a read's DMA writes on their way into DRAM, and its last
 * dram-late-bursts bursts before the RX FIFO's tail (each
 * MESON_MX_SDHC_BURST_BYTES) reach memory in the order least kind to a
 * driver that looks at the read's end: the burst next to the tail with
 * it, the others spread over the dram-late-ns after it, the farthest from
 * the tail last.  Amlogic's driver waits for the DDR controller's whole
 * channel to go idle (P_DMC_CHAN_STS), not for one word of the read; a
 * driver that looks only at the last words of a read passes while memory
 * still holds old bytes before them.  Only with ENHC bit 17 set (no write
 * response check, both drivers' setting) and a tail in the FIFO: with the
 * check the controller's completion waits for every write response.
 * Takes the bytes out of @buf's write: returns how many.
 */
static uint64_t meson_mx_sdhc_rx_late_hold(MesonMxSdhcState *s,
                                           const uint8_t *buf,
                                           uint64_t total, uint64_t tail)
{
    uint64_t len;

    if (!tail || meson_mx_sdhc_wr_resp_check(s)) {
        return 0;
    }
    len = MIN((uint64_t)s->dram_late_bursts * MESON_MX_SDHC_BURST_BYTES,
              total - tail);
    if (!len) {
        return 0;
    }
    memcpy(s->rx_late, buf + total - tail - len, len);
    s->rx_late_len = len;
    s->rx_late_addr = s->cur_addr + total - tail - len;
    s->rx_late_bursts = DIV_ROUND_UP(len, MESON_MX_SDHC_BURST_BYTES);
    s->rx_late_landed = 0;
    s->rx_late_base = 0;
    return len;
}

/*
 * A tail that lands with no STAT read or SRST since its flush: the driver did
 * not wait for it and may have handed its buffer back already, to be freed
 * and used again (rx_tails_landed_unwatched; the first three are logged).
 */
static void meson_mx_sdhc_rx_tail_unwatched(MesonMxSdhcState *s)
{
    if (s->stats.rx_tails_landed_unwatched++ < 3) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: a read's last %u bytes landed at 0x%08x"
                      " %" PRId64 " ns after its flush (PDMA 0x%08x written,"
                      " SEND 0x%08x), with no STAT read or SRST since\n",
                      s->rx_tail_len, s->rx_tail_addr,
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->rx_flush_at,
                      s->rx_flush_pdma, s->rx_flush_send);
    }
}

/* rx_flush_timer: the flushed tail lands in memory, the FIFO is empty. */
static void meson_mx_sdhc_rx_flush_done(void *opaque)
{
    MesonMxSdhcState *s = opaque;

    if (!s->rx_tail_len) {
        return;
    }
    if (dma_memory_write(&address_space_memory, s->rx_tail_addr, s->rx_tail,
                         s->rx_tail_len, MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: RX FIFO flush of %u bytes at 0x%08x is"
                      " outside RAM\n", s->rx_tail_len, s->rx_tail_addr);
        s->stats.dma_errors++;
    } else {
        s->stats.rx_tail_bytes_flushed += s->rx_tail_len;
        if (s->rx_flush_gap_open) {
            meson_mx_sdhc_rx_tail_unwatched(s);
        }
    }
    s->rx_tail_len = 0;
    s->rx_flushing = false;
    meson_mx_sdhc_rx_late_progress(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
}

/* PDMA written with RXFIFO_MANUAL_FLUSH bit 1 set */
static void meson_mx_sdhc_rx_flush(MesonMxSdhcState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!s->rx_tail_len || s->rx_flushing) {
        return;
    }
    s->rx_flushing = true;
    s->rx_early_counted = false;
    s->rx_flush_at = now;
    s->rx_flush_pdma = s->regs[R_PDMA];
    s->rx_flush_send = s->regs[R_SEND];
    s->rx_flush_due = now + s->rx_flush_ns;
    s->rx_land_due = s->rx_flush_due + s->dram_ack_ns;
    s->rx_flush_gap_open = true;
    meson_mx_sdhc_rx_late_schedule(s, s->rx_land_due);
    if (s->rx_land_due <= now) {
        meson_mx_sdhc_rx_flush_done(s);
        return;
    }
    timer_mod(s->rx_flush_timer, s->rx_land_due);
}

/*
 * A new read's tail while the last one is still on its way to memory: the
 * older write lands first.
 */
static void meson_mx_sdhc_rx_tail_land_now(MesonMxSdhcState *s)
{
    if (s->rx_tail_len && s->rx_flushing) {
        timer_del(s->rx_flush_timer);
        meson_mx_sdhc_rx_flush_done(s);
    }
}

/*
 * A register access after the flush's time sees the tail landed, even if
 * rx_flush_timer has not run yet: under multi-threaded TCG (emu-run
 * --parallel) a guest that polls STAT can keep the main loop from running
 * the timer for milliseconds.
 */
static void meson_mx_sdhc_rx_flush_catch_up(MesonMxSdhcState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (s->rx_flushing && now >= s->rx_land_due) {
        timer_del(s->rx_flush_timer);
        meson_mx_sdhc_rx_flush_done(s);
    }
    meson_mx_sdhc_rx_late_progress(s, now);
}

/*
 * The first STAT read or SRST after a flush write: how long the driver left
 * the flush before it looked (rx_flush_gap_min_ns, rx_flush_gap_max_ns).
 */
static void meson_mx_sdhc_rx_flush_gap(MesonMxSdhcState *s)
{
    uint64_t gap;

    if (!s->rx_flush_gap_open) {
        return;
    }
    s->rx_flush_gap_open = false;
    gap = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->rx_flush_at;
    if (!s->stats.rx_flush_gaps || gap < s->stats.rx_flush_gap_min_ns) {
        s->stats.rx_flush_gap_min_ns = gap;
    }
    s->stats.rx_flush_gap_max_ns = MAX(s->stats.rx_flush_gap_max_ns, gap);
    s->stats.rx_flush_gaps++;
}

/*
 * dma-granule: the DMA engine moves whole, naturally aligned units of this
 * many bytes (1: byte exact; 4: words, the FIFOs' width; 32, the default:
 * one write burst of PDMA.WR_BURST + 1 = 8 words, as every driver programs
 * it).  A read writes every unit that holds a byte of the request whole:
 * the unit's bytes outside the request get what the FIFO held, the pattern
 * DMA_GRANULE_FILL here, which a guard check sees.  A write reads whole
 * units, which changes nothing in memory.  The requested bytes land where
 * they should in both directions (an engine that drops ADDR's low bits and
 * shifts the data is not modelled).  Counted: dma_unaligned_transfers,
 * dma_bytes_outside_request.
 */
#define DMA_GRANULE_FILL 0xe5
#define DMA_GRANULE_MAX 256

static void meson_mx_sdhc_dma_granule(MesonMxSdhcState *s, uint64_t len,
                                      bool is_write)
{
    uint64_t g = s->dma_granule, start = s->cur_addr, end = start + len;
    uint64_t lo = QEMU_ALIGN_DOWN(start, g), hi = QEMU_ALIGN_UP(end, g);
    uint8_t fill[DMA_GRANULE_MAX];

    if (lo == start && hi == end) {
        return;
    }
    s->stats.dma_unaligned_transfers++;
    if (is_write) {
        return;
    }
    memset(fill, DMA_GRANULE_FILL, sizeof(fill));
    if (lo < start &&
        dma_memory_write(&address_space_memory, lo, fill, start - lo,
                         MEMTXATTRS_UNSPECIFIED) == MEMTX_OK) {
        s->stats.dma_bytes_outside_request += start - lo;
    }
    if (hi > end &&
        dma_memory_write(&address_space_memory, end, fill, hi - end,
                         MEMTXATTRS_UNSPECIFIED) == MEMTX_OK) {
        s->stats.dma_bytes_outside_request += hi - end;
    }
}

/*
 * corrupt-read-byte-now, corrupt-write-byte-now (QMP): the next successful
 * read (write) longer than *@at bytes has that byte of its data XOR 0xff,
 * with no error: the read delivers it so, the write stores it so on the
 * card.  The silent corruption a wrong cache maintenance or bounce copy
 * would cause, for tests of tools that verify data (scripts/first-contact).
 */
static void meson_mx_sdhc_corrupt(uint8_t *buf, uint64_t total, bool *armed,
                                  uint32_t at, uint64_t *count)
{
    if (!*armed || total <= at) {
        return;
    }
    buf[at] ^= 0xff;
    *armed = false;
    (*count)++;
}

/* A data command that freezes the controller reaches the card first. */
static void meson_mx_sdhc_freeze_after_cmd(MesonMxSdhcState *s, uint32_t send)
{
    SDRequest req = { .cmd = SEND_CMD_INDEX(send), .arg = s->regs[R_ARGU] };
    uint8_t rsp[16];

    sdbus_do_command(&s->sdbus, &req, rsp);
    s->stats.data_state_left += sdbus_data_ready(&s->sdbus) ||
                                sdbus_receive_ready(&s->sdbus);
}

/* Move the data of the command in flight; returns the ISTA error bits. */
static uint32_t meson_mx_sdhc_do_data(MesonMxSdhcState *s)
{
    uint32_t send = s->cur_send;
    uint32_t blocks = SEND_TOTAL_PACK(send) + 1;
    uint32_t blksz = CTRL_PACK_LEN(s->regs[R_CTRL]) ?: 512;
    uint64_t total = (uint64_t)blocks * blksz;
    bool is_write = send & SEND_DATA_DIR;
    bool auto_stop = blocks > 1 && (!(s->regs[R_MISC] & MISC_MANUAL_STOP) ||
                                    s->ignore_manual_stop);
    g_autofree uint8_t *buf = g_malloc(total);
    uint32_t err = 0;
    MemTxResult res;

    if (is_write) {
        res = dma_memory_read(&address_space_memory, s->cur_addr, buf, total,
                              MEMTXATTRS_UNSPECIFIED);
        if (res == MEMTX_OK) {
            meson_mx_sdhc_dma_granule(s, total, true);
        }
        if (res != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "meson-mx-sdhc: DMA read of %" PRIu64
                          " bytes at 0x%08x is outside RAM\n",
                          total, s->cur_addr);
            s->stats.dma_errors++;
            err = IRQ_TXFIFO_EMPTY;
        } else if (s->cur_fault == MESON_FAULT_DATA_TIMEOUT) {
            /* no CRC status from the card: it takes nothing */
            err = IRQ_DATA_TIMEOUT;
        } else if (s->cur_fault == MESON_FAULT_DATA_CRC) {
            /* the card saw a CRC error and discards the data */
            err = IRQ_DATA_ERR_CRC;
        } else if (s->cur_fault == MESON_FAULT_PARTIAL_PROGRAM) {
            /* it takes the first half, then a block fails its CRC check */
            uint32_t taken = blocks / 2;

            for (uint32_t i = 0; i < taken; i++) {
                sdbus_write_data(&s->sdbus, buf + (uint64_t)i * blksz, blksz);
            }
            s->stats.bytes_written += (uint64_t)taken * blksz;
            s->card_busy_until = MAX(s->card_busy_until,
                                     qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) +
                                 s->long_program_ns;
            err = IRQ_DATA_ERR_CRC;
        } else if (!sdbus_receive_ready(&s->sdbus)) {
            err = IRQ_DATA_TIMEOUT;
        } else if (CTRL_RX_TIMEOUT(s->regs[R_CTRL]) < s->ncrc_clks) {
            /* the card takes the first block; its CRC status comes late */
            sdbus_write_data(&s->sdbus, buf, blksz);
            s->stats.rx_timeouts++;
            err = IRQ_DATA_TIMEOUT;
        } else {
            meson_mx_sdhc_corrupt(buf, total, &s->corrupt_write_armed,
                                  s->corrupt_write_at,
                                  &s->stats.corrupted_writes);
            for (uint32_t i = 0; i < blocks; i++) {
                sdbus_write_data(&s->sdbus, buf + (uint64_t)i * blksz, blksz);
            }
            s->stats.bytes_written += total;
            /* the card programs what it got: DAT0 stays low for a while */
            s->card_busy_until = MAX(s->card_busy_until,
                                     qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) +
                                 (s->cur_fault == MESON_FAULT_LONG_PROGRAM ?
                                  s->long_program_ns :
                                  s->prog_base_ns +
                                  muldiv64(total, s->prog_ns_per_kib, 1024));
        }
    } else {
        /*
         * A block that fails its CRC check ends the controller's data
         * phase there: what the controller does with the rest is not
         * documented.  The model takes the less kind reading: it reads
         * no further, so a multi-block read whose count the card has not
         * reached leaves the card sending data (stop-after-error).
         */
        uint32_t taken = s->cur_fault == MESON_FAULT_DATA_CRC && blocks > 1 ?
                         blocks / 2 + 1 : blocks;

        for (uint32_t i = 0; i < taken; i++) {
            if (!sdbus_data_ready(&s->sdbus)) {
                err = IRQ_DATA_TIMEOUT;
                break;
            }
            sdbus_read_data(&s->sdbus, buf + (uint64_t)i * blksz, blksz);
        }
        memset(buf + (uint64_t)taken * blksz, 0, (uint64_t)(blocks - taken) * blksz);
        if (!err && (s->cur_fault == MESON_FAULT_DATA_TIMEOUT ||
                     s->cur_rx_data_timeout)) {
            /* the data never arrived; nothing reaches memory */
            err = IRQ_DATA_TIMEOUT;
        } else if (!err) {
            uint64_t tail = 0;

            if (s->cur_fault == MESON_FAULT_DATA_CRC || s->cur_rx_crc) {
                /* garbage reaches memory: a driver must not use it */
                for (uint64_t i = 0; i < total; i++) {
                    buf[i] ^= 0x5a;
                }
                err = IRQ_DATA_ERR_CRC;
            } else {
                meson_mx_sdhc_corrupt(buf, total, &s->corrupt_read_armed,
                                      s->corrupt_read_at,
                                      &s->stats.corrupted_reads);
                /* the last words stay in the RX FIFO until the flush */
                tail = meson_mx_sdhc_rx_tail_len(s, total);
            }
            /* an earlier read's writes on their way land first */
            meson_mx_sdhc_rx_tail_land_now(s);
            meson_mx_sdhc_rx_late_land(s);
            if (tail && !dma_memory_valid(&address_space_memory, s->cur_addr,
                                          total, DMA_DIRECTION_FROM_DEVICE,
                                          MEMTXATTRS_UNSPECIFIED)) {
                res = MEMTX_DECODE_ERROR;
            } else {
                uint64_t now_len = total - tail -
                                   meson_mx_sdhc_rx_late_hold(s, buf, total,
                                                              tail);

                res = now_len ? dma_memory_write(&address_space_memory,
                                                 s->cur_addr, buf, now_len,
                                                 MEMTXATTRS_UNSPECIFIED) :
                                MEMTX_OK;
            }
            if (res == MEMTX_OK && tail) {
                memcpy(s->rx_tail, buf + total - tail, tail);
                s->rx_tail_len = tail;
                s->rx_tail_addr = s->cur_addr + total - tail;
                s->rx_flushing = false;
            }
            if (res == MEMTX_OK) {
                meson_mx_sdhc_dma_granule(s, total, false);
            }
            if (res != MEMTX_OK) {
                qemu_log_mask(LOG_GUEST_ERROR,
                              "meson-mx-sdhc: DMA write of %" PRIu64
                              " bytes at 0x%08x is outside RAM\n",
                              total, s->cur_addr);
                s->stats.dma_errors++;
                err = IRQ_RXFIFO_FULL;
            } else if (!err) {
                s->stats.bytes_read += total;
            }
        }
    }
    if (meson_mx_sdhc_stop_card(s, blocks, auto_stop, err)) {
        if (!meson_mx_sdhc_auto_stop(s) && auto_stop && !err &&
            SEND_CMD_INDEX(send) == 53) {
            /*
             * An SDIO card takes no CMD12 (it aborts through CCCR): after
             * a multi-block CMD53 without MISC.MANUAL_STOP the controller
             * waits for the stop's response in vain and reports a data
             * timeout, the data moved or not (Linux f89b548ca66b: a
             * brcmfmac firmware download failing with -110).
             */
            s->stats.stop_timeouts++;
            s->cur_stop_timeout = true;
            err = IRQ_DATA_TIMEOUT;
        }
    }
    return err;
}

/*
 * late-dma, at the response: the card has taken the read and sends its
 * blocks; the controller reports a response CRC error now, but its DMA
 * engine still writes each block to the address programmed for the command
 * when it would have arrived (read access, then one packet time per block),
 * unless SRST stops it.  The command path is idle meanwhile (STAT.CMD_BUSY
 * clear, FIFO counts 0) and a new command is accepted; when the last block
 * is written nothing more is signalled.
 */
static void meson_mx_sdhc_late_dma_start(MesonMxSdhcState *s)
{
    uint32_t blocks = SEND_TOTAL_PACK(s->cur_send) + 1;
    uint32_t blksz = CTRL_PACK_LEN(s->regs[R_CTRL]) ?: 512;
    bool auto_stop = blocks > 1 && !(s->regs[R_MISC] & MISC_MANUAL_STOP);
    uint8_t *buf = g_malloc0((uint64_t)blocks * blksz);
    uint32_t got = 0;

    /* what the card sends (all of it, unless it stops early) */
    while (got < blocks && sdbus_data_ready(&s->sdbus)) {
        sdbus_read_data(&s->sdbus, buf + (uint64_t)got * blksz, blksz);
        got++;
    }
    if (auto_stop || sdbus_data_ready(&s->sdbus)) {
        meson_mx_sdhc_auto_stop(s);
    }
    if (s->late_buf) {
        /* one DMA engine: an earlier late DMA is written out first */
        while (s->late_next < s->late_blocks) {
            meson_mx_sdhc_late_write(s, s->late_next++);
        }
        meson_mx_sdhc_late_free(s);
    }
    s->late_buf = buf;
    s->late_addr = s->cur_addr;
    s->late_blksz = blksz;
    s->late_blocks = got;
    s->late_next = 0;
    if (!got) {
        meson_mx_sdhc_late_free(s);
        return;
    }
    s->late_start = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                    s->read_access_ns + s->late_block_ns;
    timer_mod(s->late_timer, s->late_start);
}

/*
 * A data error that latches late (late-status-ns): a data command whose
 * data phase failed (CRC error, timeout) after a good response.  Not the
 * unanswered auto CMD12 after a CMD53 (Linux f89b548ca66b: the C driver saw
 * that error, -110), nor a DMA error, nor partial-program (whose error comes
 * with the completion, so that the wait for the card is the driver's own).
 */
static bool meson_mx_sdhc_error_is_late(MesonMxSdhcState *s, uint32_t ista,
                                        uint32_t err)
{
    return s->late_status_ns && !s->cur_stop_timeout &&
           s->cur_fault != MESON_FAULT_PARTIAL_PROGRAM &&
           !(ista & (IRQ_RESP_TIMEOUT | IRQ_RESP_ERR_CRC)) &&
           !(err & ~(IRQ_DATA_ERR_CRC | IRQ_DATA_TIMEOUT));
}

/*
 * error-busy-ns: a transfer's error that latches with the completion (a
 * response CRC error while the data moved, a data error that is not late)
 * leaves the controller finishing it, busy (STAT.CMD_BUSY, ESTA[13:11], as
 * under busy-hold) for error-busy-ns; an SRST meanwhile hangs it until the
 * next SRST (meson_mx_sdhc_write).  Not for DMA errors (the emulator's
 * own) nor a response timeout (no data moved).
 */
static void meson_mx_sdhc_error_busy(MesonMxSdhcState *s, uint32_t ista)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!s->error_busy_ns || !(s->cur_send & SEND_CMD_HAS_DATA) ||
        !(ista & (IRQ_RESP_ERR_CRC | IRQ_DATA_ERR_CRC | IRQ_DATA_TIMEOUT)) ||
        (ista & (IRQ_RESP_TIMEOUT | IRQ_RXFIFO_FULL | IRQ_TXFIFO_EMPTY))) {
        return;
    }
    s->error_busy_until = now + s->error_busy_ns;
    s->busy_hold_until = MAX(s->busy_hold_until, s->error_busy_until);
    s->stats.error_busy_commands++;
}

static void meson_mx_sdhc_complete(void *opaque)
{
    MesonMxSdhcState *s = opaque;
    uint32_t ista = s->cur_ista;
    uint32_t late = 0;

    if (!s->busy || s->frozen) {
        return;
    }
    if (s->late_status) {
        /* late-status-ns after the completion: the error, CMD_BUSY clears */
        s->late_status = false;
        s->busy = false;
        meson_mx_sdhc_latch(s, s->late_status_ista);
        meson_mx_sdhc_dat1_check(s);
        return;
    }
    if (s->cur_fault == MESON_FAULT_LATE_DMA && !(ista & IRQ_RESP_TIMEOUT)) {
        meson_mx_sdhc_late_dma_start(s);
        s->txfifo_cnt = 0;
        s->rxfifo_cnt = 0;
        s->busy = false;
        meson_mx_sdhc_latch(s, IRQ_RESP_ERR_CRC);
        return;
    }
    if (!(ista & IRQ_RESP_TIMEOUT) && (s->cur_send & SEND_CMD_HAS_DATA)) {
        uint32_t err = meson_mx_sdhc_do_data(s);

        if (err && meson_mx_sdhc_error_is_late(s, ista, err)) {
            /* what a success latches now, the error when CMD_BUSY clears */
            late = err;
            ista |= IRQ_DATA_1PACK_OK | IRQ_DATA_XFER_OK | IRQ_DMA_DONE;
        } else if (err) {
            ista |= err;
        } else {
            ista |= IRQ_DATA_1PACK_OK | IRQ_DATA_XFER_OK | IRQ_DMA_DONE;
        }
        s->txfifo_cnt = 0;
        s->rxfifo_cnt = 0;
    }
    if (!(ista & (IRQ_RESP_TIMEOUT | IRQ_RESP_ERR_CRC))) {
        ista |= IRQ_RESP_OK | IRQ_RESP_OK_NOCLEAR;
    } else if (sdbus_data_ready(&s->sdbus) || sdbus_receive_ready(&s->sdbus)) {
        /* the host gave up on the data phase: stop the card */
        meson_mx_sdhc_auto_stop(s);
    }
    if (late) {
        s->late_status = true;
        s->late_status_ista = late;
        s->stats.late_status_commands++;
        timer_mod(s->done_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                                 s->late_status_ns);
    } else {
        s->busy = false;
        meson_mx_sdhc_error_busy(s, ista);
    }
    if (s->cur_fault == MESON_FAULT_LOST_IRQ) {
        /* done inside the controller; the interrupt logic is stuck */
        s->irq_stuck = true;
    } else if (s->cur_fault == MESON_FAULT_LOST_EDGE) {
        /* ISTA latches, the output stays low until ISTA or ICTL is written */
        s->irq_edge_lost = true;
        s->stats.lost_edge_commands++;
    } else if (s->cur_fault == MESON_FAULT_BUSY_HOLD) {
        /* done, but STAT.CMD_BUSY and ESTA[13:11] stay set */
        s->busy_hold_until = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                             s->busy_hold_ns;
        s->stats.busy_hold_commands++;
    }
    meson_mx_sdhc_latch(s, ista);
    meson_mx_sdhc_dat1_check(s);
}

static void meson_mx_sdhc_send(MesonMxSdhcState *s, uint32_t send)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t start, done;
    uint64_t hz = meson_mx_sdhc_sd_clk(s);
    SDRequest req;
    uint8_t rsp[16];
    int rlen;
    bool card_busy, status_cmd;

    if (s->busy || now < s->busy_hold_until) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: SEND 0x%08x written while CMD%u is busy%s;"
                      " ignored\n", send, SEND_CMD_INDEX(s->cur_send),
                      s->busy ? "" : " (busy-hold)");
        s->stats.busy_rejects++;
        return;
    }

    /* what the RX FIFO still held of the last read is gone */
    meson_mx_sdhc_rx_tail_lose(s);
    s->stats.commands++;
    meson_mx_sdhc_count_data_state(s, send);
    if (s->draining) {
        s->cmd_since_srst = true;
    }
    s->cur_send = send;
    s->cur_addr = s->regs[R_ADDR];
    s->cur_ista = 0;
    s->cur_rx_crc = false;
    s->cur_stop_timeout = false;
    s->cur_rx_data_timeout = false;
    s->busy = true;
    memset(s->resp, 0, sizeof(s->resp));

    if (send & SEND_CMD_HAS_DATA) {
        uint32_t blocks = SEND_TOTAL_PACK(send) + 1;
        uint32_t blksz = CTRL_PACK_LEN(s->regs[R_CTRL]) ?: 512;

        s->stats.data_commands++;
        if (send & SEND_DATA_DIR) {
            s->stats.write_commands++;
        } else {
            s->stats.read_commands++;
        }
        meson_mx_sdhc_hist(s, (uint64_t)blocks * blksz);
    }

    card_busy = now < s->card_busy_until;
    status_cmd = SEND_CMD_INDEX(send) == 12 || SEND_CMD_INDEX(send) == 13;
    if (card_busy && !status_cmd) {
        /* a card in its busy state takes only CMD12 and CMD13 */
        s->stats.cmds_while_card_busy++;
    }
    /*
     * The next command waits for the card to finish programming, but CMD12
     * and CMD13, which a busy card answers at once (CMD13 with its state
     * PRG, below).
     */
    start = status_cmd ? now : MAX(now, s->card_busy_until);

    if (!hz) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: CMD%u sent with the SD clock off"
                      " (CLKC 0x%08x)\n", SEND_CMD_INDEX(send),
                      s->regs[R_CLKC]);
        s->cur_fault = MESON_FAULT_NONE;
        s->cur_ista = IRQ_RESP_TIMEOUT;
        timer_mod(s->done_timer, start + s->resp_timeout_ns);
        return;
    }
    if ((send & SEND_CMD_HAS_DATA) && !(s->regs[R_PDMA] & PDMA_DMA_MODE)) {
        qemu_log_mask(LOG_UNIMP,
                      "meson-mx-sdhc: PIO data transfers are not modelled\n");
    }

    if (s->rx_phase_freeze &&
        (s->regs[R_CLK2] & 0xfff) > CLKC_CLK_DIV(s->regs[R_CLKC])) {
        /*
         * Linux c82efcaad2a4: an RX phase beyond the divider "make[s]
         * hardware frozen. After we send command request, no irq will be
         * interrupted".  Busy until SRST; the card never sees the command.
         */
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: CMD%u sent with RX phase %u beyond the"
                      " clock divider %u: controller frozen until SRST\n",
                      SEND_CMD_INDEX(send), s->regs[R_CLK2] & 0xfff,
                      CLKC_CLK_DIV(s->regs[R_CLKC]));
        s->stats.rx_phase_freezes++;
        s->cur_fault = MESON_FAULT_NONE;
        s->frozen = true;
        return;
    }

    s->cur_fault = meson_mx_sdhc_pick_fault(s, send);
    meson_mx_sdhc_count_fault(s, s->cur_fault);
    if (s->cur_fault == MESON_FAULT_NONE && (send & SEND_CMD_HAS_DATA) &&
        !(send & SEND_DATA_DIR) && !meson_mx_sdhc_rx_sampled_ok(s, hz)) {
        /* the card's data sampled outside the rx-window: CRC error */
        s->cur_rx_crc = true;
        s->stats.rx_window_crc_errors++;
    }

    if (s->cur_fault == MESON_FAULT_FREEZE) {
        /*
         * busy (STAT.CMD_BUSY), no interrupt, no data until SRST.  A data
         * command freezes once it went out (the less kind reading of a
         * controller that hangs mid-transfer): the card took it and waits
         * in its sending-data or receiving-data state for CMD12.
         */
        if (send & SEND_CMD_HAS_DATA) {
            meson_mx_sdhc_freeze_after_cmd(s, send);
        }
        s->frozen = true;
        return;
    }
    if (s->cur_fault == MESON_FAULT_RESP_TIMEOUT) {
        /* the command never reached the card */
        s->cur_ista = IRQ_RESP_TIMEOUT;
        timer_mod(s->done_timer, start + s->resp_timeout_ns);
        return;
    }

    if ((send & SEND_CMD_HAS_RESP) &&
        CTRL_RX_TIMEOUT(s->regs[R_CTRL]) < s->ncr_clks) {
        /* the controller gives up before the card answers */
        s->stats.rx_timeouts++;
        s->cur_ista = IRQ_RESP_TIMEOUT;
        timer_mod(s->done_timer, start + meson_mx_sdhc_clocks_ns(
                      48 + CTRL_RX_TIMEOUT(s->regs[R_CTRL]), hz));
        return;
    }

    req.cmd = SEND_CMD_INDEX(send);
    req.arg = s->regs[R_ARGU];
    req.crc = 0;
    rlen = sdbus_do_command(&s->sdbus, &req, rsp);

    done = start + s->cmd_latency_ns +
           meson_mx_sdhc_clocks_ns(48 + 8 + ((send & SEND_RESP_LEN) ? 136 : 48),
                                   hz);

    if (send & SEND_CMD_HAS_RESP) {
        if (rlen == 4) {
            s->resp[0] = ldl_be_p(rsp);
            if (card_busy && SEND_CMD_INDEX(send) == 13) {
                /* R1 CURRENT_STATE (bits 12:9): prg */
                s->resp[0] = (s->resp[0] & ~(0xfu << 9)) | (7u << 9);
            }
        } else if (rlen == 16) {
            s->resp[4] = ldl_be_p(rsp);
            s->resp[3] = ldl_be_p(rsp + 4);
            s->resp[2] = ldl_be_p(rsp + 8);
            s->resp[1] = ldl_be_p(rsp + 12);
            s->resp[0] = s->resp[1];
        } else {
            /* no answer from the card */
            s->cur_ista = IRQ_RESP_TIMEOUT;
            timer_mod(s->done_timer, start + s->resp_timeout_ns);
            return;
        }
    }
    if (s->cur_fault == MESON_FAULT_RESP_CRC) {
        /*
         * The card took the command; only its response arrived damaged.
         * A data phase still runs (the card sends or takes the data).
         */
        s->cur_ista = IRQ_RESP_ERR_CRC;
    }

    if (send & SEND_CMD_HAS_DATA) {
        uint32_t blocks = SEND_TOTAL_PACK(send) + 1;
        uint32_t blksz = CTRL_PACK_LEN(s->regs[R_CTRL]) ?: 512;
        unsigned width = meson_mx_sdhc_bus_width(s);
        uint64_t per_block = DIV_ROUND_UP(blksz * 8, width) + 18;

        if (s->regs[R_CTRL] & CTRL_DDR_MODE) {
            per_block = DIV_ROUND_UP(blksz * 8, width * 2) + 18;
        }
        if (s->cur_fault == MESON_FAULT_LATE_DMA) {
            /* the error comes with the response, the data after it */
            s->late_block_ns = meson_mx_sdhc_clocks_ns(per_block, hz);
            timer_mod(s->done_timer, done);
            return;
        }
        if (s->cur_fault == MESON_FAULT_DATA_TIMEOUT) {
            done += s->data_timeout_ns;
        } else {
            int64_t stall = meson_mx_sdhc_pick_stall(s, send);
            int64_t rx_limit = meson_mx_sdhc_rx_data_timeout_ns(s, hz);

            if (!(send & SEND_DATA_DIR)) {
                done += s->read_access_ns;
            } else {
                per_block += 8; /* CRC status token */
            }
            s->cur_data_start = done;
            s->cur_block_ns = meson_mx_sdhc_clocks_ns(per_block, hz);
            done += meson_mx_sdhc_clocks_ns(per_block * blocks, hz);
            if (stall && !(send & SEND_DATA_DIR) && rx_limit &&
                s->read_access_ns + s->stall_read_ns > rx_limit) {
                /*
                 * The card's first stall (its access time stretched)
                 * outlasts ENHC.RX_TIMEOUT: the controller gives up with a
                 * data timeout, nothing reaches memory.
                 */
                s->cur_rx_data_timeout = true;
                s->stats.rx_data_timeouts++;
                done = s->cur_data_start - s->read_access_ns + rx_limit;
            } else {
                /* the card's stalls inside the transfer */
                done += stall;
            }
        }
        if (blocks > 1 && (!(s->regs[R_MISC] & MISC_MANUAL_STOP) ||
                           s->ignore_manual_stop)) {
            done += meson_mx_sdhc_clocks_ns(48 + 8 + 48, hz); /* CMD12 */
        }
    } else if (send & SEND_R1B) {
        if (s->r1b_busy_ns) {
            /* the card holds DAT0 busy after its response */
            s->card_busy_until = MAX(s->card_busy_until, done) +
                                 s->r1b_busy_ns;
            s->stats.r1b_busy_commands++;
        }
        if (s->r1b_done_at_dat0 && s->card_busy_until > done) {
            /* the completion comes once DAT0 is released */
            done = s->card_busy_until;
        }
    }
    timer_mod(s->done_timer, done);
    meson_mx_sdhc_dat1_check(s);
}

static void meson_mx_sdhc_reset_ctrl(MesonMxSdhcState *s)
{
    timer_del(s->done_timer);
    s->busy = false;
    s->frozen = false;
    s->irq_stuck = false;
    s->lost_ista = 0;
    s->late_status = false;
    s->busy_hold_until = 0;
    s->txfifo_cnt = 0;
    s->rxfifo_cnt = 0;
}

/*
 * drain-visible: the words a drain after SRST still moves (the blocks that
 * land before it ends), as STAT.RXFIFO_CNT shows them; 0 when none.
 */
static uint32_t meson_mx_sdhc_drain_words(MesonMxSdhcState *s, int64_t now)
{
    int64_t next, block_ns;
    uint64_t blocks;

    if (!s->drain_visible || !s->draining || !s->late_buf ||
        now > s->drain_until) {
        return 0;
    }
    block_ns = MAX(s->late_block_ns, 1);
    next = s->late_start + (int64_t)s->late_next * block_ns;
    if (next > s->drain_until) {
        return 0;
    }
    blocks = MIN(s->late_blocks - s->late_next,
                 (s->drain_until - next) / block_ns + 1);
    return MAX(MIN(blocks * s->late_blksz / 4, STAT_FIFO_CNT_MASK), 1);
}

static uint64_t meson_mx_sdhc_read(void *opaque, hwaddr offset, unsigned size)
{
    MesonMxSdhcState *s = opaque;
    uint32_t idx = offset / 4;
    uint32_t v;

    if (offset & 3 || idx >= MESON_MX_SDHC_NUM_REGS) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: bad read offset 0x%" HWADDR_PRIx "\n",
                      offset);
        return 0;
    }
    meson_mx_sdhc_rx_flush_catch_up(s);

    switch (idx) {
    case R_ARGU:
        if (!(s->regs[R_PDMA] & PDMA_DMA_MODE)) {
            unsigned w = PDMA_PIO_RDRESP(s->regs[R_PDMA]);

            return w < 5 ? s->resp[w] : 0;
        }
        return s->regs[R_ARGU];
    case R_STAT: {
        int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        uint32_t dat = sdbus_get_dat_lines(&s->sdbus) & 0xf;
        uint32_t drain = meson_mx_sdhc_drain_words(s, now);
        uint32_t rx = s->rxfifo_cnt;
        bool busy = s->busy || now < s->busy_hold_until || drain;
        bool programming = s->busy_while_programming &&
                           now < s->card_busy_until;

        meson_mx_sdhc_rx_flush_gap(s);
        if (s->rx_tail_len) {
            rx = meson_mx_sdhc_rx_tail_count(s, now);
        }
        rx = MAX(rx, drain);
        if (now < s->card_busy_until) {
            dat &= ~1u; /* DAT0 low: the card is programming */
        }
        if (programming && !busy) {
            s->stats.programming_busy_reads++;
            busy = true;
        }
        v = (busy ? STAT_CMD_BUSY : 0) |
            (dat << STAT_DAT3_0_SHIFT) |
            (sdbus_get_cmd_line(&s->sdbus) ? STAT_CMD : 0) |
            ((rx & STAT_FIFO_CNT_MASK) << STAT_RXFIFO_CNT_SHIFT) |
            ((s->txfifo_cnt & STAT_FIFO_CNT_MASK) << STAT_TXFIFO_CNT_SHIFT) |
            (0xfu << STAT_DAT7_4_SHIFT);
        return v;
    }
    case R_DATA:
        qemu_log_mask(LOG_UNIMP, "meson-mx-sdhc: PIO DATA read\n");
        return 0;
    case R_ESTA:
        /* busy-hold: the bits the drivers wait for to clear */
        return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) < s->busy_hold_until ?
               ESTA_11_13 : 0;
    default:
        return s->regs[idx];
    }
}

static void meson_mx_sdhc_write(void *opaque, hwaddr offset, uint64_t value,
                                unsigned size)
{
    MesonMxSdhcState *s = opaque;
    uint32_t idx = offset / 4;
    uint32_t v = value;

    if (offset & 3 || idx >= MESON_MX_SDHC_NUM_REGS) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: bad write offset 0x%" HWADDR_PRIx "\n",
                      offset);
        return;
    }
    meson_mx_sdhc_rx_flush_catch_up(s);

    switch (idx) {
    case R_SEND:
        s->regs[R_SEND] = v;
        meson_mx_sdhc_send(s, v);
        break;
    case R_STAT:
    case R_ESTA:
        break; /* read only */
    case R_PDMA:
        if ((v & PDMA_TXFIFO_FILL) && (v & PDMA_DMA_MODE)) {
            /* prefetch from ADDR into the TX FIFO */
            s->txfifo_cnt = TX_FIFO_WORDS;
        }
        s->regs[R_PDMA] = v & ~PDMA_TXFIFO_FILL; /* self-clearing */
        if (v & PDMA_RXFIFO_FLUSH) {
            meson_mx_sdhc_rx_flush(s);
        }
        break;
    case R_ICTL:
        s->regs[R_ICTL] = v;
        s->irq_edge_lost = false;
        meson_mx_sdhc_update_irq(s);
        meson_mx_sdhc_dat1_check(s);
        break;
    case R_ISTA:
        if (v & s->regs[R_ISTA] & s->dat1_stuck) {
            /* dat1-stuck: the fault keeps these latched */
            s->stats.dat1_stuck_writes++;
            v &= ~s->dat1_stuck;
        }
        s->regs[R_ISTA] &= ~(v & IRQ_ALL);
        s->irq_edge_lost = false;
        meson_mx_sdhc_update_irq(s);
        meson_mx_sdhc_dat1_check(s);
        break;
    case R_CTRL:
    case R_ENHC:
    case R_CLKC:    /* CLK_JIC: dat1-clock-gating */
        s->regs[idx] = v;
        meson_mx_sdhc_dat1_check(s);
        break;
    case R_SRST:
        s->regs[R_SRST] = v;
        if (v) {
            meson_mx_sdhc_rx_flush_gap(s);
        }
        if (v & (SRST_MAIN_CTRL | SRST_RXFIFO)) {
            /* the RX FIFO's tail, flushed or not, is gone */
            meson_mx_sdhc_rx_tail_lose(s);
        }
        if (v & SRST_MAIN_CTRL) {
            bool hang = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) <
                        s->error_busy_until;

            s->stats.srst_resets++;
            if (qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) < s->card_busy_until) {
                s->stats.srst_while_programming++;
            }
            meson_mx_sdhc_reset_ctrl(s);
            s->error_busy_until = 0;
            if (hang) {
                /* error-busy: the DMA interface hangs until the next SRST */
                qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdhc: SRST while the"
                              " controller finishes a failed transfer: busy"
                              " until the next SRST\n");
                s->busy_hold_until = INT64_MAX;
                s->stats.srst_while_error_busy++;
            }
        }
        if (v & (SRST_MAIN_CTRL | SRST_DMA_IF)) {
            meson_mx_sdhc_dma_reset(s);
        }
        if (v & SRST_RXFIFO) {
            s->rxfifo_cnt = 0;
        }
        if (v & SRST_TXFIFO) {
            s->txfifo_cnt = 0;
        }
        meson_mx_sdhc_dat1_check(s);
        break;
    case R_DATA:
        qemu_log_mask(LOG_UNIMP, "meson-mx-sdhc: PIO DATA write\n");
        break;
    default:
        s->regs[idx] = v;
        break;
    }
}

static const MemoryRegionOps meson_mx_sdhc_ops = {
    .read = meson_mx_sdhc_read,
    .write = meson_mx_sdhc_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl.min_access_size = 4,
};

/* ---- the counters, read by the guest (see meson_mx_sdhc.h) ------------- */

static uint64_t meson_mx_sdhc_info_read(void *opaque, hwaddr addr,
                                        unsigned size)
{
    MesonMxSdhcState *s = opaque;
    uint64_t faults = 0;
    uint64_t v;

    for (int k = 0; k < MESON_FAULT__MAX; k++) {
        if (meson_mx_sdhc_fault_is_kind(k)) {
            faults += s->stats.faults[k];
        }
    }
    switch (addr & ~7) {
    case MESON_INFO_MAGIC:
        return addr == MESON_INFO_MAGIC ? MESON_MX_SDHC_INFO_MAGIC
                                        : MESON_MX_SDHC_INFO_VERSION;
    case MESON_INFO_COMMANDS:
        v = s->stats.commands;
        break;
    case MESON_INFO_DATA_COMMANDS:
        v = s->stats.data_commands;
        break;
    case MESON_INFO_BYTES_READ:
        v = s->stats.bytes_read;
        break;
    case MESON_INFO_BYTES_WRITTEN:
        v = s->stats.bytes_written;
        break;
    case MESON_INFO_FAULTS:
        v = faults;
        break;
    case MESON_INFO_FAULTS_LOST_IRQ:
        v = s->stats.faults[MESON_FAULT_LOST_IRQ];
        break;
    case MESON_INFO_FAULTS_FREEZE:
        v = s->stats.faults[MESON_FAULT_FREEZE];
        break;
    case MESON_INFO_FAULTS_LATE_DMA:
        v = s->stats.faults[MESON_FAULT_LATE_DMA];
        break;
    case MESON_INFO_RX_PHASE_FREEZES:
        v = s->stats.rx_phase_freezes;
        break;
    case MESON_INFO_SRST_RESETS:
        v = s->stats.srst_resets;
        break;
    case MESON_INFO_LATE_DMA_BYTES:
        v = s->stats.late_dma_bytes;
        break;
    case MESON_INFO_LATE_DMA_CANCELLED:
        v = s->stats.late_dma_cancelled;
        break;
    case MESON_INFO_LOST_IRQ_COMMANDS:
        v = s->stats.lost_irq_commands;
        break;
    case MESON_INFO_STATE:
        v = (s->irq_stuck ? 1 : 0) | (s->frozen ? 2 : 0) |
            (s->late_buf ? 4 : 0);
        break;
    case MESON_INFO_RX_WINDOW_CRC:
        v = s->stats.rx_window_crc_errors;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "meson-mx-sdhc: counters: no register at 0x%" HWADDR_PRIx
                      "\n", addr);
        return 0;
    }
    return (addr & 4) ? v >> 32 : (uint32_t)v;
}

static void meson_mx_sdhc_info_write(void *opaque, hwaddr addr, uint64_t v,
                                     unsigned size)
{
    qemu_log_mask(LOG_GUEST_ERROR,
                  "meson-mx-sdhc: counters are read-only (write at 0x%"
                  HWADDR_PRIx ")\n", addr);
}

static const MemoryRegionOps meson_mx_sdhc_info_ops = {
    .read = meson_mx_sdhc_info_read,
    .write = meson_mx_sdhc_info_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl.min_access_size = 4,
};

/* ---- QOM properties for the host side (QMP qom-get / qom-set) ---------- */

static char *meson_mx_sdhc_get_rx_window(Object *obj, Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);

    if (s->rx_window_none) {
        return g_strdup("none");
    }
    if (s->rx_window_lo == 0 && s->rx_window_hi == 100) {
        return g_strdup("all");
    }
    return g_strdup_printf("%u-%u", s->rx_window_lo, s->rx_window_hi);
}

/*
 * "all", "none" or "LO-HI" (percent, LO, HI <= 100; LO > HI wraps: LO-100
 * and 0-HI)
 */
static void meson_mx_sdhc_set_rx_window(Object *obj, const char *v,
                                        Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);
    unsigned lo, hi;
    int n = -1;

    if (!strcmp(v, "all")) {
        s->rx_window_none = false;
        s->rx_window_lo = 0;
        s->rx_window_hi = 100;
        return;
    }
    if (!strcmp(v, "none")) {
        s->rx_window_none = true;
        return;
    }
    if (sscanf(v, "%u-%u%n", &lo, &hi, &n) != 2 || n < 0 || v[n] ||
        lo > 100 || hi > 100) {
        error_setg(errp, "meson-mx-sdhc: rx-window '%s' is not all, none or"
                   " LO-HI (percent, LO, HI <= 100; LO > HI wraps)", v);
        return;
    }
    s->rx_window_none = false;
    s->rx_window_lo = lo;
    s->rx_window_hi = hi;
}

/* stop-after-error and unwatched RX tail counters, after the histogram */
static void meson_mx_sdhc_data_state_stats(MesonMxSdhcState *s, GString *str)
{
    g_string_append_printf(str,
        ", \"data_state_left\": %" PRIu64
        ", \"cmds_while_card_in_data_state\": %" PRIu64
        ", \"rx_tails_landed_unwatched\": %" PRIu64,
        s->stats.data_state_left, s->stats.cmds_while_card_in_data_state,
        s->stats.rx_tails_landed_unwatched);
}

static char *meson_mx_sdhc_get_stats(Object *obj, Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);
    GString *str = g_string_new("{");
    g_autofree char *window = meson_mx_sdhc_get_rx_window(obj, NULL);
    bool first = true;

    g_string_append_printf(str, "\"rx_data_timeouts\": %" PRIu64
                           ", \"error_busy_commands\": %" PRIu64
                           ", \"srst_while_error_busy\": %" PRIu64
                           ", \"dat1_asserted_gated\": %" PRIu64
                           ", \"dat1_stuck_writes\": %" PRIu64 ", ",
                           s->stats.rx_data_timeouts,
                           s->stats.error_busy_commands,
                           s->stats.srst_while_error_busy,
                           s->stats.dat1_asserted_gated,
                           s->stats.dat1_stuck_writes);

    g_string_append_printf(str,
        "\"commands\": %" PRIu64 ", \"data_commands\": %" PRIu64
        ", \"read_commands\": %" PRIu64 ", \"write_commands\": %" PRIu64
        ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
        ", \"busy_rejects\": %" PRIu64 ", \"dma_errors\": %" PRIu64
        ", \"srst_resets\": %" PRIu64 ", \"rx_phase_freezes\": %" PRIu64
        ", \"lost_irq_commands\": %" PRIu64
        ", \"late_dma_bytes\": %" PRIu64
        ", \"late_dma_cancelled_bytes\": %" PRIu64
        ", \"rx_window_crc_errors\": %" PRIu64
        ", \"busy_stalls\": %" PRIu64 ", \"stall_ns\": %" PRIu64
        ", \"drain_bytes\": %" PRIu64
        ", \"drain_bytes_after_cmd\": %" PRIu64
        ", \"rx_timeouts\": %" PRIu64
        ", \"stop_timeouts\": %" PRIu64 ", \"dat1_irqs\": %" PRIu64
        ", \"addi_dat1_irqs\": %" PRIu64
        ", \"dat1_edges_lost\": %" PRIu64
        ", \"rx_tail_bytes_flushed\": %" PRIu64
        ", \"rx_tail_bytes_lost\": %" PRIu64
        ", \"rx_flush_gaps\": %" PRIu64
        ", \"rx_flush_gap_min_ns\": %" PRIu64
        ", \"rx_flush_gap_max_ns\": %" PRIu64
        ", \"late_status_commands\": %" PRIu64
        ", \"lost_edge_commands\": %" PRIu64
        ", \"busy_hold_commands\": %" PRIu64
        ", \"programming_busy_reads\": %" PRIu64
        ", \"srst_while_programming\": %" PRIu64
        ", \"dat1_masked_unlatched\": %" PRIu64
        ", \"r1b_busy_commands\": %" PRIu64
        ", \"cmds_while_card_busy\": %" PRIu64
        ", \"dat1_asserted_masked\": %" PRIu64
        ", \"state\": {\"irq_stuck\": %s, \"frozen\": %s"
        ", \"late_dma_running\": %s, \"lost_ista\": %u"
        ", \"rx_phase\": %u, \"clk_div\": %u, \"sd_clk_hz\": %" PRIu64
        ", \"rx_window\": \"%s\", \"irq_edge_lost\": %s"
        ", \"busy_hold\": %s, \"late_status\": %s"
        ", \"rx_tail_bytes\": %u, \"rx_flushing\": %s"
        ", \"dat1_low\": %s, \"dat1_lose_edges\": %u}"
        ", \"faults\": {",
        s->stats.commands, s->stats.data_commands, s->stats.read_commands,
        s->stats.write_commands, s->stats.bytes_read, s->stats.bytes_written,
        s->stats.busy_rejects, s->stats.dma_errors, s->stats.srst_resets,
        s->stats.rx_phase_freezes, s->stats.lost_irq_commands,
        s->stats.late_dma_bytes, s->stats.late_dma_cancelled,
        s->stats.rx_window_crc_errors,
        s->stats.busy_stalls, s->stats.stall_ns, s->stats.drain_bytes,
        s->stats.drain_bytes_after_cmd, s->stats.rx_timeouts,
        s->stats.stop_timeouts, s->stats.dat1_irqs, s->stats.addi_dat1_irqs,
        s->stats.dat1_edges_lost, s->stats.rx_tail_bytes_flushed,
        s->stats.rx_tail_bytes_lost, s->stats.rx_flush_gaps,
        s->stats.rx_flush_gap_min_ns, s->stats.rx_flush_gap_max_ns,
        s->stats.late_status_commands, s->stats.lost_edge_commands,
        s->stats.busy_hold_commands, s->stats.programming_busy_reads,
        s->stats.srst_while_programming, s->stats.dat1_masked_unlatched,
        s->stats.r1b_busy_commands,
        s->stats.cmds_while_card_busy, s->stats.dat1_asserted_masked,
        s->irq_stuck ? "true" : "false", s->frozen ? "true" : "false",
        s->late_buf ? "true" : "false", s->lost_ista,
        s->regs[R_CLK2] & 0xfff, CLKC_CLK_DIV(s->regs[R_CLKC]),
        meson_mx_sdhc_sd_clk(s), window,
        s->irq_edge_lost ? "true" : "false",
        qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) < s->busy_hold_until ?
            "true" : "false",
        s->late_status ? "true" : "false", s->rx_tail_len,
        s->rx_flushing ? "true" : "false", s->dat1_low ? "true" : "false",
        s->dat1_lose_edges);
    for (int k = 0; k < MESON_FAULT__MAX; k++) {
        if (!meson_mx_sdhc_fault_is_kind(k)) {
            continue;
        }
        g_string_append_printf(str, "%s\"%s\": %" PRIu64, first ? "" : ", ",
                               fault_names[k], s->stats.faults[k]);
        first = false;
    }
    g_string_append_printf(str, "}, \"rx_tail_early_empty\": %" PRIu64,
                           s->stats.rx_tail_early_empty);
    g_string_append_printf(str, ", \"rx_late_bytes\": %" PRIu64,
                           s->stats.rx_late_bytes);
    g_string_append(str, ", \"size_histogram\": {");
    first = true;
    for (int b = 0; b < MESON_MX_SDHC_HIST_BUCKETS; b++) {
        if (s->stats.size_hist[b]) {
            g_string_append_printf(str, "%s\"%" PRIu64 "\": %" PRIu64,
                                   first ? "" : ", ", (uint64_t)1 << b,
                                   s->stats.size_hist[b]);
            first = false;
        }
    }
    g_string_append(str, "}");
    meson_mx_sdhc_data_state_stats(s, str);
    g_string_append_printf(str, ", \"dma_unaligned_transfers\": %" PRIu64
                           ", \"dma_bytes_outside_request\": %" PRIu64
                           ", \"corrupted_reads\": %" PRIu64
                           ", \"corrupted_writes\": %" PRIu64 "}",
                           s->stats.dma_unaligned_transfers,
                           s->stats.dma_bytes_outside_request,
                           s->stats.corrupted_reads,
                           s->stats.corrupted_writes);
    return g_string_free(str, false);
}

static void meson_mx_sdhc_set_reset_stats(Object *obj, bool value,
                                          Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);

    if (value) {
        memset(&s->stats, 0, sizeof(s->stats));
    }
}

static bool meson_mx_sdhc_get_false(Object *obj, Error **errp)
{
    return false;
}

/* ignore-manual-stop (QMP): act as if MISC.MANUAL_STOP were never set */
static bool meson_mx_sdhc_get_ignore_stop(Object *obj, Error **errp)
{
    return MESON_MX_SDHC(obj)->ignore_manual_stop;
}

static void meson_mx_sdhc_set_ignore_stop(Object *obj, bool value,
                                          Error **errp)
{
    MESON_MX_SDHC(obj)->ignore_manual_stop = value;
}

/* stop-after-error-now (QMP): stop-after-error of a running board */
static bool meson_mx_sdhc_get_stop_after_error(Object *obj, Error **errp)
{
    return MESON_MX_SDHC(obj)->stop_after_error;
}

static void meson_mx_sdhc_set_stop_after_error(Object *obj, bool value,
                                               Error **errp)
{
    MESON_MX_SDHC(obj)->stop_after_error = value;
}

static int meson_mx_sdhc_lookup(const char *const *names, int n,
                                const char *v, const char *what, Error **errp)
{
    GString *valid = g_string_new("");

    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], v)) {
            g_string_free(valid, true);
            return i;
        }
        g_string_append_printf(valid, "%s%s", i ? ", " : "", names[i]);
    }
    error_setg(errp, "meson-mx-sdhc: %s '%s' is not one of: %s", what, v,
               valid->str);
    g_string_free(valid, true);
    return -1;
}

static char *meson_mx_sdhc_get_fault_kind(Object *obj, Error **errp)
{
    return g_strdup(fault_names[MESON_MX_SDHC(obj)->fault_kind]);
}

static void meson_mx_sdhc_set_fault_kind(Object *obj, const char *v,
                                         Error **errp)
{
    int k = meson_mx_sdhc_lookup(fault_names, MESON_FAULT__MAX, v,
                                 "fault-kind", errp);

    if (k >= 0) {
        MESON_MX_SDHC(obj)->fault_kind = k;
        MESON_MX_SDHC(obj)->faults_done = 0;
    }
}

static char *meson_mx_sdhc_get_fault_dir(Object *obj, Error **errp)
{
    return g_strdup(fault_dir_names[MESON_MX_SDHC(obj)->fault_dir]);
}

static void meson_mx_sdhc_set_fault_dir(Object *obj, const char *v,
                                        Error **errp)
{
    int k = meson_mx_sdhc_lookup(fault_dir_names,
                                 ARRAY_SIZE(fault_dir_names), v,
                                 "fault-dir", errp);

    if (k >= 0) {
        MESON_MX_SDHC(obj)->fault_dir = k;
    }
}

static void meson_mx_sdhc_get_u64(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);
    uint64_t val = 0;

    if (!strcmp(name, "fault-after")) {
        val = s->fault_after;
    } else if (!strcmp(name, "fault-probability-ppm")) {
        val = s->fault_ppm;
    } else if (!strcmp(name, "fault-limit")) {
        val = s->fault_limit;
    } else if (!strcmp(name, "fault-seed")) {
        val = s->fault_seed;
    } else if (!strcmp(name, "faults-injected")) {
        val = s->faults_done;
    } else if (!strcmp(name, "stall-probability-ppm")) {
        val = s->stall_ppm;
    } else if (!strcmp(name, "stall-count")) {
        val = s->stall_count;
    } else if (!strcmp(name, "stall-read-ns")) {
        val = s->stall_read_ns;
    } else if (!strcmp(name, "stall-write-ns")) {
        val = s->stall_write_ns;
    } else if (!strcmp(name, "stall-seed")) {
        val = s->stall_seed;
    } else if (!strcmp(name, "reset-drain-ns")) {
        val = s->reset_drain_ns;
    } else if (!strcmp(name, "dat1-lose-edges")) {
        val = s->dat1_lose_edges;
    } else if (!strcmp(name, "dat1-stuck")) {
        val = s->dat1_stuck;
    } else if (!strcmp(name, "rx-flush-ns-now")) {
        val = s->rx_flush_ns;
    } else if (!strcmp(name, "dram-ack-ns-now")) {
        val = s->dram_ack_ns;
    } else if (!strcmp(name, "dram-late-bursts-now")) {
        val = s->dram_late_bursts;
    } else if (!strcmp(name, "dram-late-ns-now")) {
        val = s->dram_late_ns;
    } else if (!strcmp(name, "r1b-busy-ns-now")) {
        val = s->r1b_busy_ns;
    } else if (!strcmp(name, "busy-while-programming-now")) {
        val = s->busy_while_programming;
    } else if (!strcmp(name, "corrupt-read-byte-now")) {
        val = s->corrupt_read_armed;
    } else if (!strcmp(name, "corrupt-write-byte-now")) {
        val = s->corrupt_write_armed;
    }
    visit_type_uint64(v, name, &val, errp);
}

static void meson_mx_sdhc_set_u64(Object *obj, Visitor *v, const char *name,
                                  void *opaque, Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);
    uint64_t val;

    if (!visit_type_uint64(v, name, &val, errp)) {
        return;
    }
    if (!strcmp(name, "fault-seed")) {
        s->fault_seed = val;
        s->fault_rng = val ^ 0x6a09e667f3bcc909ull;
        return;
    }
    if (!strcmp(name, "stall-seed")) {
        s->stall_seed = val;
        s->stall_rng = val ^ 0xbb67ae8584caa73bull;
        return;
    }
    if (val > UINT32_MAX ||
        ((!strcmp(name, "fault-probability-ppm") ||
          !strcmp(name, "stall-probability-ppm")) && val > 1000000) ||
        (!strcmp(name, "busy-while-programming-now") && val > 1)) {
        error_setg(errp, "meson-mx-sdhc: %s=%" PRIu64 " is out of range",
                   name, val);
        return;
    }
    if (!strcmp(name, "fault-after")) {
        s->fault_after = val;
    } else if (!strcmp(name, "fault-probability-ppm")) {
        s->fault_ppm = val;
    } else if (!strcmp(name, "fault-limit")) {
        s->fault_limit = val;
    } else if (!strcmp(name, "stall-probability-ppm")) {
        s->stall_ppm = val;
    } else if (!strcmp(name, "stall-count")) {
        s->stall_count = val;
    } else if (!strcmp(name, "stall-read-ns")) {
        s->stall_read_ns = val;
    } else if (!strcmp(name, "stall-write-ns")) {
        s->stall_write_ns = val;
    } else if (!strcmp(name, "reset-drain-ns")) {
        s->reset_drain_ns = val;
    } else if (!strcmp(name, "dat1-lose-edges")) {
        s->dat1_lose_edges = val;
    } else if (!strcmp(name, "dat1-stuck")) {
        s->dat1_stuck = val & (IRQ_DAT1 | IRQ_ADDI_DAT1);
    } else if (!strcmp(name, "rx-flush-ns-now")) {
        s->rx_flush_ns = val;
    } else if (!strcmp(name, "dram-ack-ns-now")) {
        s->dram_ack_ns = val;
    } else if (!strcmp(name, "dram-late-bursts-now")) {
        s->dram_late_bursts = MIN(val, MESON_MX_SDHC_LATE_BURSTS_MAX);
    } else if (!strcmp(name, "dram-late-ns-now")) {
        s->dram_late_ns = val;
    } else if (!strcmp(name, "r1b-busy-ns-now")) {
        s->r1b_busy_ns = val;
    } else if (!strcmp(name, "busy-while-programming-now")) {
        s->busy_while_programming = val != 0;
    } else if (!strcmp(name, "corrupt-read-byte-now")) {
        s->corrupt_read_at = val;
        s->corrupt_read_armed = true;
    } else if (!strcmp(name, "corrupt-write-byte-now")) {
        s->corrupt_write_at = val;
        s->corrupt_write_armed = true;
    }
}

/* ---- device ------------------------------------------------------------ */

static void meson_mx_sdhc_reset(DeviceState *dev)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(dev);

    meson_mx_sdhc_reset_ctrl(s);
    meson_mx_sdhc_late_cancel(s);
    meson_mx_sdhc_rx_tail_lose(s);
    timer_del(s->rx_late_timer);
    s->rx_late_len = 0;
    s->rx_late_base = 0;
    s->rx_flush_gap_open = false;
    s->irq_edge_lost = false;
    memset(s->regs, 0, sizeof(s->regs));
    memset(s->resp, 0, sizeof(s->resp));
    s->card_busy_until = 0;
    s->regs[R_CLKC] = CLKC_MEM_PWR_OFF | 0xfff;
    timer_del(s->dat1_timer);
    meson_mx_sdhc_update_irq(s);
}

static void meson_mx_sdhc_init(Object *obj)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);

    qbus_init(&s->sdbus, sizeof(s->sdbus), TYPE_MESON_MX_SDHC_BUS,
              DEVICE(s), "sd-bus");
    memory_region_init_io(&s->iomem, obj, &meson_mx_sdhc_ops, s,
                          TYPE_MESON_MX_SDHC, MESON_MX_SDHC_MMIO_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(s), &s->iomem);
    memory_region_init_io(&s->info_iomem, obj, &meson_mx_sdhc_info_ops, s,
                          TYPE_MESON_MX_SDHC "-counters",
                          MESON_MX_SDHC_INFO_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(s), &s->info_iomem);
    sysbus_init_irq(SYS_BUS_DEVICE(s), &s->irq);
    s->done_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, meson_mx_sdhc_complete,
                                 s);
    s->late_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, meson_mx_sdhc_late_dma,
                                 s);
    s->dat1_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, meson_mx_sdhc_dat1_latch,
                                 s);
    s->rx_flush_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     meson_mx_sdhc_rx_flush_done, s);
    s->rx_late_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                    meson_mx_sdhc_rx_late_timer, s);
    qdev_init_gpio_in_named(DEVICE(s), meson_mx_sdhc_dat1_in, "sdio-dat1", 1);
    s->rx_window_lo = 0;
    s->rx_window_hi = 100;
}

static void meson_mx_sdhc_realize(DeviceState *dev, Error **errp)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(dev);
    static const char *const variants[] = { "meson8", "meson8b", "meson8m2" };
    static const char *const triggers[] = { "edge", "level" };
    int k;

    if (!s->variant) {
        /* what meson8b.dtsi (and meson8.dtsi) write */
        s->variant = g_strdup("meson8");
    }
    k = meson_mx_sdhc_lookup(variants, ARRAY_SIZE(variants), s->variant,
                             "variant", errp);
    if (k < 0) {
        return;
    }
    /* meson8m2 flushes the RX FIFO by itself (hardware_flush_all_cmds) */
    s->hw_flush = k == 2;
    if (!s->irq_trigger) {
        s->irq_trigger = g_strdup("edge");
    }
    if (meson_mx_sdhc_lookup(triggers, ARRAY_SIZE(triggers), s->irq_trigger,
                             "irq-trigger", errp) < 0) {
        return;
    }
    if (!s->dat1_latch) {
        s->dat1_latch = g_strdup("edge");
    }
    k = meson_mx_sdhc_lookup(triggers, ARRAY_SIZE(triggers), s->dat1_latch,
                             "dat1-latch", errp);
    if (k < 0) {
        return;
    }
    s->dat1_edge = k == 0;
    if (s->rx_tail_words > MESON_MX_SDHC_RXFIFO_WORDS_MAX) {
        error_setg(errp, "meson-mx-sdhc: rx-tail-words=%u: STAT.RXFIFO_CNT"
                   " counts at most %u", s->rx_tail_words,
                   MESON_MX_SDHC_RXFIFO_WORDS_MAX);
        return;
    }
    if (s->dram_late_bursts > MESON_MX_SDHC_LATE_BURSTS_MAX) {
        error_setg(errp, "meson-mx-sdhc: dram-late-bursts=%u: at most %u",
                   s->dram_late_bursts, MESON_MX_SDHC_LATE_BURSTS_MAX);
        return;
    }
    if (!is_power_of_2(s->dma_granule) ||
        s->dma_granule > DMA_GRANULE_MAX) {
        error_setg(errp, "meson-mx-sdhc: dma-granule=%u: must be a power"
                   " of two from 1 to %u", s->dma_granule, DMA_GRANULE_MAX);
        return;
    }
    for (int i = 0; i < 4; i++) {
        if (!s->clkin_hz[i]) {
            error_setg(errp, "meson-mx-sdhc: clkin%d-hz must not be 0", i);
            return;
        }
    }
}

static void meson_mx_sdhc_finalize(Object *obj)
{
    MesonMxSdhcState *s = MESON_MX_SDHC(obj);

    timer_free(s->done_timer);
    g_free(s->late_buf);
    timer_free(s->late_timer);
    timer_free(s->dat1_timer);
    timer_free(s->rx_flush_timer);
    timer_free(s->rx_late_timer);
}

static const VMStateDescription vmstate_meson_mx_sdhc = {
    .name = TYPE_MESON_MX_SDHC,
    .unmigratable = 1,
};

static const Property meson_mx_sdhc_properties[] = {
    DEFINE_PROP_STRING("variant", MesonMxSdhcState, variant),
    DEFINE_PROP_STRING("dt-omit", MesonMxSdhcState, dt_omit),
    DEFINE_PROP_STRING("dt-alias", MesonMxSdhcState, dt_alias),
    /* Meson8b: XTAL, FCLK_DIV4, FCLK_DIV3, FCLK_DIV5 (FCLK = 2550 MHz) */
    DEFINE_PROP_UINT32("clkin0-hz", MesonMxSdhcState, clkin_hz[0], 24000000),
    DEFINE_PROP_UINT32("clkin1-hz", MesonMxSdhcState, clkin_hz[1], 637500000),
    DEFINE_PROP_UINT32("clkin2-hz", MesonMxSdhcState, clkin_hz[2], 850000000),
    DEFINE_PROP_UINT32("clkin3-hz", MesonMxSdhcState, clkin_hz[3], 510000000),
    DEFINE_PROP_UINT32("pclk-hz", MesonMxSdhcState, pclk_hz, 159375000),
    DEFINE_PROP_UINT32("bus-width", MesonMxSdhcState, dt_bus_width, 8),
    DEFINE_PROP_UINT32("max-frequency", MesonMxSdhcState, dt_max_frequency,
                       100000000),
    DEFINE_PROP_BOOL("hs200", MesonMxSdhcState, dt_hs200, true),
    DEFINE_PROP_BOOL("sd", MesonMxSdhcState, dt_sd, false),
    DEFINE_PROP_BOOL("sdio", MesonMxSdhcState, dt_sdio, false),
    DEFINE_PROP_BOOL("non-removable", MesonMxSdhcState, dt_non_removable,
                     true),
    /*
     * "dma-noncoherent" in the node: Linux then does the streaming cache
     * maintenance of a non-coherent SoC (virt's root node says
     * dma-coherent, so without it the SDHC is coherent to Linux)
     */
    DEFINE_PROP_BOOL("dma-noncoherent", MesonMxSdhcState, dt_dma_noncoherent,
                     false),
    /* the DT's vqmmc regulator; 0: 1.8 V for an HS200 eMMC, else 3.3 V */
    DEFINE_PROP_UINT32("vqmmc-microvolt", MesonMxSdhcState, dt_vqmmc_uv, 0),
    /* the DT's reg size: meson.dtsi's 0x42 (the MMIO region's size) */
    DEFINE_PROP_UINT32("dt-reg-size", MesonMxSdhcState, dt_reg_size,
                       MESON_MX_SDHC_MMIO_SIZE),
    /* the DT's interrupt type: edge (rising, as meson.dtsi) or level (high) */
    DEFINE_PROP_STRING("irq-trigger", MesonMxSdhcState, irq_trigger),
    /* a command sent with CLK2's RX phase > CLKC's divider freezes */
    DEFINE_PROP_BOOL("rx-phase-freeze", MesonMxSdhcState, rx_phase_freeze,
                     true),
    /* timing model, see Documentation/emulated-board.rst */
    DEFINE_PROP_UINT32("cmd-latency-ns", MesonMxSdhcState, cmd_latency_ns,
                       25000),
    DEFINE_PROP_UINT32("read-access-ns", MesonMxSdhcState, read_access_ns,
                       190000),
    DEFINE_PROP_UINT32("prog-base-ns", MesonMxSdhcState, prog_base_ns, 80000),
    DEFINE_PROP_UINT32("prog-ns-per-kib", MesonMxSdhcState, prog_ns_per_kib,
                       20000),
    DEFINE_PROP_UINT32("resp-timeout-ns", MesonMxSdhcState, resp_timeout_ns,
                       100000),
    DEFINE_PROP_UINT32("data-timeout-ns", MesonMxSdhcState, data_timeout_ns,
                       2000000),
    /* the card's response and CRC status delays, against CTRL.RX_TIMEOUT */
    DEFINE_PROP_UINT32("ncr-clks", MesonMxSdhcState, ncr_clks, 16),
    DEFINE_PROP_UINT32("ncrc-clks", MesonMxSdhcState, ncrc_clks, 4),
    DEFINE_PROP_UINT32("rx-data-timeout-unit-clks", MesonMxSdhcState,
                       rx_data_timeout_unit_clks, 1024),
    DEFINE_PROP_UINT32("error-busy-ns", MesonMxSdhcState, error_busy_ns,
                       100000),
    DEFINE_PROP_BOOL("dat1-clock-gating", MesonMxSdhcState,
                     dat1_clock_gating, true),
    /*
     * What nothing on record says about the silicon; each default is the
     * reading less kind to a driver (Documentation/emulated-board.rst,
     * "Unknowns of the silicon").
     */
    /* DAT1 interrupts: edge (one latch per low period) or level */
    DEFINE_PROP_STRING("dat1-latch", MesonMxSdhcState, dat1_latch),
    /* whether ISTA latches DAT1 while ICTL masks it (off: it does not) */
    DEFINE_PROP_BOOL("dat1-latch-masked", MesonMxSdhcState, dat1_latch_masked,
                     false),
    /* meson8/meson8b: a read's last words wait in the RX FIFO for the flush */
    DEFINE_PROP_UINT32("rx-tail-words", MesonMxSdhcState, rx_tail_words, 7),
    DEFINE_PROP_UINT32("rx-flush-ns", MesonMxSdhcState, rx_flush_ns,
                       RX_FLUSH_NS_DEFAULT),
    /* from the tail leaving the RX FIFO to its DRAM write acknowledgement */
    DEFINE_PROP_UINT32("dram-ack-ns", MesonMxSdhcState, dram_ack_ns,
                       DRAM_ACK_NS_DEFAULT),
    /* a read's last bursts before the tail, in memory after it */
    DEFINE_PROP_UINT32("dram-late-bursts", MesonMxSdhcState, dram_late_bursts,
                       DRAM_LATE_BURSTS_DEFAULT),
    DEFINE_PROP_UINT32("dram-late-ns", MesonMxSdhcState, dram_late_ns,
                       DRAM_LATE_NS_DEFAULT),
    /* a failed data phase: its error this long after the completion bits */
    DEFINE_PROP_UINT32("late-status-ns", MesonMxSdhcState, late_status_ns,
                       20000),
    /* busy-hold faults: CMD_BUSY and ESTA[13:11] this long after completion */
    DEFINE_PROP_UINT32("busy-hold-ns", MesonMxSdhcState, busy_hold_ns,
                       150000000),
    /* STAT shows a drain after SRST (CMD_BUSY, RXFIFO_CNT) */
    DEFINE_PROP_BOOL("drain-visible", MesonMxSdhcState, drain_visible, false),
    /* STAT.CMD_BUSY while the card programs a write (DAT0 low) */
    DEFINE_PROP_BOOL("busy-while-programming", MesonMxSdhcState,
                     busy_while_programming, true),
    /*
     * R1b: DAT0 busy this long after the response (0: not modelled), and
     * whether the completion comes with the response (false, the reading
     * under which the driver waits for DAT0 itself, as FreeBSD's does) or
     * once DAT0 is released
     */
    DEFINE_PROP_UINT32("r1b-busy-ns", MesonMxSdhcState, r1b_busy_ns, 0),
    DEFINE_PROP_BOOL("r1b-done-at-dat0", MesonMxSdhcState, r1b_done_at_dat0,
                     false),
    /* false: a failed multi-block transfer leaves the card in its data state */
    DEFINE_PROP_BOOL("stop-after-error", MesonMxSdhcState, stop_after_error,
                     false),
    /*
     * long-program faults: the write's programming this long; 150 ms is past
     * the C driver's 100 ms wait and within the 160 ms the MMC core allows
     * this eMMC's write (TAAC 1 ms x 10 x R2W_FACTOR 16)
     */
    DEFINE_PROP_UINT32("long-program-ns", MesonMxSdhcState, long_program_ns,
                       150000000),
    /* bytes the DMA engine moves as one aligned unit: 1, 4, 32 (a burst) */
    DEFINE_PROP_UINT32("dma-granule", MesonMxSdhcState, dma_granule, 32),
};

/* busy-stall, reset-drain, lost DAT1 edges: set at run time, like faults */
static const char *const meson_mx_sdhc_runtime_u64[] = {
    "stall-probability-ppm", "stall-count", "stall-read-ns", "stall-write-ns",
    "stall-seed", "reset-drain-ns", "dat1-lose-edges", "rx-flush-ns-now",
    "dram-ack-ns-now", "dram-late-bursts-now", "dram-late-ns-now",
    "r1b-busy-ns-now", "busy-while-programming-now",
    "dat1-stuck", "corrupt-read-byte-now", "corrupt-write-byte-now",
};

static void meson_mx_sdhc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    device_class_set_legacy_reset(dc, meson_mx_sdhc_reset);
    dc->realize = meson_mx_sdhc_realize;
    dc->vmsd = &vmstate_meson_mx_sdhc;
    dc->user_creatable = true;
    dc->desc = "Amlogic Meson MX SDHC host controller";
    device_class_set_props(dc, meson_mx_sdhc_properties);

    object_class_property_add_str(klass, "stats", meson_mx_sdhc_get_stats,
                                  NULL);
    object_class_property_add_bool(klass, "reset-stats",
                                   meson_mx_sdhc_get_false,
                                   meson_mx_sdhc_set_reset_stats);
    object_class_property_add_bool(klass, "ignore-manual-stop",
                                   meson_mx_sdhc_get_ignore_stop,
                                   meson_mx_sdhc_set_ignore_stop);
    object_class_property_add_bool(klass, "stop-after-error-now",
                                   meson_mx_sdhc_get_stop_after_error,
                                   meson_mx_sdhc_set_stop_after_error);
    object_class_property_add_str(klass, "rx-window",
                                  meson_mx_sdhc_get_rx_window,
                                  meson_mx_sdhc_set_rx_window);
    object_class_property_add_str(klass, "fault-kind",
                                  meson_mx_sdhc_get_fault_kind,
                                  meson_mx_sdhc_set_fault_kind);
    object_class_property_add_str(klass, "fault-dir",
                                  meson_mx_sdhc_get_fault_dir,
                                  meson_mx_sdhc_set_fault_dir);
    object_class_property_add(klass, "fault-after", "uint64",
                              meson_mx_sdhc_get_u64, meson_mx_sdhc_set_u64,
                              NULL, NULL);
    object_class_property_add(klass, "fault-probability-ppm", "uint64",
                              meson_mx_sdhc_get_u64, meson_mx_sdhc_set_u64,
                              NULL, NULL);
    object_class_property_add(klass, "fault-limit", "uint64",
                              meson_mx_sdhc_get_u64, meson_mx_sdhc_set_u64,
                              NULL, NULL);
    object_class_property_add(klass, "fault-seed", "uint64",
                              meson_mx_sdhc_get_u64, meson_mx_sdhc_set_u64,
                              NULL, NULL);
    object_class_property_add(klass, "faults-injected", "uint64",
                              meson_mx_sdhc_get_u64, NULL, NULL, NULL);
    for (int i = 0; i < ARRAY_SIZE(meson_mx_sdhc_runtime_u64); i++) {
        object_class_property_add(klass, meson_mx_sdhc_runtime_u64[i],
                                  "uint64", meson_mx_sdhc_get_u64,
                                  meson_mx_sdhc_set_u64, NULL, NULL);
    }
}

static const TypeInfo meson_mx_sdhc_types[] = {
    {
        .name = TYPE_MESON_MX_SDHC,
        .parent = TYPE_SYS_BUS_DEVICE,
        .instance_size = sizeof(MesonMxSdhcState),
        .instance_init = meson_mx_sdhc_init,
        .instance_finalize = meson_mx_sdhc_finalize,
        .class_init = meson_mx_sdhc_class_init,
    },
    {
        .name = TYPE_MESON_MX_SDHC_BUS,
        .parent = TYPE_SD_BUS,
        .instance_size = sizeof(SDBus),
    },
};

DEFINE_TYPES(meson_mx_sdhc_types)
