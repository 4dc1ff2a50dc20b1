// SPDX-License-Identifier: GPL-2.0

//! The driver's OF match table and probe.
//!
//! The slots' devices, the interrupt and a host for each
//! slot are registered for the controller's binding (devres): at unbind the hosts go first,
//! then the interrupt, then the slots' devices; the last of them drops the controller (`Sdio`).

use kernel::{
    clk::Clk,
    device::{
        Bound,
        Core,
        Device, //
    },
    dma::Coherent,
    new_mutex,
    of,
    platform,
    prelude::*,
    sync::{
        atomic::Atomic,
        Arc, //
    }, //
};

use crate::kernel_ext::irq::managed;
use crate::kernel_ext::out_of_tree::FixedIoRequest as _;
use crate::kernel_ext::platform::of_child;
use crate::mmc::{
    Cap,
    HostConfig,
    UnregisteredHost, //
};

use crate::{
    clkc::Clkc,
    host::{
        Bus,
        EnabledClock,
        Sdio,
        SdioHost, //
    },
    hw,
    irq::IrqHandler,
    logic::{
        counters::SlotStats,
        module_params::Params, //
    },
    regs::{
        Regs,
        REGS_SIZE, //
    },
    slot::Slot,
    stats_file::StatsFile, //
};

/// The MMC host controller driver.
pub(crate) struct SdioDriver;

kernel::of_device_table!(
    OF_TABLE,
    <SdioDriver as platform::Driver>::IdInfo,
    [
        (of::DeviceId::new(c"amlogic,meson8-sdio"), ()),
        (of::DeviceId::new(c"amlogic,meson8b-sdio"), ()),
    ]
);

/// Logs a probe failure unless it is a deferral.
fn probe_err(dev: &Device, what: &str, e: Error) -> Error {
    if e != EPROBE_DEFER {
        dev_err!(dev, "{}: error {}\n", what, e.to_errno());
    }
    e
}

/// Creates the controller as the parameters `params` ask.
///
/// Its registers are mapped, the module clock switched on, the configuration written and soft
/// reset, the card clock registered and the bounce buffer allocated.
fn new_sdio(pdev: &platform::Device<Bound>, params: &Params) -> Result<Arc<Sdio>> {
    let dev: &Device<Bound> = pdev.as_ref();
    let request = pdev
        .fixed_io_request_by_index(0)
        .ok_or_else(|| probe_err(dev, "missing register window (reg)", ENODEV))?;
    let io = request
        .iomap_exclusive_sized::<REGS_SIZE>()
        .and_then(|io| io.into_devres())
        .map_err(|e| probe_err(dev, "failed to map the registers", e))?;
    let regs = Regs::new(io)?;
    let core = Clk::get(dev, Some(c"core"))
        .and_then(EnabledClock::new)
        .map_err(|e| probe_err(dev, "Failed to get and enable 'core' clock", e))?;
    hw::init_conf(&regs);
    hw::soft_reset(&regs);
    let clkc = Clkc::register(dev, &regs)
        .map_err(|e| probe_err(dev, "failed to register the card clock", e))?;
    let bounce = match params.bounce_size {
        0 => None,
        size => Some(
            Coherent::<u8>::zeroed_slice(dev, size as usize, GFP_KERNEL)
                .map_err(|e| probe_err(dev, "failed to allocate the bounce buffer", e))?,
        ),
    };
    Arc::pin_init(
        try_pin_init!(Sdio {
            dev: dev.into(),
            regs,
            clkc,
            _core_clk: core,
            bounce,
            path_rule: params.path_rule(),
            stats <- StatsFile::new(SlotStats::new()),
            bus <- new_mutex!(Bus::new(), "meson_mx_sdio_rs::bus"),
            irqs: Atomic::new(0),
            started: Atomic::new(0),
            irq_seq: Atomic::new(0),
        }),
        GFP_KERNEL,
    )
}

/// Creates the MMC host of `sdio` for the slot on `port`, on the slot's device `slot_dev`.
///
/// It is configured from the clock tree, the parameters `params` (its queue limits) and the
/// slot's node.
fn new_host<'a>(
    dev: &'a Device<Bound>,
    slot_dev: &of_child::Child<'a>,
    port: usize,
    sdio: &Arc<Sdio>,
    params: &Params,
) -> Result<UnregisteredHost<'a, SdioHost>> {
    let data = SdioHost::new(sdio.clone(), port, slot_dev.device());
    let mut host = UnregisteredHost::new_for_child(slot_dev, data)
        .map_err(|e| probe_err(dev, "failed to allocate the MMC host", e))?;
    host.regulator_get_supply()
        .map_err(|e| probe_err(dev, "failed to get the vmmc/vqmmc supplies", e))?;
    let rate_err = |e| probe_err(dev, "no usable card clock rate", e);
    let f_min = sdio.clkc.round_rate(1).map_err(rate_err)?;
    let f_max = sdio.clkc.round_rate(c_ulong::MAX).map_err(rate_err)?;
    let limits = params.limits();
    host.configure(&HostConfig {
        f_min,
        f_max,
        max_req_size: limits.max_req_size,
        max_seg_size: limits.max_req_size,
        max_segs: limits.max_segs,
        max_blk_count: hw::MAX_BLK_COUNT,
        max_blk_size: hw::MAX_BLK_SIZE,
        max_busy_timeout: 0,
        max_current_180: 0,
        max_current_330: 0,
        caps: Cap::Cmd23 | Cap::WaitWhileBusy,
    });
    host.of_parse().map_err(|e| {
        probe_err(
            dev,
            "invalid MMC properties in the slot node (bus-width, cd-gpios, ...)",
            e,
        )
    })?;
    Ok(host)
}

/// Probes `pdev`.
///
/// It creates the controller, each slot's device and host, the interrupt, then the hosts'
/// registrations, each with the debugfs file `stats` (the controller's). The interrupt is
/// requested before the hosts are added, so the hosts are removed before the interrupt is
/// freed at unbind (devres undoes in reverse order).
fn probe_sdio(pdev: &platform::Device<Bound>) -> Result {
    let dev: &Device<Bound> = pdev.as_ref();
    let params = crate::params();
    let slots = Slot::find_all(dev)?;
    let sdio = new_sdio(pdev, &params)?;
    let mut hosts = KVec::with_capacity(slots.len(), GFP_KERNEL)?;
    for slot in &slots {
        let slot_dev = slot.create(dev)?;
        hosts.push(
            new_host(dev, &slot_dev, slot.id, &sdio, &params)?,
            GFP_KERNEL,
        )?;
    }
    managed::request_threaded_irq_by_index(
        pdev,
        kernel::irq::Flags::ONESHOT,
        0,
        c"meson-mx-sdio-rs",
        Ok::<_, Error>(IrqHandler(sdio)),
    )
    .map_err(|e| probe_err(dev, "failed to request the interrupt", e))?;
    for host in hosts {
        host.register()
            .map_err(|e| probe_err(dev, "failed to add the MMC host", e))?
            .debugfs_files(|data, dir| {
                dir.read_write_file(c"stats", &data.sdio.stats);
            });
    }
    Ok(())
}

impl platform::Driver for SdioDriver {
    type IdInfo = ();
    /// Nothing, as the registrations hold the controller.
    type Data<'bound> = ();
    const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>> = Some(&OF_TABLE);

    fn probe<'bound>(
        pdev: &'bound platform::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        probe_sdio(pdev)
    }
}
