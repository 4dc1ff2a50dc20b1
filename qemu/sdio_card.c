/*
 * An SDIO card for the meson-mx-sdhc model ("sdio-card" on an SD bus)
 *
 * QEMU's sd-card answers CMD5 as illegal, so SDIO needs a card of its own.
 * This one answers what Linux's MMC core and SDIO function drivers send:
 *
 *  - CMD0 (back to idle), CMD5 (IO_SEND_OP_COND, R4: two functions, 3.3 V,
 *    ready), CMD3 (RCA 0x0001, R6), CMD7 (select/deselect, R1b), CMD52
 *    (IO_RW_DIRECT, R5) and CMD53 (IO_RW_EXTENDED, R5 and data); any other
 *    command gets no response, as from an I/O-only card (CMD8, CMD55, CMD1,
 *    CMD2 and CMD12, which an SDIO card does not take: the controller's
 *    own CMD12 after a multi-block transfer without MISC.MANUAL_STOP goes
 *    unanswered).
 *  - Function 0: CCCR (SDIO 2.00, CCCR 1.20: I/O enable/ready, interrupt
 *    enable/pending, abort with RES, bus interface width, capabilities SDC,
 *    SMB, S4MI (interrupts between the blocks of a 4-bit CMD53), block
 *    size, high speed SHS/EHS), FBRs of functions 1 and 2 (class, CIS
 *    pointer, block size) and the CIS (MANFID, FUNCE with 25 MHz full
 *    speed; high speed gives 50 MHz).
 *  - Function 1, "test" (vendor/device below, interface class 0): a RAM
 *    window at 0x00000-0x0ffff (incrementing addresses) onto a 256 KiB
 *    memory (WINDOW selects which 64 KiB), a FIFO port at 0x10000 (fixed
 *    address, 256 KiB deep) and registers at 0x10001-0x1002f: see
 *    F1_* below.  Its interrupt: IRQ_CTRL bit 0 raises it IRQ_DELAY_US
 *    microseconds later (a timer on the virtual clock, whatever the bus is
 *    doing), bit 1 at once; it stays pending until IRQ_ACK is written.  The
 *    virtual time of the last assertion (ASSERT_NS) and the raise/ack
 *    counts read back through CMD52, so a guest can measure its latency on
 *    its own clock (the ARM generic timer counts the same virtual time).
 *  - Function 2, "uart": SDIO_CLASS_GPS with the 0x91 tuple (SUBTPL_SIOREG:
 *    register offset 0x100, clock 128 * 115200 Hz), so that Linux's
 *    sdio_uart binds it; a 16550A at that offset driven by CMD52: 16-byte
 *    FIFOs, THR drained at the programmed baud rate (LCR word length,
 *    parity and stop bits counted), MCR loopback (UART_MCR_LOOP: the
 *    transmitter feeds the receiver, MSR follows MCR), receive overrun,
 *    IIR priorities (RLS, RDA, character timeout, THRE, MSR) as the card's
 *    function-2 interrupt.  Without loopback the transmitted bytes go
 *    nowhere (counted).
 *
 * The card's interrupt reaches the controller as a level on DAT1: the
 * card drives the host's "sdio-dat1" GPIO input (if it has one) high while
 * IENM and a pending function whose IENx is set; the controller decides
 * when it samples DAT1 (the interrupt period).
 *
 * CMD53: byte mode (count 1-512, 0 meaning 512) and block mode (the
 * function's block size from its FBR, 1-511 blocks); a new CMD52/CMD53 or
 * an abort (CCCR ABORT) ends a transfer the host left unfinished.
 *
 * Counters: QOM property "stats" (JSON); "reset-stats".
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/sd/sd.h"
#include "migration/vmstate.h"
#include "sdmmc-internal.h"

#define TYPE_SDIO_CARD "sdio-card"

/*
 * The card is an sdmmc-common device (the SD bus only takes those), but
 * none of sd.c's state is used: its instance (SDState, private to sd.c,
 * about 1.5 KiB) sits in the reserved space at the start of ours.
 */
#define SDIO_SDSTATE_RESERVE    8192

#define SDIO_VENDOR             0x5153  /* not a registered vendor */
#define SDIO_DEVICE_TEST        0x5d10
#define SDIO_DEVICE_UART        0x5d11
#define SDIO_NUM_FUNCS          2
#define SDIO_RCA                0x0001
#define SDIO_OCR                0x00ff8000  /* 2.7-3.6 V */
#define SDIO_MAX_BLKSIZE        512

/* R5 response flags (bits 15:8) */
#define R5_COM_CRC_ERROR        0x80
#define R5_ILLEGAL_COMMAND      0x40
#define R5_STATE_CMD            0x10
#define R5_STATE_TRN            0x20
#define R5_ERROR                0x08
#define R5_FUNCTION_NUMBER      0x02
#define R5_OUT_OF_RANGE         0x01

/* CCCR */
#define CCCR_REV                0x00
#define CCCR_SD                 0x01
#define CCCR_IOEX               0x02
#define CCCR_IORX               0x03
#define CCCR_IENX               0x04
#define CCCR_INTX               0x05
#define CCCR_ABORT              0x06
#define CCCR_IF                 0x07
#define CCCR_CAPS               0x08
#define CCCR_CIS                0x09
#define CCCR_BLKSIZE            0x10
#define CCCR_POWER              0x12
#define CCCR_SPEED              0x13

#define CAP_SDC                 0x01
#define CAP_SMB                 0x02
#define CAP_S4MI                0x10
#define CAP_E4MI                0x20

/* CIS addresses in function 0's space */
#define CIS_COMMON              0x1000
#define CIS_F1                  0x1100
#define CIS_F2                  0x1200
#define CIS_SIZE                0x100

/* function 1's address space */
#define F1_RAM_SIZE             0x10000         /* the window */
#define F1_MEM_SIZE             (4 * F1_RAM_SIZE)
#define F1_FIFO_SIZE            (256 * 1024)
#define F1_FIFO                 0x10000 /* r: pop, w: push */
#define F1_WINDOW               0x10001 /* r/w: 64 KiB page at 0x0 (0-3) */
#define F1_FIFO_LEVEL           0x10004 /* r: 4 bytes */
#define F1_IRQ_DELAY_US         0x10008 /* r/w: 4 bytes */
#define F1_IRQ_CTRL             0x1000c /* w: 1 raise after delay, 2 raise
                                           now, 4 cancel; r: 1 armed, 2
                                           pending */
#define F1_IRQ_ACK              0x1000d /* w: clear the interrupt */
#define F1_ASSERT_NS            0x10010 /* r: 8 bytes */
#define F1_RAISED               0x10018 /* r: 4 bytes */
#define F1_ACKED                0x1001c /* r: 4 bytes */
#define F1_FIFO_UNDERRUNS       0x10020 /* r: 4 bytes, empty-FIFO reads */
#define F1_FIFO_OVERRUNS        0x10024 /* r: 4 bytes, full-FIFO writes */
#define F1_MAGIC                0x10028 /* r: "SDIO" */
#define F1_REG_END              0x10030

/* function 2: the 16550 */
#define F2_UART_BASE            0x100
#define UART_CLK_MULT           128     /* x 115200 Hz: up to 921600 baud */
#define UART_FIFO               16

enum { ST_IDLE, ST_READY, ST_STBY, ST_CMD };

typedef struct SdioUart {
    uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
    bool fifo_on;
    uint8_t rx[UART_FIFO];
    unsigned rx_head, rx_count;
    uint8_t tx[UART_FIFO];
    unsigned tx_head, tx_count;
    bool shifting;              /* a character in the shift register */
    uint8_t shift_char;
    bool overrun;               /* LSR.OE until LSR is read */
    bool thri;                  /* THRE interrupt pending (16550 rule) */
    uint8_t msr_delta;          /* MSR bits 3:0 */
    uint8_t msr_last;           /* MSR bits 7:4 as last read */
    int64_t last_rx_ns;         /* for the character timeout */
    QEMUTimer *tx_timer;
    QEMUTimer *cti_timer;
    uint64_t tx_chars, rx_chars, looped, discarded, overruns, irqs;
    bool irq;
} SdioUart;

typedef struct SdioCardStats {
    uint64_t commands;
    uint64_t cmd52_reads, cmd52_writes;
    uint64_t cmd53_reads, cmd53_writes;
    uint64_t cmd53_byte_mode, cmd53_block_mode, cmd53_blocks;
    uint64_t bytes_read, bytes_written;
    uint64_t illegal;           /* commands without a response */
    uint64_t cmd12_ignored;     /* CMD12 (not an SDIO command) */
    uint64_t errors;            /* R5 error flags returned */
    uint64_t unfinished;        /* transfers cut short by a new command */
    uint64_t stray_bytes;       /* data beyond what the command asked for */
    uint64_t aborts;
    uint64_t resets;            /* CCCR ABORT.RES and CMD0 */
    uint64_t irqs_raised;       /* function 1 */
    uint64_t irqs_acked;
    uint64_t dat1_asserts;      /* DAT1 went low (either function) */
    uint64_t fifo_underruns, fifo_overruns;
} SdioCardStats;

typedef struct SdioCardState {
    /* the sdmmc-common instance (see SDIO_SDSTATE_RESERVE) */
    uint8_t sdstate[SDIO_SDSTATE_RESERVE] QEMU_ALIGNED(16);

    int state;
    uint8_t ioe, ien, abort, bus_if, speed;
    uint16_t blksize[SDIO_NUM_FUNCS + 1];
    uint8_t cis[3][CIS_SIZE];

    /* the CMD53 in progress */
    uint32_t xfer_left;
    bool xfer_write;
    unsigned xfer_fn;
    uint32_t xfer_addr;
    bool xfer_incr;

    /* function 1 */
    uint8_t *mem;
    uint8_t window;
    uint8_t *fifo;
    uint32_t fifo_head, fifo_count;
    uint32_t irq_delay_us;
    bool f1_pending;
    QEMUTimer *f1_timer;
    int64_t assert_ns;
    uint8_t snap[8];            /* multi-byte registers, latched at byte 0 */
    uint32_t snap_addr;

    /* function 2 */
    SdioUart uart;

    bool dat1;
    qemu_irq dat1_out;
    SdioCardStats stats;
} SdioCardState;

DECLARE_INSTANCE_CHECKER(SdioCardState, SDIO_CARD, TYPE_SDIO_CARD)

static SdioCardState *sdio_of(SDState *sd)
{
    return SDIO_CARD(sd);
}

static int64_t now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* ---- the interrupt line -------------------------------------------------- */

static uint8_t sdio_pending(SdioCardState *s)
{
    return (s->f1_pending ? 0x02 : 0) | (s->uart.irq ? 0x04 : 0);
}

static void sdio_update_dat1(SdioCardState *s)
{
    bool level = (s->ien & 0x01) && (sdio_pending(s) & s->ien & 0x06);

    if (level != s->dat1) {
        s->dat1 = level;
        if (level) {
            s->stats.dat1_asserts++;
        }
        if (s->dat1_out) {
            qemu_set_irq(s->dat1_out, level);
        }
    }
}

/* ---- function 2: the 16550 ---------------------------------------------- */

#define UART_IER_RDI    0x01
#define UART_IER_THRI   0x02
#define UART_IER_RLSI   0x04
#define UART_IER_MSI    0x08
#define UART_LCR_DLAB   0x80
#define UART_MCR_DTR    0x01
#define UART_MCR_RTS    0x02
#define UART_MCR_OUT1   0x04
#define UART_MCR_OUT2   0x08
#define UART_MCR_LOOP   0x10
#define UART_LSR_DR     0x01
#define UART_LSR_OE     0x02
#define UART_LSR_THRE   0x20
#define UART_LSR_TEMT   0x40
#define UART_FCR_ENABLE 0x01
#define UART_FCR_CLR_RX 0x02
#define UART_FCR_CLR_TX 0x04

static int64_t uart_char_ns(SdioUart *u)
{
    uint32_t div = u->dll | (u->dlm << 8);
    unsigned bits = 1 + 5 + (u->lcr & 3) + ((u->lcr & 0x08) ? 1 : 0) +
                    ((u->lcr & 0x04) ? 2 : 1);

    if (!div) {
        div = 1;
    }
    return muldiv64((uint64_t)bits * 16 * div, NANOSECONDS_PER_SECOND,
                    115200ull * UART_CLK_MULT);
}

static unsigned uart_rx_trigger(SdioUart *u)
{
    static const unsigned trig[4] = { 1, 4, 8, 14 };

    return u->fifo_on ? trig[u->fcr >> 6] : 1;
}

static uint8_t uart_msr_lines(SdioUart *u)
{
    if (u->mcr & UART_MCR_LOOP) {
        return ((u->mcr & UART_MCR_RTS) ? 0x10 : 0) |  /* CTS */
               ((u->mcr & UART_MCR_DTR) ? 0x20 : 0) |  /* DSR */
               ((u->mcr & UART_MCR_OUT1) ? 0x40 : 0) | /* RI */
               ((u->mcr & UART_MCR_OUT2) ? 0x80 : 0);  /* DCD */
    }
    return 0xb0;    /* CTS, DSR, DCD: a connected modem, no ring */
}

static void uart_lines_changed(SdioUart *u)
{
    uint8_t now = uart_msr_lines(u);
    uint8_t diff = now ^ u->msr_last;

    u->msr_delta |= (diff & 0x10 ? 0x01 : 0) | (diff & 0x20 ? 0x02 : 0) |
                    ((u->msr_last & 0x40) && !(now & 0x40) ? 0x04 : 0) |
                    (diff & 0x80 ? 0x08 : 0);
    u->msr_last = now;
}

/* IIR's interrupt identification, 0x01 when nothing is pending */
static uint8_t uart_iir_id(SdioUart *u)
{
    if ((u->ier & UART_IER_RLSI) && u->overrun) {
        return 0x06;
    }
    if ((u->ier & UART_IER_RDI) && u->rx_count) {
        if (u->rx_count >= uart_rx_trigger(u)) {
            return 0x04;
        }
        if (now_ns() - u->last_rx_ns >= 4 * uart_char_ns(u)) {
            return 0x0c;
        }
    }
    if ((u->ier & UART_IER_THRI) && u->thri) {
        return 0x02;
    }
    if ((u->ier & UART_IER_MSI) && u->msr_delta) {
        return 0x00;
    }
    return 0x01;
}

static void uart_update(SdioCardState *s)
{
    SdioUart *u = &s->uart;
    bool irq = uart_iir_id(u) != 0x01;

    if ((u->ier & UART_IER_RDI) && u->rx_count &&
        u->rx_count < uart_rx_trigger(u) && !irq) {
        /* the character timeout comes later */
        timer_mod(u->cti_timer, u->last_rx_ns + 4 * uart_char_ns(u));
    }
    if (irq && !u->irq) {
        u->irqs++;
    }
    u->irq = irq;
    sdio_update_dat1(s);
}

static void uart_rx_push(SdioUart *u, uint8_t c)
{
    if (u->rx_count >= (u->fifo_on ? UART_FIFO : 1)) {
        u->overrun = true;
        u->overruns++;
        return;
    }
    u->rx[(u->rx_head + u->rx_count) % UART_FIFO] = c;
    u->rx_count++;
    u->rx_chars++;
    u->last_rx_ns = now_ns();
}

/* Start shifting the next character out, if any. */
static void uart_tx_next(SdioUart *u)
{
    if (u->shifting || !u->tx_count) {
        return;
    }
    u->shift_char = u->tx[u->tx_head];
    u->tx_head = (u->tx_head + 1) % UART_FIFO;
    u->tx_count--;
    u->shifting = true;
    if (!u->tx_count) {
        u->thri = true;
    }
    timer_mod(u->tx_timer, now_ns() + uart_char_ns(u));
}

static void uart_tx_done(void *opaque)
{
    SdioCardState *s = opaque;
    SdioUart *u = &s->uart;

    if (!u->shifting) {
        return;
    }
    u->shifting = false;
    u->tx_chars++;
    if (u->mcr & UART_MCR_LOOP) {
        u->looped++;
        uart_rx_push(u, u->shift_char);
    } else {
        u->discarded++;
    }
    uart_tx_next(u);
    uart_update(s);
}

static void uart_cti(void *opaque)
{
    uart_update(opaque);
}

static uint8_t uart_read(SdioCardState *s, uint32_t reg)
{
    SdioUart *u = &s->uart;
    uint8_t v = 0;

    switch (reg) {
    case 0:
        if (u->lcr & UART_LCR_DLAB) {
            return u->dll;
        }
        if (u->rx_count) {
            v = u->rx[u->rx_head];
            u->rx_head = (u->rx_head + 1) % UART_FIFO;
            u->rx_count--;
            u->last_rx_ns = now_ns();
        }
        break;
    case 1:
        return (u->lcr & UART_LCR_DLAB) ? u->dlm : u->ier;
    case 2:
        v = uart_iir_id(u) | (u->fifo_on ? 0xc0 : 0);
        if ((v & 0x0f) == 0x02) {
            u->thri = false;    /* reading IIR clears a THRE interrupt */
        }
        break;
    case 3:
        return u->lcr;
    case 4:
        return u->mcr;
    case 5:
        v = (u->rx_count ? UART_LSR_DR : 0) | (u->overrun ? UART_LSR_OE : 0) |
            (u->tx_count ? 0 : UART_LSR_THRE) |
            (u->tx_count || u->shifting ? 0 : UART_LSR_TEMT);
        u->overrun = false;
        break;
    case 6:
        v = uart_msr_lines(u) | u->msr_delta;
        u->msr_delta = 0;
        break;
    case 7:
        return u->scr;
    }
    uart_update(s);
    return v;
}

static void uart_write(SdioCardState *s, uint32_t reg, uint8_t v)
{
    SdioUart *u = &s->uart;

    switch (reg) {
    case 0:
        if (u->lcr & UART_LCR_DLAB) {
            u->dll = v;
            break;
        }
        if (u->tx_count < (u->fifo_on ? UART_FIFO : 1)) {
            u->tx[(u->tx_head + u->tx_count) % UART_FIFO] = v;
            u->tx_count++;
        } /* else lost, as on a 16550 */
        u->thri = false;
        uart_tx_next(u);
        break;
    case 1:
        if (u->lcr & UART_LCR_DLAB) {
            u->dlm = v;
            break;
        }
        if ((v & UART_IER_THRI) && !(u->ier & UART_IER_THRI) &&
            !u->tx_count) {
            u->thri = true;     /* enabling it with THR empty */
        }
        u->ier = v & 0x0f;
        break;
    case 2:
        u->fifo_on = v & UART_FCR_ENABLE;
        u->fcr = v;
        if (v & UART_FCR_CLR_RX || !u->fifo_on) {
            u->rx_count = 0;
        }
        if (v & UART_FCR_CLR_TX || !u->fifo_on) {
            u->tx_count = 0;
            u->thri = true;
        }
        break;
    case 3:
        u->lcr = v;
        break;
    case 4:
        u->mcr = v & 0x1f;
        uart_lines_changed(u);
        break;
    case 7:
        u->scr = v;
        break;
    }
    uart_update(s);
}

static void uart_reset(SdioCardState *s)
{
    SdioUart *u = &s->uart;

    timer_del(u->tx_timer);
    timer_del(u->cti_timer);
    u->ier = u->lcr = u->mcr = u->scr = u->fcr = 0;
    u->dll = 12;
    u->dlm = 0;
    u->fifo_on = false;
    u->rx_head = u->rx_count = u->tx_head = u->tx_count = 0;
    u->shifting = u->overrun = false;
    u->thri = false;
    u->msr_delta = 0;
    u->msr_last = uart_msr_lines(u);
    u->irq = false;
}

/* ---- function 1 ----------------------------------------------------------- */

static void f1_raise(SdioCardState *s)
{
    if (!s->f1_pending) {
        s->f1_pending = true;
        s->assert_ns = now_ns();
        s->stats.irqs_raised++;
    }
    sdio_update_dat1(s);
}

static void f1_timer_cb(void *opaque)
{
    f1_raise(opaque);
}

static void f1_fifo_push(SdioCardState *s, uint8_t v)
{
    if (s->fifo_count >= F1_FIFO_SIZE) {
        s->stats.fifo_overruns++;
        return;
    }
    s->fifo[(s->fifo_head + s->fifo_count) % F1_FIFO_SIZE] = v;
    s->fifo_count++;
}

static uint8_t f1_fifo_pop(SdioCardState *s)
{
    uint8_t v;

    if (!s->fifo_count) {
        s->stats.fifo_underruns++;
        return 0;
    }
    v = s->fifo[s->fifo_head];
    s->fifo_head = (s->fifo_head + 1) % F1_FIFO_SIZE;
    s->fifo_count--;
    return v;
}

static uint64_t f1_reg_value(SdioCardState *s, uint32_t base)
{
    switch (base) {
    case F1_FIFO_LEVEL:
        return s->fifo_count;
    case F1_IRQ_DELAY_US:
        return s->irq_delay_us;
    case F1_ASSERT_NS:
        return s->assert_ns;
    case F1_RAISED:
        return s->stats.irqs_raised;
    case F1_ACKED:
        return s->stats.irqs_acked;
    case F1_FIFO_UNDERRUNS:
        return s->stats.fifo_underruns;
    case F1_FIFO_OVERRUNS:
        return s->stats.fifo_overruns;
    case F1_MAGIC:
        return 0x4f494453; /* "SDIO" */
    }
    return 0;
}

static uint8_t f1_read(SdioCardState *s, uint32_t addr)
{
    if (addr < F1_RAM_SIZE) {
        return s->mem[s->window * F1_RAM_SIZE + addr];
    }
    switch (addr) {
    case F1_FIFO:
        return f1_fifo_pop(s);
    case F1_WINDOW:
        return s->window;
    case F1_IRQ_CTRL:
        return (timer_pending(s->f1_timer) ? 1 : 0) | (s->f1_pending ? 2 : 0);
    }
    if (addr >= F1_FIFO_LEVEL && addr < F1_REG_END) {
        uint32_t base = addr & ~3u;
        unsigned width = 4;

        if (addr >= F1_ASSERT_NS && addr < F1_ASSERT_NS + 8) {
            base = F1_ASSERT_NS;
            width = 8;
        }
        if (addr == base || s->snap_addr != base) {
            /* the lowest byte latches the whole value */
            stq_le_p(s->snap, f1_reg_value(s, base));
            s->snap_addr = base;
        }
        return addr - base < width ? s->snap[addr - base] : 0;
    }
    return 0;
}

static void f1_write(SdioCardState *s, uint32_t addr, uint8_t v)
{
    if (addr < F1_RAM_SIZE) {
        s->mem[s->window * F1_RAM_SIZE + addr] = v;
        return;
    }
    if (addr >= F1_IRQ_DELAY_US && addr < F1_IRQ_DELAY_US + 4) {
        unsigned sh = (addr - F1_IRQ_DELAY_US) * 8;

        s->irq_delay_us = (s->irq_delay_us & ~(0xffu << sh)) |
                          ((uint32_t)v << sh);
        return;
    }
    switch (addr) {
    case F1_FIFO:
        f1_fifo_push(s, v);
        break;
    case F1_WINDOW:
        s->window = v % (F1_MEM_SIZE / F1_RAM_SIZE);
        break;
    case F1_IRQ_CTRL:
        if (v & 4) {
            timer_del(s->f1_timer);
        }
        if (v & 1) {
            timer_mod(s->f1_timer,
                      now_ns() + (int64_t)s->irq_delay_us * 1000);
        }
        if (v & 2) {
            f1_raise(s);
        }
        break;
    case F1_IRQ_ACK:
        if (s->f1_pending) {
            s->f1_pending = false;
            s->stats.irqs_acked++;
        }
        sdio_update_dat1(s);
        break;
    }
}

/* ---- function 0 and the function dispatch ------------------------------- */

static void sdio_reset_card(SdioCardState *s)
{
    s->state = ST_IDLE;
    s->ioe = s->ien = s->abort = 0;
    s->bus_if = 0;
    s->speed = 0;
    memset(s->blksize, 0, sizeof(s->blksize));
    s->xfer_left = 0;
    timer_del(s->f1_timer);
    s->f1_pending = false;
    s->window = 0;
    s->fifo_head = s->fifo_count = 0;
    uart_reset(s);
    sdio_update_dat1(s);
}

static uint8_t f0_read(SdioCardState *s, uint32_t addr)
{
    if (addr >= CIS_COMMON && addr < CIS_F2 + CIS_SIZE) {
        return s->cis[(addr - CIS_COMMON) / CIS_SIZE][addr % CIS_SIZE];
    }
    if (addr >= 0x100 && addr < 0x100 * (SDIO_NUM_FUNCS + 1)) {
        unsigned fn = addr >> 8;
        uint32_t cis = CIS_COMMON + fn * CIS_SIZE;

        switch (addr & 0xff) {
        case 0x00:      /* standard interface code */
            return fn == 2 ? 0x04 /* SDIO_CLASS_GPS */ : 0x00;
        case 0x09:
        case 0x0a:
        case 0x0b:
            return cis >> (8 * ((addr & 0xff) - 0x09));
        case 0x10:
            return s->blksize[fn];
        case 0x11:
            return s->blksize[fn] >> 8;
        }
        return 0;
    }
    switch (addr) {
    case CCCR_REV:
        return 0x32;    /* SDIO 2.00, CCCR 1.20 */
    case CCCR_SD:
        return 0x02;    /* SD physical 2.00 */
    case CCCR_IOEX:
        return s->ioe;
    case CCCR_IORX:
        return s->ioe;  /* ready as soon as enabled */
    case CCCR_IENX:
        return s->ien;
    case CCCR_INTX:
        return sdio_pending(s) & s->ien;
    case CCCR_ABORT:
        return 0;
    case CCCR_IF:
        return s->bus_if;
    case CCCR_CAPS:
        return CAP_SDC | CAP_SMB | CAP_S4MI | CAP_E4MI;
    case CCCR_CIS:
    case CCCR_CIS + 1:
    case CCCR_CIS + 2:
        return CIS_COMMON >> (8 * (addr - CCCR_CIS));
    case CCCR_BLKSIZE:
        return s->blksize[0];
    case CCCR_BLKSIZE + 1:
        return s->blksize[0] >> 8;
    case CCCR_POWER:
        return 0;
    case CCCR_SPEED:
        return 0x01 | s->speed;     /* SHS, EHS as written */
    }
    return 0;
}

/* returns R5 error flags */
static uint8_t f0_write(SdioCardState *s, uint32_t addr, uint8_t v)
{
    if (addr >= 0x100 && addr < 0x100 * (SDIO_NUM_FUNCS + 1)) {
        unsigned fn = addr >> 8;

        switch (addr & 0xff) {
        case 0x10:
            s->blksize[fn] = (s->blksize[fn] & 0xff00) | v;
            break;
        case 0x11:
            s->blksize[fn] = (s->blksize[fn] & 0xff) | (v << 8);
            break;
        }
        return 0;
    }
    switch (addr) {
    case CCCR_IOEX:
        s->ioe = v & 0x06;
        break;
    case CCCR_IENX:
        s->ien = v & 0x07;
        sdio_update_dat1(s);
        break;
    case CCCR_ABORT:
        if (v & 0x08) {         /* RES: reset the I/O portion */
            s->stats.resets++;
            sdio_reset_card(s);
            return 0;
        }
        if (v & 0x07) {         /* ASx: abort that function's transfer */
            s->stats.aborts++;
            s->xfer_left = 0;
        }
        break;
    case CCCR_IF:
        s->bus_if = v & 0xa3;
        break;
    case CCCR_BLKSIZE:
        s->blksize[0] = (s->blksize[0] & 0xff00) | v;
        break;
    case CCCR_BLKSIZE + 1:
        s->blksize[0] = (s->blksize[0] & 0xff) | (v << 8);
        break;
    case CCCR_SPEED:
        s->speed = v & 0x02;
        break;
    }
    return 0;
}

static uint8_t fn_read(SdioCardState *s, unsigned fn, uint32_t addr)
{
    switch (fn) {
    case 0:
        return f0_read(s, addr);
    case 1:
        return f1_read(s, addr);
    case 2:
        if (addr >= F2_UART_BASE && addr < F2_UART_BASE + 8) {
            return uart_read(s, addr - F2_UART_BASE);
        }
        return 0;
    }
    return 0;
}

static void fn_write(SdioCardState *s, unsigned fn, uint32_t addr, uint8_t v)
{
    switch (fn) {
    case 0:
        f0_write(s, addr, v);
        break;
    case 1:
        f1_write(s, addr, v);
        break;
    case 2:
        if (addr >= F2_UART_BASE && addr < F2_UART_BASE + 8) {
            uart_write(s, addr - F2_UART_BASE, v);
        }
        break;
    }
}

/* ---- the SD bus side ------------------------------------------------------ */

static int sdio_r5(uint8_t *rsp, uint8_t flags, uint8_t data)
{
    stl_be_p(rsp, ((uint32_t)flags << 8) | data);
    return 4;
}

static void sdio_end_xfer(SdioCardState *s)
{
    if (s->xfer_left) {
        s->stats.unfinished++;
        s->xfer_left = 0;
    }
}

static int sdio_cmd52(SdioCardState *s, uint32_t arg, uint8_t *rsp)
{
    bool write = arg >> 31;
    unsigned fn = (arg >> 28) & 7;
    bool raw = arg & BIT(27);
    uint32_t addr = (arg >> 9) & 0x1ffff;
    uint8_t data = arg & 0xff;
    uint8_t state = s->xfer_left ? R5_STATE_TRN : R5_STATE_CMD;

    if (fn > SDIO_NUM_FUNCS) {
        s->stats.errors++;
        return sdio_r5(rsp, state | R5_FUNCTION_NUMBER, 0);
    }
    if (write) {
        s->stats.cmd52_writes++;
        if (fn == 0 && addr == CCCR_ABORT && (data & 0x08)) {
            /* a reset answers, then the card is idle */
            f0_write(s, addr, data);
            return sdio_r5(rsp, state, 0);
        }
        fn_write(s, fn, addr, data);
        if (!raw) {
            return sdio_r5(rsp, state, 0);
        }
    } else {
        s->stats.cmd52_reads++;
    }
    return sdio_r5(rsp, state, fn_read(s, fn, addr));
}

static int sdio_cmd53(SdioCardState *s, uint32_t arg, uint8_t *rsp)
{
    bool write = arg >> 31;
    unsigned fn = (arg >> 28) & 7;
    bool block = arg & BIT(27);
    bool incr = arg & BIT(26);
    uint32_t addr = (arg >> 9) & 0x1ffff;
    uint32_t count = arg & 0x1ff;
    uint32_t bytes;

    if (fn > SDIO_NUM_FUNCS) {
        s->stats.errors++;
        return sdio_r5(rsp, R5_STATE_CMD | R5_FUNCTION_NUMBER, 0);
    }
    if (block) {
        if (!count || !s->blksize[fn] || s->blksize[fn] > SDIO_MAX_BLKSIZE) {
            /* infinite transfers are not supported; no block size set */
            s->stats.errors++;
            return sdio_r5(rsp, R5_STATE_CMD | R5_ERROR, 0);
        }
        bytes = count * s->blksize[fn];
        s->stats.cmd53_block_mode++;
        s->stats.cmd53_blocks += count;
    } else {
        bytes = count ? count : 512;
        s->stats.cmd53_byte_mode++;
    }
    if (write) {
        s->stats.cmd53_writes++;
    } else {
        s->stats.cmd53_reads++;
    }
    s->xfer_left = bytes;
    s->xfer_write = write;
    s->xfer_fn = fn;
    s->xfer_addr = addr;
    s->xfer_incr = incr;
    return sdio_r5(rsp, R5_STATE_TRN, 0);
}

static int sdio_do_command(SDState *sd, SDRequest *req, uint8_t *rsp)
{
    SdioCardState *s = sdio_of(sd);

    s->stats.commands++;
    switch (req->cmd) {
    case 0:
        sdio_end_xfer(s);
        s->stats.resets++;
        sdio_reset_card(s);
        return 0;
    case 5:
        if (s->state == ST_STBY || s->state == ST_CMD) {
            break;
        }
        stl_be_p(rsp, BIT(31) | (SDIO_NUM_FUNCS << 28) | SDIO_OCR);
        if (req->arg & SDIO_OCR) {
            s->state = ST_READY;
        }
        return 4;
    case 3:
        if (s->state != ST_READY && s->state != ST_STBY) {
            break;
        }
        s->state = ST_STBY;
        stl_be_p(rsp, (uint32_t)SDIO_RCA << 16);
        return 4;
    case 7:
        if (s->state != ST_STBY && s->state != ST_CMD) {
            break;
        }
        if ((req->arg >> 16) == SDIO_RCA) {
            /* R1: the state before the command (stby), ready for data */
            stl_be_p(rsp, (s->state == ST_CMD ? 4u : 3u) << 9 | BIT(8));
            s->state = ST_CMD;
            return 4;
        }
        s->state = ST_STBY;     /* deselected: no response */
        return 0;
    case 52:
        if (s->state != ST_CMD) {
            break;
        }
        sdio_end_xfer(s);
        return sdio_cmd52(s, req->arg, rsp);
    case 53:
        if (s->state != ST_CMD) {
            break;
        }
        sdio_end_xfer(s);
        return sdio_cmd53(s, req->arg, rsp);
    case 12:
        s->stats.cmd12_ignored++;
        break;
    }
    s->stats.illegal++;
    return 0;
}

static void sdio_write_byte(SDState *sd, uint8_t value)
{
    SdioCardState *s = sdio_of(sd);

    if (!s->xfer_left || !s->xfer_write) {
        s->stats.stray_bytes++;
        return;
    }
    fn_write(s, s->xfer_fn, s->xfer_addr, value);
    if (s->xfer_incr) {
        s->xfer_addr = (s->xfer_addr + 1) & 0x1ffff;
    }
    s->xfer_left--;
    s->stats.bytes_written++;
}

static uint8_t sdio_read_byte(SDState *sd)
{
    SdioCardState *s = sdio_of(sd);
    uint8_t v;

    if (!s->xfer_left || s->xfer_write) {
        s->stats.stray_bytes++;
        return 0;
    }
    v = fn_read(s, s->xfer_fn, s->xfer_addr);
    if (s->xfer_incr) {
        s->xfer_addr = (s->xfer_addr + 1) & 0x1ffff;
    }
    s->xfer_left--;
    s->stats.bytes_read++;
    return v;
}

static bool sdio_receive_ready(SDState *sd)
{
    SdioCardState *s = sdio_of(sd);

    return s->xfer_left && s->xfer_write;
}

static bool sdio_data_ready(SDState *sd)
{
    SdioCardState *s = sdio_of(sd);

    return s->xfer_left && !s->xfer_write;
}

static uint8_t sdio_get_dat_lines(SDState *sd)
{
    SdioCardState *s = sdio_of(sd);

    return s->dat1 ? 0xd : 0xf;  /* DAT1 low while the card interrupts */
}

static bool sdio_true(SDState *sd)
{
    return true;
}

static bool sdio_false(SDState *sd)
{
    return false;
}

static void sdio_set_voltage(SDState *sd, uint16_t millivolts)
{
}

/* ---- CIS ------------------------------------------------------------------ */

static void sdio_build_cis(SdioCardState *s)
{
    static const uint8_t common[] = {
        0x21, 0x02, 0x0c, 0x00,                 /* FUNCID: SDIO card */
        0x22, 0x04, 0x00, 0x00, 0x02, 0x32,     /* FUNCE: 512, 25 MHz */
        0x20, 0x04, SDIO_VENDOR & 0xff, SDIO_VENDOR >> 8,
        SDIO_DEVICE_TEST & 0xff, SDIO_DEVICE_TEST >> 8, /* MANFID */
        0xff,
    };
    /* FUNCE for a function (SDIO 1.1+: 42 bytes), max block size 512 */
    uint8_t funce[2 + 42] = { 0x22, 42, 0x01 };
    uint8_t *p;

    memset(s->cis, 0xff, sizeof(s->cis));
    memcpy(s->cis[0], common, sizeof(common));

    funce[2 + 12] = SDIO_MAX_BLKSIZE & 0xff;
    funce[2 + 13] = SDIO_MAX_BLKSIZE >> 8;
    funce[2 + 28] = 10;     /* enable timeout: 100 ms */

    /* function 1: FUNCID, FUNCE, MANFID (the test device) */
    p = s->cis[1];
    memcpy(p, (uint8_t[]){ 0x21, 0x02, 0x0c, 0x00 }, 4);
    p += 4;
    memcpy(p, funce, sizeof(funce));
    p += sizeof(funce);
    memcpy(p, (uint8_t[]){ 0x20, 0x04, SDIO_VENDOR & 0xff, SDIO_VENDOR >> 8,
                           SDIO_DEVICE_TEST & 0xff, SDIO_DEVICE_TEST >> 8 },
           6);
    p += 6;
    *p = 0xff;

    /*
     * function 2: FUNCID, FUNCE, MANFID (the UART device), and tuple 0x91
     * with SUBTPL_SIOREG: register ID, exp ID, the registers' offset (3
     * bytes), the clock in units of 115200 Hz, 4800-baud divisor (2 bytes)
     */
    p = s->cis[2];
    memcpy(p, (uint8_t[]){ 0x21, 0x02, 0x0c, 0x00 }, 4);
    p += 4;
    memcpy(p, funce, sizeof(funce));
    p += sizeof(funce);
    memcpy(p, (uint8_t[]){ 0x20, 0x04, SDIO_VENDOR & 0xff, SDIO_VENDOR >> 8,
                           SDIO_DEVICE_UART & 0xff, SDIO_DEVICE_UART >> 8 },
           6);
    p += 6;
    memcpy(p, (uint8_t[]){ 0x91, 10,
                           0x00, 0x00 /* SUBTPL_SIOREG */,
                           0x00, 0x00 /* register and exp ID */,
                           F2_UART_BASE & 0xff, (F2_UART_BASE >> 8) & 0xff,
                           0x00, UART_CLK_MULT, 24, 0x00 }, 12);
    p += 12;
    *p = 0xff;
}

/* ---- device ----------------------------------------------------------------- */

static char *sdio_get_stats(Object *obj, Error **errp)
{
    SdioCardState *s = SDIO_CARD(obj);
    SdioCardStats *t = &s->stats;
    SdioUart *u = &s->uart;

    return g_strdup_printf(
        "{\"commands\": %" PRIu64 ", \"cmd52_reads\": %" PRIu64
        ", \"cmd52_writes\": %" PRIu64 ", \"cmd53_reads\": %" PRIu64
        ", \"cmd53_writes\": %" PRIu64 ", \"cmd53_byte_mode\": %" PRIu64
        ", \"cmd53_block_mode\": %" PRIu64 ", \"cmd53_blocks\": %" PRIu64
        ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %" PRIu64
        ", \"illegal\": %" PRIu64 ", \"cmd12_ignored\": %" PRIu64
        ", \"errors\": %" PRIu64 ", \"unfinished\": %" PRIu64
        ", \"stray_bytes\": %" PRIu64 ", \"aborts\": %" PRIu64
        ", \"resets\": %" PRIu64 ", \"irqs_raised\": %" PRIu64
        ", \"irqs_acked\": %" PRIu64 ", \"dat1_asserts\": %" PRIu64
        ", \"fifo_underruns\": %" PRIu64 ", \"fifo_overruns\": %" PRIu64
        ", \"uart\": {\"tx_chars\": %" PRIu64 ", \"rx_chars\": %" PRIu64
        ", \"looped\": %" PRIu64 ", \"discarded\": %" PRIu64
        ", \"overruns\": %" PRIu64 ", \"irqs\": %" PRIu64 "}"
        ", \"state\": {\"selected\": %s, \"bus_width\": %u"
        ", \"high_speed\": %s, \"ien\": %u, \"pending\": %u"
        ", \"dat1_low\": %s, \"blksize\": [%u, %u, %u]}}",
        t->commands, t->cmd52_reads, t->cmd52_writes, t->cmd53_reads,
        t->cmd53_writes, t->cmd53_byte_mode, t->cmd53_block_mode,
        t->cmd53_blocks, t->bytes_read, t->bytes_written, t->illegal,
        t->cmd12_ignored, t->errors, t->unfinished, t->stray_bytes,
        t->aborts, t->resets, t->irqs_raised, t->irqs_acked,
        t->dat1_asserts, t->fifo_underruns, t->fifo_overruns,
        u->tx_chars, u->rx_chars, u->looped, u->discarded, u->overruns,
        u->irqs,
        s->state == ST_CMD ? "true" : "false",
        (s->bus_if & 3) == 2 ? 4 : 1, s->speed ? "true" : "false",
        s->ien, sdio_pending(s), s->dat1 ? "true" : "false",
        s->blksize[0], s->blksize[1], s->blksize[2]);
}

static void sdio_set_reset_stats(Object *obj, bool value, Error **errp)
{
    SdioCardState *s = SDIO_CARD(obj);

    if (value) {
        memset(&s->stats, 0, sizeof(s->stats));
        s->uart.tx_chars = s->uart.rx_chars = s->uart.looped = 0;
        s->uart.discarded = s->uart.overruns = s->uart.irqs = 0;
    }
}

static bool sdio_get_false(Object *obj, Error **errp)
{
    return false;
}

static void sdio_card_init(Object *obj)
{
    SdioCardState *s = SDIO_CARD(obj);

    s->f1_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, f1_timer_cb, s);
    s->uart.tx_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, uart_tx_done, s);
    s->uart.cti_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, uart_cti, s);
    s->mem = g_malloc0(F1_MEM_SIZE);
    s->fifo = g_malloc0(F1_FIFO_SIZE);
}

static void sdio_card_finalize(Object *obj)
{
    SdioCardState *s = SDIO_CARD(obj);

    timer_free(s->f1_timer);
    timer_free(s->uart.tx_timer);
    timer_free(s->uart.cti_timer);
    g_free(s->mem);
    g_free(s->fifo);
}

static void sdio_card_realize(DeviceState *dev, Error **errp)
{
    SdioCardState *s = SDIO_CARD(dev);
    BusState *bus = qdev_get_parent_bus(dev);
    DeviceState *host = bus ? bus->parent : NULL;

    sdio_build_cis(s);
    /* DAT1 to a host that samples it (meson-mx-sdhc: "sdio-dat1") */
    if (host && object_property_find(OBJECT(host), "sdio-dat1[0]")) {
        s->dat1_out = qdev_get_gpio_in_named(host, "sdio-dat1", 0);
    }
}

static void sdio_card_reset(DeviceState *dev)
{
    SdioCardState *s = SDIO_CARD(dev);

    sdio_reset_card(s);
    s->dat1 = false;
    memset(s->mem, 0, F1_MEM_SIZE);
}

static const VMStateDescription sdio_card_vmstate = {
    .name = TYPE_SDIO_CARD,
    .unmigratable = 1,
};

static void sdio_card_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    SDCardClass *sc = SDMMC_COMMON_CLASS(klass);

    dc->desc = "SDIO card (test function and 16550 UART function)";
    dc->realize = sdio_card_realize;
    dc->vmsd = &sdio_card_vmstate;
    dc->user_creatable = true;
    device_class_set_legacy_reset(dc, sdio_card_reset);

    sc->do_command = sdio_do_command;
    sc->write_byte = sdio_write_byte;
    sc->read_byte = sdio_read_byte;
    sc->receive_ready = sdio_receive_ready;
    sc->data_ready = sdio_data_ready;
    sc->get_dat_lines = sdio_get_dat_lines;
    sc->get_inserted = sdio_true;
    sc->get_readonly = sdio_false;
    sc->set_voltage = sdio_set_voltage;
    sc->proto = NULL;

    object_class_property_add_str(klass, "stats", sdio_get_stats, NULL);
    object_class_property_add_bool(klass, "reset-stats", sdio_get_false,
                                   sdio_set_reset_stats);
}

static const TypeInfo sdio_card_types[] = {
    {
        .name = TYPE_SDIO_CARD,
        .parent = TYPE_SDMMC_COMMON,
        .instance_size = sizeof(SdioCardState),
        .instance_init = sdio_card_init,
        .instance_finalize = sdio_card_finalize,
        .class_init = sdio_card_class_init,
    },
};

DEFINE_TYPES(sdio_card_types)
