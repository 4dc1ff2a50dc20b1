/*
 * Amlogic Meson6/8/8b "SDIO" MMC host controller model (the SD card slot)
 *
 * The Meson8b has two MMC controllers; this is the one Amlogic calls "SDIO"
 * (meson.dtsi's sdio: mmc@8c20, Linux's drivers/mmc/host/meson-mx-sdio.c),
 * with a mux for up to three slots.  The registers and their behaviour are
 * what the in-tree driver (the referee) and Amlogic's 3.10 driver
 * (drivers/amlogic/mmc/aml_sdio.c) program and rely on; there is no public
 * datasheet.  Documentation/emulated-board.rst gives the evidence register
 * by register and the readings taken where it leaves the hardware open.
 *
 *  ARGU  0x00  command argument (write); with MULT.WR_RD_OUT_INDEX set, a
 *              read returns word MULT.RESP_READ_INDEX of the response and
 *              advances the index (both drivers read a 136-bit response as
 *              four ARGU reads in a row, least significant word first)
 *  SEND  0x04  command index (0x40 | opcode), response bits (45: 48-bit,
 *              133: 136-bit), no-CRC7, has-data (read), data (write),
 *              DAT0 busy check, package count - 1 (bits 31:24); writing it
 *              starts the command
 *  CONF  0x08  clock divider (bits 9:0, clkin / 2 / (div + 1)), bus width
 *              (bit 20: 4-bit), the write CRC status the card must answer
 *              (bits 31:29) and fields the model keeps but does not use
 *  IRQS  0x0c  CMD_BUSY (4), RESP_CRC7_OK (5), DATA_READ_CRC16_OK (6),
 *              DATA_WRITE_CRC16_OK (7), IF_INT (8), CMD_INT (9); a write of
 *              1 clears bits 8 and 9 (aml_sdio.c: "write 1 clear bit8,9"),
 *              the CRC bits are status of the last command
 *  IRQC  0x10  ARC_IF_INT_EN (3), ARC_CMD_INT_EN (4), SOFT_RESET (15, reads
 *              as 0)
 *  MULT  0x14  PORT_SEL (1:0, the slot), WR_RD_OUT_INDEX (8),
 *              RESP_READ_INDEX (15:12)
 *  ADDR  0x18  DMA address of the data (one contiguous buffer)
 *  EXT   0x1c  DATA_RW_NUMBER (29:16): bits per package and data line,
 *              block size * 8 + 15 CRC bits per line used (60 on 4 lines)
 *
 * The interrupt output is (IRQS.CMD_INT and IRQC.ARC_CMD_INT_EN) or
 * (IRQS.IF_INT and IRQC.ARC_IF_INT_EN); the DT says rising edge, so the GIC
 * latches the rising edge of that level.  CMD_INT comes once the response
 * and all packages have moved (the data by DMA, before CMD_INT).
 *
 * Cards: one SD bus per slot ("sdio-slot0".."sdio-slot2"); MULT.PORT_SEL at
 * the SEND write chooses the one the command goes to.  The DT has the node
 * of the SD card's slot ("slot") and, with "sdio-slot", one of an SDIO
 * card's slot (sdio-card on that slot's bus).
 *
 * Fault injection (QOM properties, settable with -device ... and over QMP):
 * fault-kind none|lost-irq|data-crc|resp-timeout|resp-crc, fault-dir
 * any|read|write|cmd (data commands of one direction; cmd: commands without
 * data), fault-after N (let N eligible commands pass first), fault-count N
 * (inject N times; 0: until fault-kind is set to none).
 *  lost-irq      the command completes, IRQS latches CMD_INT, the interrupt
 *                output stays low (until the next write of IRQS.CMD_INT)
 *  data-crc      a data command: on a read one byte of the data in memory is
 *                wrong and DATA_READ_CRC16_OK stays clear; on a write the
 *                card takes the data but its CRC status token is not the
 *                one CONF expects, DATA_WRITE_CRC16_OK stays clear
 *  resp-timeout  the command does not reach the card: no response (see
 *                resp-timeout-irq for what the controller does then)
 *  resp-crc      the card takes the command, RESP_CRC7_OK stays clear
 *
 * Bus settings per port: the model follows each port's card as its
 * commands set it (ACMD6 and a CMD52 write of CCCR 0x07: the bus width;
 * CMD6 switching function group 1 and a CMD52 write of CCCR 0x13: high
 * speed; CMD0 and a CMD52 write of CCCR 0x06's RES bit: back to one line
 * at default speed) and counts a data command whose CONF bus width is not
 * its card's (width-mismatches) and a command clocked above what its card
 * takes (clock-mismatches: 25 MHz, 50 MHz in high speed; on the SDIO
 * card's port also above the slot node's max-frequency).  The slots share
 * CONF: a driver that does not write a slot's settings before its
 * commands is counted here.
 *
 * A card that sends no data for a read or takes no more for a write (a
 * command it answers without a data phase, a single-block command given
 * more packages, an ejected card): data-timeout-irq says what the
 * controller does then.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/bitops.h"
#include "qapi/error.h"
#include "hw/irq.h"
#include "hw/qdev-properties.h"
#include "hw/sd/meson_mx_sdio.h"
#include "system/dma.h"
#include "exec/address-spaces.h"
#include "migration/vmstate.h"

#define R_ARGU  (0x00 / 4)
#define R_SEND  (0x04 / 4)
#define R_CONF  (0x08 / 4)
#define R_IRQS  (0x0c / 4)
#define R_IRQC  (0x10 / 4)
#define R_MULT  (0x14 / 4)
#define R_ADDR  (0x18 / 4)
#define R_EXT   (0x1c / 4)

#define SEND_CMD_INDEX(v)       ((v) & 0x3f)
#define SEND_RESP_BITS(v)       (((v) >> 8) & 0xff)
#define SEND_RESP_NO_CRC7       BIT(16)
#define SEND_RESP_HAS_DATA      BIT(17)
#define SEND_CHECK_DAT0_BUSY    BIT(19)
#define SEND_DATA               BIT(20)
#define SEND_PACKAGES(v)        ((((v) >> 24) & 0xff) + 1)

#define CONF_CLK_DIV(v)         ((v) & 0x3ff)
#define CONF_BUS_WIDTH_4        BIT(20)

#define IRQS_CMD_BUSY           BIT(4)
#define IRQS_RESP_CRC7_OK       BIT(5)
#define IRQS_READ_CRC16_OK      BIT(6)
#define IRQS_WRITE_CRC16_OK     BIT(7)
#define IRQS_IF_INT             BIT(8)
#define IRQS_CMD_INT            BIT(9)
#define IRQS_W1C                (IRQS_IF_INT | IRQS_CMD_INT)
#define IRQS_STATUS             (IRQS_CMD_BUSY | IRQS_RESP_CRC7_OK | \
                                 IRQS_READ_CRC16_OK | IRQS_WRITE_CRC16_OK)
/* the timeout counter and its enables: kept as written, not modelled */
#define IRQS_RW                 0xfffe0000u

#define IRQC_ARC_IF_INT_EN      BIT(3)
#define IRQC_ARC_CMD_INT_EN     BIT(4)
#define IRQC_SOFT_RESET         BIT(15)

#define MULT_PORT_SEL(v)        ((v) & 3)
#define MULT_WR_RD_OUT_INDEX    BIT(8)
#define MULT_RESP_INDEX_SHIFT   12
#define MULT_RESP_INDEX_MASK    (0xfu << MULT_RESP_INDEX_SHIFT)

#define EXT_RW_NUMBER(v)        (((v) >> 16) & 0x3fff)

/* a data package's CRC16, counted as both drivers do: 16 - 1 bits per line */
#define CRC16_BITS              15

enum {
    FAULT_NONE,
    FAULT_LOST_IRQ,
    FAULT_DATA_CRC,
    FAULT_RESP_TIMEOUT,
    FAULT_RESP_CRC,
    FAULT__MAX,
};
static const char *const fault_names[FAULT__MAX] = {
    "none", "lost-irq", "data-crc", "resp-timeout", "resp-crc",
};

enum { DIR_ANY, DIR_READ, DIR_WRITE, DIR_CMD, DIR__MAX };
static const char *const dir_names[DIR__MAX] = {
    "any", "read", "write", "cmd",
};

static void meson_mx_sdio_update_irq(MesonMxSdioState *s)
{
    uint32_t irqs = s->regs[R_IRQS], irqc = s->regs[R_IRQC];
    bool level = ((irqs & IRQS_CMD_INT) && (irqc & IRQC_ARC_CMD_INT_EN) &&
                  !s->irq_lost) ||
                 ((irqs & IRQS_IF_INT) && (irqc & IRQC_ARC_IF_INT_EN));

    qemu_set_irq(s->irq, level);
}

/* the card clock: clkin / 2 / (CONF divider + 1), as the C driver's clock */
static uint64_t meson_mx_sdio_clock_hz(MesonMxSdioState *s)
{
    return s->clkin_hz / 2 / (CONF_CLK_DIV(s->regs[R_CONF]) + 1);
}

static int64_t meson_mx_sdio_clocks_ns(MesonMxSdioState *s, uint64_t clocks)
{
    return muldiv64(clocks, NANOSECONDS_PER_SECOND,
                    meson_mx_sdio_clock_hz(s));
}

static bool meson_mx_sdio_fault_eligible(MesonMxSdioState *s, uint32_t send)
{
    bool data = send & (SEND_RESP_HAS_DATA | SEND_DATA);

    switch (s->fault_kind) {
    case FAULT_DATA_CRC:
        if (!data) {
            return false;
        }
        break;
    case FAULT_RESP_CRC:
        /* only a response that carries a CRC7 can fail its check */
        if (!SEND_RESP_BITS(send) || (send & SEND_RESP_NO_CRC7)) {
            return false;
        }
        break;
    case FAULT_RESP_TIMEOUT:
        if (!SEND_RESP_BITS(send)) {
            return false;
        }
        break;
    default:
        break;
    }
    if (s->fault_dir == DIR_CMD) {
        return !data;
    }
    if (s->fault_dir != DIR_ANY) {
        if (!data) {
            return false;
        }
        if (!!(send & SEND_DATA) != (s->fault_dir == DIR_WRITE)) {
            return false;
        }
    }
    return true;
}

static uint32_t meson_mx_sdio_pick_fault(MesonMxSdioState *s, uint32_t send)
{
    uint32_t kind = s->fault_kind;

    if (kind == FAULT_NONE || !meson_mx_sdio_fault_eligible(s, send)) {
        return FAULT_NONE;
    }
    if (s->fault_after) {
        s->fault_after--;
        return FAULT_NONE;
    }
    if (s->fault_count && --s->fault_count == 0) {
        s->fault_kind = FAULT_NONE;
    }
    s->faults_injected++;
    return kind;
}

/* The card's response into the shift register ARGU reads it from. */
static void meson_mx_sdio_store_response(MesonMxSdioState *s, uint32_t send,
                                         const uint8_t *rsp, int rlen)
{
    memset(s->resp, 0, sizeof(s->resp));
    if (rlen == 16) {
        /*
         * 136 bits: the CID/CSD without its CRC7 and end bit (bits
         * 127:8, the C driver shifts them back by 8) right-aligned, the
         * start, transmission and reserved bits (0x3f) above them.
         */
        s->resp[3] = 0x3f000000u | (rsp[0] << 16) | (rsp[1] << 8) | rsp[2];
        s->resp[2] = ldl_be_p(rsp + 3);
        s->resp[1] = ldl_be_p(rsp + 7);
        s->resp[0] = ldl_be_p(rsp + 11);
    } else if (rlen == 4) {
        /* 48 bits: the 32-bit argument, above it the index (R3: 0x3f) */
        s->resp[0] = ldl_be_p(rsp);
        s->resp[1] = (send & SEND_RESP_NO_CRC7) ? 0x3f : SEND_CMD_INDEX(send);
    }
}

#define SD_APP_CMD              55
#define SD_SWITCH               6
#define SDIO_RW_DIRECT          52
#define CCCR_ABORT_RES          BIT(3)

/* A CMD52 write to function 0's register reg: its data byte, else -1. */
static int meson_mx_sdio_cccr_write(uint32_t arg, uint32_t reg)
{
    bool write = arg & BIT(31);
    uint32_t func = (arg >> 28) & 7, addr = (arg >> 9) & 0x1ffff;

    return write && func == 0 && addr == reg ? (int)(arg & 0xff) : -1;
}

/* The card on port p after command cmd (arg) it took: width, speed. */
static void meson_mx_sdio_track_card(MesonMxSdioState *s, unsigned p,
                                     uint32_t cmd, uint32_t arg)
{
    bool app = s->card_app_cmd[p];
    int v;

    s->card_app_cmd[p] = cmd == SD_APP_CMD;
    if (cmd == 0) {
        s->card_four[p] = false;
        s->card_hs[p] = false;
    } else if (cmd == SD_SWITCH && app) {
        s->card_four[p] = (arg & 3) == 2;
    } else if (cmd == SD_SWITCH && (arg & BIT(31))) {
        /* mode 1 (set), function group 1 (access mode) */
        if ((arg & 0xf) != 0xf) {
            s->card_hs[p] = (arg & 0xf) == 1;
        }
    } else if (cmd == SDIO_RW_DIRECT) {
        if ((v = meson_mx_sdio_cccr_write(arg, 0x07)) >= 0) {
            s->card_four[p] = (v & 3) == 2;
        } else if ((v = meson_mx_sdio_cccr_write(arg, 0x13)) >= 0) {
            s->card_hs[p] = v & 2;
        } else if ((v = meson_mx_sdio_cccr_write(arg, 0x06)) >= 0 &&
                   (v & CCCR_ABORT_RES)) {
            s->card_four[p] = false;
            s->card_hs[p] = false;
        }
    }
}

/* Counts a command whose CONF bus width or clock the port's card refuses. */
static void meson_mx_sdio_check_settings(MesonMxSdioState *s, unsigned p,
                                         uint32_t send)
{
    bool four = s->regs[R_CONF] & CONF_BUS_WIDTH_4;
    uint64_t max;

    if (p >= MESON_MX_SDIO_SLOTS) {
        return;
    }
    max = s->card_hs[p] ? 50000000 : 25000000;
    if (p == s->dt_sdio_slot && s->dt_sdio_max_hz < max) {
        max = s->dt_sdio_max_hz;
    }
    if ((send & (SEND_RESP_HAS_DATA | SEND_DATA)) && four != s->card_four[p]) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: CMD%u on port %u with"
                      " %d data lines, the card has %d\n",
                      SEND_CMD_INDEX(send), p, four ? 4 : 1,
                      s->card_four[p] ? 4 : 1);
        s->width_mismatches++;
    }
    if (meson_mx_sdio_clock_hz(s) > max) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: CMD%u on port %u at %"
                      PRIu64 " Hz, the card takes %" PRIu64 "\n",
                      SEND_CMD_INDEX(send), p, meson_mx_sdio_clock_hz(s), max);
        s->clock_mismatches++;
    }
}

/* How the data phase ended. */
enum {
    DATA_OK,
    DATA_BAD,       /* no whole block in EXT, a DMA error: CRC16 status clear */
    DATA_SHORT,     /* the card sent or took fewer packages than SEND gave */
};

/*
 * The data phase: SEND_PACKAGES(send) packages of the block size EXT gives
 * for CONF's bus width, to or from ADDR.  A read that ends short writes
 * only the packages that came, or, with data-timeout-irq, the rest as the
 * lines idle (0xff).
 */
static int meson_mx_sdio_data(MesonMxSdioState *s, SDBus *bus,
                              uint32_t send, bool corrupt)
{
    uint32_t rw = EXT_RW_NUMBER(s->regs[R_EXT]);
    uint32_t crc = (s->regs[R_CONF] & CONF_BUS_WIDTH_4) ? 4 * CRC16_BITS :
                   CRC16_BITS;
    uint32_t blocks = SEND_PACKAGES(send), blksz, done = 0;
    uint64_t total;
    g_autofree uint8_t *buf = NULL;
    int ret = DATA_OK;

    if (!bus) {
        return DATA_SHORT;
    }
    if (rw <= crc || (rw - crc) % 8) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: EXT data_rw_number %u"
                      " is no whole block for a %d-bit bus\n", rw,
                      (s->regs[R_CONF] & CONF_BUS_WIDTH_4) ? 4 : 1);
        return DATA_BAD;
    }
    blksz = (rw - crc) / 8;
    total = (uint64_t)blocks * blksz;
    buf = g_malloc0(total);
    s->data_commands++;

    if (send & SEND_DATA) {
        if (dma_memory_read(&address_space_memory, s->regs[R_ADDR], buf,
                            total, MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: DMA read of %"
                          PRIu64 " bytes at 0x%08x failed\n", total,
                          s->regs[R_ADDR]);
            ret = DATA_BAD;
        }
        for (; ret == DATA_OK && done < blocks && sdbus_receive_ready(bus);
             done++) {
            sdbus_write_data(bus, buf + (uint64_t)done * blksz, blksz);
        }
        s->bytes_written += (uint64_t)done * blksz;
    } else {
        for (; done < blocks && sdbus_data_ready(bus); done++) {
            sdbus_read_data(bus, buf + (uint64_t)done * blksz, blksz);
        }
        if (corrupt && done) {
            buf[(uint64_t)done * blksz - 1] ^= 0x5a;
        }
        /* what did not come from the card is what the lines idle at */
        if (done < blocks) {
            memset(buf + (uint64_t)done * blksz, 0xff,
                   (uint64_t)(blocks - done) * blksz);
        }
        if (dma_memory_write(&address_space_memory, s->regs[R_ADDR], buf,
                             done < blocks && !s->data_timeout_irq ?
                             (uint64_t)done * blksz : total,
                             MEMTXATTRS_UNSPECIFIED) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: DMA write of %"
                          PRIu64 " bytes at 0x%08x failed\n", total,
                          s->regs[R_ADDR]);
            ret = DATA_BAD;
        }
        s->bytes_read += (uint64_t)done * blksz;
    }
    if (ret == DATA_OK && done < blocks) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: CMD%u: the card moved"
                      " %u of %u blocks of %u bytes\n", SEND_CMD_INDEX(send),
                      done, blocks, blksz);
        ret = DATA_SHORT;
    }
    if (s->addr_advances) {
        s->regs[R_ADDR] += ret == DATA_SHORT && !s->data_timeout_irq ?
                           (uint64_t)done * blksz : total;
    }
    return ret;
}

/* The command's end: the card answers, the data moves, CMD_INT. */
static void meson_mx_sdio_complete(void *opaque)
{
    MesonMxSdioState *s = opaque;
    uint32_t send = s->cur_send, fault = s->cur_fault, status = 0;
    SDBus *bus = s->cur_port < MESON_MX_SDIO_SLOTS ? &s->slot[s->cur_port] :
                 NULL;
    SDRequest req = { .cmd = SEND_CMD_INDEX(send), .arg = s->regs[R_ARGU] };
    uint8_t rsp[16];
    int rlen = 0;

    if (!s->busy) {
        return;
    }
    if (bus && fault != FAULT_RESP_TIMEOUT) {
        rlen = sdbus_do_command(bus, &req, rsp);
        if (rlen || req.cmd == 0) {
            meson_mx_sdio_track_card(s, s->cur_port, req.cmd, req.arg);
        }
    }
    if (SEND_RESP_BITS(send) && rlen == 0) {
        /*
         * No response: resp-timeout-irq=off (default), the controller waits
         * for a start bit until a soft reset; on, it ends the command with
         * CMD_INT and RESP_CRC7_OK clear.
         */
        if (!s->resp_timeout_irq) {
            s->hung_commands++;
            return;
        }
        memset(s->resp, 0xff, sizeof(s->resp));
    } else {
        meson_mx_sdio_store_response(s, send, rsp, rlen);
        if (rlen && !(send & SEND_RESP_NO_CRC7) && fault != FAULT_RESP_CRC) {
            status |= IRQS_RESP_CRC7_OK;
        }
        if (send & (SEND_RESP_HAS_DATA | SEND_DATA)) {
            int d = meson_mx_sdio_data(s, bus, send, fault == FAULT_DATA_CRC);

            if (d == DATA_SHORT && !s->data_timeout_irq) {
                /*
                 * data-timeout-irq=off (default): the controller waits for
                 * the start bit of the next package (of the card's CRC
                 * status, on a write) until a soft reset; on, it ends the
                 * command with CMD_INT and the CRC16 status clear.
                 */
                s->hung_commands++;
                return;
            }
            if (d == DATA_OK && fault != FAULT_DATA_CRC) {
                status |= (send & SEND_DATA) ? IRQS_WRITE_CRC16_OK :
                          IRQS_READ_CRC16_OK;
            }
        }
    }
    s->busy = false;
    s->regs[R_IRQS] = (s->regs[R_IRQS] & ~IRQS_STATUS) | status | IRQS_CMD_INT;
    s->irq_lost = fault == FAULT_LOST_IRQ;
    meson_mx_sdio_update_irq(s);
}

static void meson_mx_sdio_start(MesonMxSdioState *s, uint32_t send)
{
    uint32_t rbits = SEND_RESP_BITS(send);
    uint64_t clocks = 48 + 2 + (rbits ? rbits + 1 + 8 : 0);
    int64_t ns = s->cmd_latency_ns;

    if (s->busy) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: SEND written while"
                      " CMD%u is on the bus\n", SEND_CMD_INDEX(s->cur_send));
    }
    s->cur_send = send;
    s->cur_port = MULT_PORT_SEL(s->regs[R_MULT]);
    if (s->cur_port >= MESON_MX_SDIO_SLOTS) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: MULT.PORT_SEL %u has"
                      " no slot\n", s->cur_port);
    }
    meson_mx_sdio_check_settings(s, s->cur_port, send);
    s->cur_fault = meson_mx_sdio_pick_fault(s, send);
    s->commands++;
    s->busy = true;
    s->regs[R_IRQS] = (s->regs[R_IRQS] & ~IRQS_STATUS) | IRQS_CMD_BUSY;
    if (send & (SEND_RESP_HAS_DATA | SEND_DATA)) {
        uint32_t lines = (s->regs[R_CONF] & CONF_BUS_WIDTH_4) ? 4 : 1;
        uint32_t rw = EXT_RW_NUMBER(s->regs[R_EXT]);

        /* rw counts the bits of all lines; start, end bits and Nac/Nwr */
        clocks += (uint64_t)SEND_PACKAGES(send) * (rw / lines + 2 + 8);
        if (send & SEND_RESP_HAS_DATA) {
            ns += s->read_access_ns;
        }
    }
    ns += meson_mx_sdio_clocks_ns(s, clocks);
    timer_mod(s->done_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
}

/*
 * IRQC.SOFT_RESET: the command on the bus (and its DMA) is abandoned,
 * CMD_BUSY and the interrupt state clear.  CONF, MULT, ADDR, EXT, ARGU and
 * SEND keep their values: the in-tree driver writes CONF (argument bits,
 * endianness, Nwr, CRC status) once, soft-resets right after, and never
 * writes those fields again.
 */
static void meson_mx_sdio_soft_reset(MesonMxSdioState *s)
{
    timer_del(s->done_timer);
    s->busy = false;
    s->irq_lost = false;
    s->regs[R_IRQS] &= ~(IRQS_STATUS | IRQS_W1C);
    s->soft_resets++;
}

static uint64_t meson_mx_sdio_read(void *opaque, hwaddr addr, unsigned size)
{
    MesonMxSdioState *s = opaque;
    unsigned r = addr / 4;

    if (addr & 3) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: unaligned read at 0x%"
                      HWADDR_PRIx "\n", addr);
        return 0;
    }
    if (r == R_ARGU && (s->regs[R_MULT] & MULT_WR_RD_OUT_INDEX)) {
        uint32_t idx = (s->regs[R_MULT] & MULT_RESP_INDEX_MASK) >>
                       MULT_RESP_INDEX_SHIFT;
        uint32_t v = s->resp[idx & 3];

        s->regs[R_MULT] = (s->regs[R_MULT] & ~MULT_RESP_INDEX_MASK) |
                          (((idx + 1) & 0xf) << MULT_RESP_INDEX_SHIFT);
        return v;
    }
    if (r == R_IRQS) {
        return s->regs[R_IRQS] | (s->busy ? IRQS_CMD_BUSY : 0);
    }
    return s->regs[r];
}

static void meson_mx_sdio_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    MesonMxSdioState *s = opaque;
    unsigned r = addr / 4;

    if (addr & 3) {
        qemu_log_mask(LOG_GUEST_ERROR, "meson-mx-sdio: unaligned write at 0x%"
                      HWADDR_PRIx "\n", addr);
        return;
    }
    switch (r) {
    case R_SEND:
        s->regs[R_SEND] = val;
        meson_mx_sdio_start(s, val);
        break;
    case R_IRQS:
        if (val & IRQS_CMD_INT) {
            s->irq_lost = false;
        }
        s->regs[R_IRQS] = (s->regs[R_IRQS] & ~(val & IRQS_W1C) &
                           ~IRQS_RW) | (val & IRQS_RW);
        break;
    case R_IRQC:
        s->regs[R_IRQC] = val & ~IRQC_SOFT_RESET;
        if (val & IRQC_SOFT_RESET) {
            meson_mx_sdio_soft_reset(s);
        }
        break;
    default:
        s->regs[r] = val;
        break;
    }
    meson_mx_sdio_update_irq(s);
}

static const MemoryRegionOps meson_mx_sdio_ops = {
    .read = meson_mx_sdio_read,
    .write = meson_mx_sdio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static void meson_mx_sdio_reset(DeviceState *dev)
{
    MesonMxSdioState *s = MESON_MX_SDIO(dev);

    timer_del(s->done_timer);
    memset(s->regs, 0, sizeof(s->regs));
    memset(s->resp, 0, sizeof(s->resp));
    memset(s->card_four, 0, sizeof(s->card_four));
    memset(s->card_hs, 0, sizeof(s->card_hs));
    memset(s->card_app_cmd, 0, sizeof(s->card_app_cmd));
    s->busy = false;
    s->irq_lost = false;
    meson_mx_sdio_update_irq(s);
}

static int meson_mx_sdio_lookup(const char *const *names, int n,
                                const char *v, const char *what, Error **errp)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], v)) {
            return i;
        }
    }
    error_setg(errp, "meson-mx-sdio: %s '%s' unknown", what, v);
    return -1;
}

static char *meson_mx_sdio_get_fault_kind(Object *obj, Error **errp)
{
    return g_strdup(fault_names[MESON_MX_SDIO(obj)->fault_kind]);
}

static void meson_mx_sdio_set_fault_kind(Object *obj, const char *v,
                                         Error **errp)
{
    int k = meson_mx_sdio_lookup(fault_names, FAULT__MAX, v, "fault-kind",
                                 errp);

    if (k >= 0) {
        MESON_MX_SDIO(obj)->fault_kind = k;
    }
}

static char *meson_mx_sdio_get_fault_dir(Object *obj, Error **errp)
{
    return g_strdup(dir_names[MESON_MX_SDIO(obj)->fault_dir]);
}

static void meson_mx_sdio_set_fault_dir(Object *obj, const char *v,
                                        Error **errp)
{
    int k = meson_mx_sdio_lookup(dir_names, DIR__MAX, v, "fault-dir", errp);

    if (k >= 0) {
        MESON_MX_SDIO(obj)->fault_dir = k;
    }
}

static bool meson_mx_sdio_get_data_timeout_irq(Object *obj, Error **errp)
{
    return MESON_MX_SDIO(obj)->data_timeout_irq;
}

static void meson_mx_sdio_set_data_timeout_irq(Object *obj, bool v,
                                               Error **errp)
{
    MESON_MX_SDIO(obj)->data_timeout_irq = v;
}

static void meson_mx_sdio_init(Object *obj)
{
    MesonMxSdioState *s = MESON_MX_SDIO(obj);

    for (int i = 0; i < MESON_MX_SDIO_SLOTS; i++) {
        g_autofree char *name = g_strdup_printf("sdio-slot%d", i);

        qbus_init(&s->slot[i], sizeof(s->slot[i]), TYPE_MESON_MX_SDIO_BUS,
                  DEVICE(s), name);
    }
    memory_region_init_io(&s->iomem, obj, &meson_mx_sdio_ops, s,
                          TYPE_MESON_MX_SDIO, MESON_MX_SDIO_MMIO_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(s), &s->iomem);
    sysbus_init_irq(SYS_BUS_DEVICE(s), &s->irq);
    s->done_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, meson_mx_sdio_complete,
                                 s);

    object_property_add_uint64_ptr(obj, "fault-after", &s->fault_after,
                                   OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint64_ptr(obj, "fault-count", &s->fault_count,
                                   OBJ_PROP_FLAG_READWRITE);
    object_property_add_uint64_ptr(obj, "faults-injected",
                                   &s->faults_injected, OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "commands", &s->commands,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "data-commands", &s->data_commands,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "bytes-read", &s->bytes_read,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "bytes-written", &s->bytes_written,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "hung-commands", &s->hung_commands,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "soft-resets", &s->soft_resets,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "width-mismatches",
                                   &s->width_mismatches, OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "clock-mismatches",
                                   &s->clock_mismatches, OBJ_PROP_FLAG_READ);
    /*
     * A data phase the card does not complete (it sends no data for a read,
     * or takes no more for a write).  Neither driver enables the
     * controller's timeout counter (IRQS bits 31:17); aml_sdio.c gives a
     * data command 5 s on its timer, a command without data 1 s.  off
     * (default, the less kind reading): no CMD_INT, the command stays on
     * the bus until a soft reset (counted in hung-commands).  on: CMD_INT
     * with the CRC16 status clear, as for a CRC error.  Settable while the
     * guest runs.
     */
    object_property_add_bool(obj, "data-timeout-irq",
                             meson_mx_sdio_get_data_timeout_irq,
                             meson_mx_sdio_set_data_timeout_irq);
}

static void meson_mx_sdio_realize(DeviceState *dev, Error **errp)
{
    MesonMxSdioState *s = MESON_MX_SDIO(dev);
    static const char *const variants[] = { "meson8", "meson8b" };

    if (!s->variant) {
        s->variant = g_strdup("meson8b");
    }
    if (meson_mx_sdio_lookup(variants, ARRAY_SIZE(variants), s->variant,
                             "variant", errp) < 0) {
        return;
    }
    if (s->dt_slot >= MESON_MX_SDIO_SLOTS) {
        error_setg(errp, "meson-mx-sdio: slot=%u: the mux has slots 0-2",
                   s->dt_slot);
        return;
    }
    if (s->dt_sdio_slot != UINT32_MAX &&
        (s->dt_sdio_slot >= MESON_MX_SDIO_SLOTS ||
         s->dt_sdio_slot == s->dt_slot)) {
        error_setg(errp, "meson-mx-sdio: sdio-slot=%u: a slot 0-2 other "
                   "than slot=%u", s->dt_sdio_slot, s->dt_slot);
        return;
    }
    if (s->dt_sdio_bus_width != 1 && s->dt_sdio_bus_width != 4) {
        error_setg(errp, "meson-mx-sdio: sdio-slot-bus-width=%u: 1 or 4",
                   s->dt_sdio_bus_width);
        return;
    }
    if (s->dt_bus_width != 1 && s->dt_bus_width != 4) {
        error_setg(errp, "meson-mx-sdio: bus-width=%u: 1 or 4",
                   s->dt_bus_width);
        return;
    }
    if (!s->clkin_hz) {
        error_setg(errp, "meson-mx-sdio: clkin-hz must not be 0");
        return;
    }
    /*
     * At the SoC's address, outside virt's platform bus (which leaves a
     * region mapped already where it is): meson.dtsi's cbus + 0x8c20.
     */
    sysbus_mmio_map(SYS_BUS_DEVICE(dev), 0, s->base);
}

static void meson_mx_sdio_finalize(Object *obj)
{
    MesonMxSdioState *s = MESON_MX_SDIO(obj);

    timer_free(s->done_timer);
}

static const VMStateDescription vmstate_meson_mx_sdio = {
    .name = TYPE_MESON_MX_SDIO,
    .unmigratable = 1,
};

static const Property meson_mx_sdio_properties[] = {
    /* the DT node (hw/core/sysbus-fdt.c) */
    DEFINE_PROP_STRING("variant", MesonMxSdioState, variant),
    DEFINE_PROP_STRING("dt-alias", MesonMxSdioState, dt_alias),
    DEFINE_PROP_UINT32("slot", MesonMxSdioState, dt_slot, 1),
    DEFINE_PROP_UINT32("bus-width", MesonMxSdioState, dt_bus_width, 4),
    /*
     * A second slot node for an SDIO card (a WiFi slot, as on port A, slot
     * 0): its reg; none by default (UINT32_MAX).
     */
    DEFINE_PROP_UINT32("sdio-slot", MesonMxSdioState, dt_sdio_slot,
                       UINT32_MAX),
    /* that slot node's bus-width and max-frequency */
    DEFINE_PROP_UINT32("sdio-slot-bus-width", MesonMxSdioState,
                       dt_sdio_bus_width, 4),
    DEFINE_PROP_UINT32("sdio-slot-max-frequency", MesonMxSdioState,
                       dt_sdio_max_hz, 50000000),
    DEFINE_PROP_BOOL("non-removable", MesonMxSdioState, dt_non_removable,
                     false),
    DEFINE_PROP_BOOL("vqmmc", MesonMxSdioState, dt_vqmmc, false),
    /* clk81, meson8b.dtsi's "clkin" (and "core", its gate) */
    DEFINE_PROP_UINT32("clkin-hz", MesonMxSdioState, clkin_hz, 141666666),
    DEFINE_PROP_UINT64("base", MesonMxSdioState, base, MESON_MX_SDIO_BASE),
    /*
     * A command the card does not answer.  Neither driver enables the
     * controller's timeout interrupt (IRQS bits 17/18); both end such a
     * command with a software timer (1 s in the C driver, 1 s / 5 s in
     * aml_sdio.c), and aml_sdio.c's timer tells "ISR have been run" apart
     * from a command that never completed.  off (default, the less kind
     * reading): no CMD_INT, the command stays on the bus until a soft
     * reset.  on: CMD_INT with RESP_CRC7_OK clear after the response
     * timeout.
     */
    DEFINE_PROP_BOOL("resp-timeout-irq", MesonMxSdioState, resp_timeout_irq,
                     false),
    /*
     * ADDR during a transfer: both drivers write it before every data
     * command, so whether it reads back advanced afterwards is open.  on
     * (default, the less kind reading): it advances by the bytes moved, a
     * driver that does not rewrite it DMAs past its buffer.  off: it keeps
     * the value written.
     */
    DEFINE_PROP_BOOL("addr-advances", MesonMxSdioState, addr_advances, true),
    /* timing: fixed latency per command, the card's read access time */
    DEFINE_PROP_UINT32("cmd-latency-ns", MesonMxSdioState, cmd_latency_ns,
                       2000),
    DEFINE_PROP_UINT32("read-access-ns", MesonMxSdioState, read_access_ns,
                       20000),
};

static void meson_mx_sdio_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    device_class_set_legacy_reset(dc, meson_mx_sdio_reset);
    dc->realize = meson_mx_sdio_realize;
    dc->vmsd = &vmstate_meson_mx_sdio;
    dc->user_creatable = true;
    dc->desc = "Amlogic Meson MX SDIO (SD card slot) host controller";
    device_class_set_props(dc, meson_mx_sdio_properties);
    object_class_property_add_str(klass, "fault-kind",
                                  meson_mx_sdio_get_fault_kind,
                                  meson_mx_sdio_set_fault_kind);
    object_class_property_add_str(klass, "fault-dir",
                                  meson_mx_sdio_get_fault_dir,
                                  meson_mx_sdio_set_fault_dir);
}

static const TypeInfo meson_mx_sdio_types[] = {
    {
        .name = TYPE_MESON_MX_SDIO,
        .parent = TYPE_SYS_BUS_DEVICE,
        .instance_size = sizeof(MesonMxSdioState),
        .instance_init = meson_mx_sdio_init,
        .instance_finalize = meson_mx_sdio_finalize,
        .class_init = meson_mx_sdio_class_init,
    },
    {
        .name = TYPE_MESON_MX_SDIO_BUS,
        .parent = TYPE_SD_BUS,
        .instance_size = sizeof(SDBus),
    },
};

DEFINE_TYPES(meson_mx_sdio_types)
