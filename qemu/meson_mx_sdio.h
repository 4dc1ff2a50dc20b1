/*
 * Amlogic Meson6/8/8b "SDIO" MMC host controller model (the SD card slot)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_SD_MESON_MX_SDIO_H
#define HW_SD_MESON_MX_SDIO_H

#include "hw/sysbus.h"
#include "hw/sd/sd.h"
#include "qom/object.h"

#define TYPE_MESON_MX_SDIO "meson-mx-sdio"
OBJECT_DECLARE_SIMPLE_TYPE(MesonMxSdioState, MESON_MX_SDIO)

#define TYPE_MESON_MX_SDIO_BUS "meson-mx-sdio-bus"

/* meson.dtsi: sdio: mmc@8c20 { reg = <0x8c20 0x20>; } in cbus (0xc1100000) */
#define MESON_MX_SDIO_BASE       0xc1108c20ULL
#define MESON_MX_SDIO_MMIO_SIZE  0x20
#define MESON_MX_SDIO_NUM_REGS   (MESON_MX_SDIO_MMIO_SIZE / 4)
/* MULT.PORT_SEL selects one of three slots (the binding's slot@[0-2]) */
#define MESON_MX_SDIO_SLOTS      3

struct MesonMxSdioState {
    SysBusDevice parent_obj;

    MemoryRegion iomem;
    qemu_irq irq;
    SDBus slot[MESON_MX_SDIO_SLOTS];
    QEMUTimer *done_timer;

    uint32_t regs[MESON_MX_SDIO_NUM_REGS];
    /* the response shift register, word 0 the least significant */
    uint32_t resp[4];
    bool busy;              /* a command is on the bus (IRQS.CMD_BUSY) */
    bool irq_lost;          /* lost-irq: CMD_INT latched, line kept low */
    uint32_t cur_fault;
    uint32_t cur_send;
    uint32_t cur_port;

    /* counters (QOM, read-only) */
    uint64_t commands;
    uint64_t data_commands;
    uint64_t bytes_read;
    uint64_t bytes_written;
    uint64_t faults_injected;
    uint64_t hung_commands;     /* commands that ended without CMD_INT */
    uint64_t soft_resets;
    /* each port's card as its commands set it: 4-bit bus, high speed */
    bool card_four[MESON_MX_SDIO_SLOTS];
    bool card_hs[MESON_MX_SDIO_SLOTS];
    bool card_app_cmd[MESON_MX_SDIO_SLOTS];
    uint64_t width_mismatches;  /* data commands on the wrong CONF width */
    uint64_t clock_mismatches;  /* commands clocked above the card's max */

    /* fault injection (QOM, settable at start and over QMP) */
    uint32_t fault_kind;
    uint32_t fault_dir;
    uint64_t fault_after;       /* skip this many eligible commands first */
    uint64_t fault_count;       /* inject this many (0: until disarmed) */

    /* properties: the DT node */
    char *variant;
    char *dt_alias;
    uint32_t dt_slot;
    uint32_t dt_sdio_slot;
    uint32_t dt_sdio_bus_width;
    uint32_t dt_sdio_max_hz;
    uint32_t dt_bus_width;
    bool dt_non_removable;
    bool dt_vqmmc;
    uint32_t clkin_hz;
    uint64_t base;
    /* properties: readings of what the evidence leaves open */
    bool resp_timeout_irq;
    bool data_timeout_irq;      /* QOM, settable at start and over QMP */
    bool addr_advances;
    uint32_t cmd_latency_ns;
    uint32_t read_access_ns;
};

#endif
