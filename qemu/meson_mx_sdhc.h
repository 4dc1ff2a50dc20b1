/*
 * Amlogic Meson6/8/8b/8m2 SDHC host controller model
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_SD_MESON_MX_SDHC_H
#define HW_SD_MESON_MX_SDHC_H

#include "hw/sysbus.h"
#include "hw/sd/sd.h"
#include "qom/object.h"

#define TYPE_MESON_MX_SDHC "meson-mx-sdhc"
OBJECT_DECLARE_SIMPLE_TYPE(MesonMxSdhcState, MESON_MX_SDHC)

#define TYPE_MESON_MX_SDHC_BUS "meson-mx-sdhc-bus"

/* as meson.dtsi's reg (<0x8e00 0x42>); the registers end at 0x3c (CLK2) */
#define MESON_MX_SDHC_MMIO_SIZE   0x42
#define MESON_MX_SDHC_NUM_REGS    (0x3c / 4)
#define MESON_MX_SDHC_HIST_BUCKETS 32
/* STAT.RXFIFO_CNT is 7 bits wide */
#define MESON_MX_SDHC_RXFIFO_WORDS_MAX 127
/* a DMA write burst (PDMA.WR_BURST 7 as both drivers program it: 8 words) */
#define MESON_MX_SDHC_BURST_BYTES 32
#define MESON_MX_SDHC_LATE_BURSTS_MAX 256

/*
 * The model's counters, readable by the guest (sysbus MMIO region 1; not
 * part of the real controller, described in the DT by a node of its own,
 * compatible "qemu,meson-mx-sdhc-counters").  Guest-side tests and make
 * bench read them with devmem instead of asking the host, which would let
 * the guest's virtual clock run on while it waits.  64-bit values are two
 * words, low first.
 */
#define MESON_MX_SDHC_INFO_SIZE   0x80
#define MESON_MX_SDHC_INFO_MAGIC  0x4d534443 /* "MSDC" */
#define MESON_MX_SDHC_INFO_VERSION 3
enum {
    MESON_INFO_MAGIC = 0x00,
    MESON_INFO_VERSION = 0x04,          /* 3 (1 ended at 0x30, 2 at 0x78) */
    MESON_INFO_COMMANDS = 0x08,
    MESON_INFO_DATA_COMMANDS = 0x10,
    MESON_INFO_BYTES_READ = 0x18,
    MESON_INFO_BYTES_WRITTEN = 0x20,
    MESON_INFO_FAULTS = 0x28,           /* injected, all kinds together */
    /* version 2 */
    MESON_INFO_FAULTS_LOST_IRQ = 0x30,
    MESON_INFO_FAULTS_FREEZE = 0x38,
    MESON_INFO_FAULTS_LATE_DMA = 0x40,
    MESON_INFO_RX_PHASE_FREEZES = 0x48, /* not injected: RX phase > divider */
    MESON_INFO_SRST_RESETS = 0x50,      /* SRST writes with MAIN_CTRL */
    MESON_INFO_LATE_DMA_BYTES = 0x58,   /* written after the error interrupt */
    MESON_INFO_LATE_DMA_CANCELLED = 0x60, /* bytes a SRST kept from memory */
    MESON_INFO_LOST_IRQ_COMMANDS = 0x68, /* completions ISTA did not show */
    MESON_INFO_STATE = 0x70,            /* bit 0 interrupt lost until SRST,
                                           1 frozen, 2 late DMA running */
    /* version 3 */
    MESON_INFO_RX_WINDOW_CRC = 0x78,    /* reads outside the rx-window */
};

enum {
    MESON_FAULT_NONE,
    MESON_FAULT_DATA_CRC,
    MESON_FAULT_DATA_TIMEOUT,
    MESON_FAULT_RESP_CRC,
    MESON_FAULT_RESP_TIMEOUT,
    MESON_FAULT_MIXED,          /* one of the four above, drawn per command */
    MESON_FAULT_LOST_IRQ,       /* completes, ISTA stays clear until SRST */
    MESON_FAULT_FREEZE,         /* stays busy, nothing happens until SRST */
    MESON_FAULT_LATE_DMA,       /* read: resp CRC error at the response, the
                                   DMA still writes the blocks afterwards */
    MESON_FAULT_LOST_EDGE,      /* ISTA latches, the output does not rise
                                   until ISTA or ICTL is written */
    MESON_FAULT_BUSY_HOLD,      /* ISTA latches, CMD_BUSY and ESTA[13:11]
                                   stay set for busy-hold-ns (or SRST) */
    MESON_FAULT_LONG_PROGRAM,   /* write: the card programs for
                                   long-program-ns after the last block */
    MESON_FAULT_PARTIAL_PROGRAM, /* multi-block write: the card takes the
                                   first half, programs it for
                                   long-program-ns and fails the next
                                   block's CRC, at completion */
    MESON_FAULT__MAX,
};

enum {
    MESON_FAULT_DIR_ANY,
    MESON_FAULT_DIR_READ,
    MESON_FAULT_DIR_WRITE,
    MESON_FAULT_DIR_DATA,       /* data commands, both directions */
    MESON_FAULT_DIR_READ_MULTI, /* multi-block reads */
};

typedef struct MesonMxSdhcStats {
    uint64_t commands;
    uint64_t data_commands;
    uint64_t read_commands;
    uint64_t write_commands;
    uint64_t bytes_read;
    uint64_t bytes_written;
    uint64_t faults[MESON_FAULT__MAX];
    uint64_t busy_rejects;
    uint64_t dma_errors;
    uint64_t srst_resets;       /* SRST written with MAIN_CTRL */
    uint64_t rx_phase_freezes;  /* commands sent with RX phase > divider */
    uint64_t lost_irq_commands; /* completions not latched in ISTA */
    uint64_t late_dma_bytes;    /* written by a late DMA after its error */
    uint64_t late_dma_cancelled; /* bytes of late DMAs stopped by SRST */
    uint64_t rx_window_crc_errors; /* reads sampled outside the rx-window */
    uint64_t busy_stalls;       /* data commands the card stalled */
    uint64_t stall_ns;          /* the time those stalls took, in all */
    uint64_t drain_bytes;       /* written by the DMA engine after SRST */
    uint64_t drain_bytes_after_cmd; /* of those, after a command was sent */
    uint64_t rx_timeouts;       /* answers later than CTRL.RX_TIMEOUT */
    uint64_t stop_timeouts;     /* auto CMD12 after a CMD53, unanswered */
    uint64_t dat1_irqs;         /* ISTA.DAT1_IRQ latched (bus idle) */
    uint64_t addi_dat1_irqs;    /* ISTA.ADDI_DAT1_IRQ (between blocks) */
    uint64_t dat1_edges_lost;   /* low periods of DAT1 that latched nothing
                                   (dat1-lose-edges) */
    uint64_t rx_tail_bytes_flushed; /* RX FIFO tails the flush wrote */
    uint64_t rx_tail_bytes_lost;    /* tails dropped by SRST or a SEND */
    uint64_t rx_tail_early_empty;   /* RX FIFO empty, the tail not yet in memory */
    uint64_t rx_late_bytes;     /* bytes written to DRAM after the tail */
    uint64_t rx_flush_gaps;     /* flush writes followed by a STAT read/SRST */
    uint64_t rx_flush_gap_min_ns;   /* flush write -> first STAT read/SRST */
    uint64_t rx_flush_gap_max_ns;
    uint64_t late_status_commands;  /* data errors latched after CMD_BUSY */
    uint64_t lost_edge_commands;    /* completions the output did not show */
    uint64_t busy_hold_commands;    /* completions busy for busy-hold-ns */
    uint64_t dat1_asserted_masked;  /* DAT1 low periods that began while
                                       ICTL had both DAT1 enables off */
    uint64_t programming_busy_reads; /* STAT reads: CMD_BUSY only because
                                        the card programs (busy-while-programming) */
    uint64_t srst_while_programming; /* SRST (MAIN_CTRL) written while the
                                        card programs a write (DAT0 low) */
    uint64_t dat1_masked_unlatched; /* low periods that began masked and,
                                       without dat1-latch-masked, under
                                       edge never latched */
    uint64_t r1b_busy_commands; /* R1b commands busy for r1b-busy-ns */
    uint64_t cmds_while_card_busy; /* commands but CMD12/CMD13 sent while
                                      the card held DAT0 busy */
    uint64_t rx_data_timeouts;  /* reads stalled past ENHC.RX_TIMEOUT */
    uint64_t error_busy_commands; /* failed transfers busy error-busy-ns */
    uint64_t srst_while_error_busy; /* SRST meanwhile: hung until the next */
    uint64_t dat1_asserted_gated; /* DAT1 low periods that began while the
                                     clock was gated (dat1-clock-gating) */
    uint64_t dat1_stuck_writes; /* ISTA writes of 1 a stuck DAT1 bit
                                   ignored (dat1-stuck) */
    uint64_t data_state_left;   /* failed multi-block transfers after which
                                   the controller left the card in its data
                                   state (stop-after-error off) */
    uint64_t rx_tails_landed_unwatched; /* tails that landed with no STAT
                                           read or SRST since their flush */
    uint64_t cmds_while_card_in_data_state; /* commands but CMD12 sent while
                                               the card was in its sending-
                                               or receiving-data state */
    uint64_t size_hist[MESON_MX_SDHC_HIST_BUCKETS];
    uint64_t corrupted_reads;   /* reads corrupt-read-byte-now flipped a
                                   byte of */
    uint64_t corrupted_writes;  /* writes corrupt-write-byte-now flipped a
                                   byte of */
    uint64_t dma_unaligned_transfers; /* start or length not a multiple
                                         of dma-granule */
    uint64_t dma_bytes_outside_request; /* read: memory written outside
                                           the request (dma-granule) */
} MesonMxSdhcStats;

struct MesonMxSdhcState {
    SysBusDevice parent_obj;

    SDBus sdbus;
    MemoryRegion iomem;
    MemoryRegion info_iomem;
    qemu_irq irq;
    QEMUTimer *done_timer;
    QEMUTimer *late_timer;
    QEMUTimer *rx_flush_timer;

    uint32_t regs[MESON_MX_SDHC_NUM_REGS];
    /* response words as read back through PDMA.PIO_RDRESP + ARGU */
    uint32_t resp[5];
    uint32_t txfifo_cnt;
    uint32_t rxfifo_cnt;
    bool busy;                  /* a command is in flight (STAT.CMD_BUSY) */
    int64_t card_busy_until;    /* DAT0 held low (programming) until then */
    bool frozen;                /* busy until SRST (freeze, RX phase) */
    bool irq_stuck;             /* lost-irq: ISTA latches nothing until SRST */
    uint32_t lost_ista;         /* what ISTA would have latched meanwhile */
    bool irq_edge_lost;         /* lost-edge: output low until ISTA/ICTL write */
    int64_t busy_hold_until;    /* busy-hold: CMD_BUSY, ESTA[13:11] until */
    int64_t error_busy_until;   /* a failed transfer's DMA finishes until */
    bool late_status;           /* the data error latches when CMD_BUSY clears */
    uint32_t late_status_ista;  /* that error */

    /*
     * The RX FIFO's tail (meson8, meson8b): the last words of a read stay
     * in the FIFO until the driver flushes it (PDMA.RXFIFO_MANUAL_FLUSH)
     */
    uint8_t rx_tail[MESON_MX_SDHC_RXFIFO_WORDS_MAX * 4];
    uint32_t rx_tail_len;       /* bytes held (0: none) */
    uint32_t rx_tail_addr;      /* where they go */
    bool rx_flushing;           /* the flush is written, rx_flush_timer runs */
    bool rx_flush_gap_open;     /* no STAT read or SRST since the flush */
    int64_t rx_flush_at;        /* when the flush was written */
    uint32_t rx_flush_pdma;     /* the PDMA value that flushed it */
    uint32_t rx_flush_send;     /* SEND when it was flushed */
    int64_t rx_flush_due;       /* when the tail leaves the RX FIFO */
    int64_t rx_land_due;        /* when the tail is in memory */
    bool rx_early_counted;      /* rx_tail_early_empty counted this tail */
    /*
     * dram-late-bursts: the read's last bursts before the tail, written to
     * DRAM after it (see meson_mx_sdhc_rx_late_hold())
     */
    uint8_t rx_late[MESON_MX_SDHC_LATE_BURSTS_MAX * MESON_MX_SDHC_BURST_BYTES];
    uint32_t rx_late_len;       /* bytes held (0: none) */
    uint32_t rx_late_addr;      /* where they go */
    uint32_t rx_late_bursts;    /* how many bursts were held */
    uint32_t rx_late_landed;    /* of them, in memory (the nearest first) */
    int64_t rx_late_base;       /* when the first lands (0: not yet set) */
    QEMUTimer *rx_late_timer;

    /* late-dma: the read data the DMA engine still writes after the error */
    uint8_t *late_buf;
    uint32_t late_addr;
    uint32_t late_blksz;
    uint32_t late_blocks;
    uint32_t late_next;         /* next block to write */
    int64_t late_start;         /* when block 0 lands (virtual ns) */
    int64_t late_block_ns;      /* then one block per this */
    int64_t drain_until;        /* after SRST: late blocks land until then */
    bool draining;              /* a SRST is being drained */
    bool cmd_since_srst;        /* a command was sent during the drain */

    /* the command in flight */
    uint32_t cur_send;
    uint32_t cur_addr;
    int cur_fault;
    bool cur_rx_crc;            /* read sampled outside the rx-window */
    bool cur_stop_timeout;      /* its auto CMD12 went unanswered (SDIO) */
    bool cur_rx_data_timeout;   /* the card stalled past ENHC.RX_TIMEOUT */
    uint32_t cur_ista;          /* what completion will set in ISTA */

    MesonMxSdhcStats stats;

    /* SDIO: the card's interrupt on DAT1 (GPIO input "sdio-dat1") */
    bool dat1_low;
    bool dat1_latched;          /* this low period has latched (dat1-latch) */
    bool dat1_lost;             /* this low period latches nothing */
    uint32_t dat1_lose_edges;   /* QMP: the next N low periods latch nothing */
    uint32_t dat1_stuck;        /* QMP: DAT1 bits of ISTA a write of 1 does
                                   not clear (a fault) */
    bool corrupt_read_armed;    /* QMP corrupt-read-byte-now: the next read
                                   longer than corrupt_read_at bytes gets
                                   that byte flipped (silent corruption) */
    uint32_t corrupt_read_at;
    bool corrupt_write_armed;   /* QMP corrupt-write-byte-now: the same for
                                   the next write, on the card */
    uint32_t corrupt_write_at;
    uint32_t dat1_bit;          /* what dat1_timer will latch */
    QEMUTimer *dat1_timer;
    int64_t cur_data_start;     /* the data phase of the command in flight */
    int64_t cur_block_ns;       /* one block of it on the bus */
    bool ignore_manual_stop;    /* QMP: as if MISC.MANUAL_STOP were clear */

    /* fault injection, set at run time over QMP (qom-set) */
    int fault_kind;
    int fault_dir;
    uint32_t fault_after;       /* inject on the Nth next eligible command */
    uint32_t fault_ppm;         /* or with this probability (per million) */
    uint32_t fault_limit;       /* stop after this many (0: no limit) */
    uint64_t fault_seed;
    uint64_t fault_rng;
    uint64_t faults_done;

    /*
     * busy-stall (QMP, run time): the card stalls inside a data transfer,
     * stall-count times, each within its per-block timeout: a write's DAT0
     * held busy between blocks, a read's access time stretched
     */
    uint32_t stall_ppm;         /* per data command */
    uint32_t stall_count;       /* stalls in a stalled command */
    uint32_t stall_read_ns;     /* each, on a read */
    uint32_t stall_write_ns;    /* each, on a write */
    uint64_t stall_seed;
    uint64_t stall_rng;
    /* SRST does not stop the DMA engine at once: it writes on this long */
    uint32_t reset_drain_ns;

    /* device properties */
    char *variant;              /* meson8, meson8b, meson8m2 (DT compatible) */
    char *dt_omit;              /* DT properties to leave out (tests) */
    char *dt_alias;             /* the board's /aliases name of &sdhc (mmcN) */
    uint32_t clkin_hz[4];
    uint32_t pclk_hz;
    uint32_t dt_bus_width;
    uint32_t dt_max_frequency;
    bool dt_hs200;
    bool dt_sd;
    bool dt_sdio;               /* an SDIO card: no no-sdio/no-sd/no-mmc */
    bool dt_non_removable;
    bool dt_dma_noncoherent;    /* "dma-noncoherent" in the node, as the SoC */
    uint32_t dt_vqmmc_uv;       /* 0: 1.8 V for eMMC HS200, else 3.3 V */
    uint32_t dt_reg_size;       /* the DT's reg size (meson.dtsi: 0x42) */
    char *irq_trigger;          /* DT interrupt type: edge (SoC) or level */
    char *dat1_latch;           /* edge: one latch per low period of DAT1;
                                   level: again after each ISTA clear */
    bool dat1_edge;
    bool dat1_latch_masked;     /* ISTA latches DAT1 while ICTL masks it */
    bool hw_flush;              /* meson8m2: the RX FIFO empties by itself */
    uint32_t rx_tail_words;     /* words a read leaves in the RX FIFO */
    uint32_t rx_flush_ns;       /* flush write -> the tail out of the FIFO */
    uint32_t dram_ack_ns;       /* the tail out of the FIFO -> in memory */
    uint32_t dram_late_bursts;  /* bursts before the tail that land after it */
    uint32_t dram_late_ns;      /* the tail in memory -> those bursts */
    uint32_t late_status_ns;    /* data error after the completion bits */
    uint32_t busy_hold_ns;      /* busy-hold: how long */
    bool drain_visible;         /* STAT shows a drain after SRST */
    bool busy_while_programming; /* STAT.CMD_BUSY while DAT0 is busy */
    uint32_t long_program_ns;   /* long-program: how long */
    uint32_t r1b_busy_ns;       /* DAT0 busy after an R1b response */
    bool r1b_done_at_dat0;      /* R1b completes once DAT0 is released */
    bool stop_after_error;      /* CMD12 after a failed multi-block transfer */
    bool rx_phase_freeze;       /* freeze on RX phase > divider (c82efcaad2a4) */
    /*
     * rx-window: the RX phases (CLK2[11:0] * 100 / (divider + 1), in percent
     * of the SD clock period) at which the controller samples the card's
     * data correctly above 52 MHz; outside, data CRC errors.
     */
    bool rx_window_none;
    uint32_t rx_window_lo;
    uint32_t rx_window_hi;
    uint32_t cmd_latency_ns;    /* controller + card per-command overhead */
    uint32_t read_access_ns;    /* card access time before the first block */
    uint32_t prog_base_ns;      /* write: programming time per command */
    uint32_t prog_ns_per_kib;   /* write: programming time per KiB */
    uint32_t resp_timeout_ns;
    uint32_t data_timeout_ns;
    uint32_t ncr_clks;          /* the card's response delay (Ncr) */
    uint32_t ncrc_clks;         /* its CRC status delay after a write block */
    /* bus clocks per unit of ENHC.RX_TIMEOUT (meson8/8b; 0: no timeout) */
    uint32_t rx_data_timeout_unit_clks;
    uint32_t error_busy_ns;     /* busy after an error latched with the
                                   completion of a transfer */
    bool dat1_clock_gating;     /* no DAT1 sampling between commands
                                   unless CLKC.CLK_JIC */
    uint32_t dma_granule;       /* bytes the DMA engine moves as one unit */
};

#endif
