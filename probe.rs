// SPDX-License-Identifier: GPL-2.0

//! The driver's OF match table and probe.
//!
//! The host and the interrupt are registered for the device's binding (devres): both end when the
//! device is unbound, which drops the last reference to the controller (`Sdhc`) after them.

use kernel::{
    clk::Clk,
    device::{
        Bound,
        Core,
        Device, //
    },
    new_mutex,
    of,
    platform,
    prelude::*,
    sync::{
        atomic::Atomic,
        Arc, //
    }, //
};

use crate::kernel_ext::out_of_tree::FixedIoRequest as _;
use crate::kernel_ext::{
    irq::managed,
    pm, //
};
use crate::mmc::{
    self,
    Cap,
    HostConfig,
    UnregisteredHost, //
};

use crate::{
    bounce::Buffers,
    clkc::Clkc,
    controller::{
        BusState,
        EnabledClk,
        Sdhc,
        SdhcHost, //
    },
    deadline::BusLines,
    hw,
    irq::IrqHandler,
    logic::Limits,
    regs::{
        Regs,
        REGS_SIZE, //
    },
    sdio_irq::SdioIrqs,
    soc::{
        SocData,
        MESON8,
        MESON8M2, //
    },
    stats::{
        HostDebugfs,
        LimitsInfo, //
    }, //
};

/// The MMC host controller driver.
pub(crate) struct SdhcDriver;

/// How long the host stays idle before runtime PM switches its clocks off, in milliseconds
/// (`MMC_AUTOSUSPEND_DELAY_MS` of sdhci, 50 in most MMC host drivers).
const AUTOSUSPEND_MS: i32 = 50;

kernel::of_device_table!(
    OF_TABLE,
    <SdhcDriver as platform::Driver>::IdInfo,
    [
        (of::DeviceId::new(c"amlogic,meson8-sdhc"), MESON8),
        (of::DeviceId::new(c"amlogic,meson8b-sdhc"), MESON8),
        (of::DeviceId::new(c"amlogic,meson8m2-sdhc"), MESON8M2),
    ]
);

/// Logs a probe failure unless it is a deferral.
fn probe_err(dev: &Device, what: &str, e: Error) -> Error {
    if e != EPROBE_DEFER {
        dev_err!(dev, "{}: error {}\n", what, e.to_errno());
    }
    e
}

/// Requests and maps the register window for the device's binding.
fn map_regs(pdev: &platform::Device<Bound>) -> Result<Regs> {
    let dev: &Device<Bound> = pdev.as_ref();
    let request = pdev
        .fixed_io_request_by_index(0)
        .ok_or_else(|| probe_err(dev, "missing register window (reg)", ENODEV))?;
    let io = request
        .iomap_exclusive_sized::<REGS_SIZE>()
        .inspect_err(|&e| {
            if e == EINVAL {
                // `resource_size_t` is 64 bits with LPAE: no 64-bit formatting on 32-bit ARM.
                #[allow(clippy::useless_conversion)]
                let len = pdev
                    .resource_by_index(0)
                    .map_or(0, |r| u32::try_from(r.size()).unwrap_or(u32::MAX));
                dev_err!(
                    dev,
                    "register window (reg) of {} bytes, the registers need {}\n",
                    len,
                    REGS_SIZE
                );
            }
        })
        .and_then(|io| io.into_devres())
        .map_err(|e| probe_err(dev, "failed to map the registers", e))?;
    Regs::new(io)
}

/// Enables the module clock and returns it.
///
/// Checks that the clock tree's first input exists.
fn enable_pclk(dev: &Device<Bound>) -> Result<EnabledClk> {
    let pclk =
        Clk::get(dev, Some(c"pclk")).map_err(|e| probe_err(dev, "missing clock \"pclk\"", e))?;
    // The mux of the clock tree starts at its first input; without it there is no bus clock.
    drop(
        Clk::get(dev, Some(c"clkin0"))
            .map_err(|e| probe_err(dev, "missing clock \"clkin0\"", e))?,
    );
    // Accessing any register requires the module clock to be enabled.
    EnabledClk::new(pclk).map_err(|e| probe_err(dev, "Failed to enable 'pclk' clock", e))
}

/// Creates the controller with its registers mapped, module clock on, hardware initialised, clock
/// tree registered and bounce buffer allocated.
fn new_sdhc(pdev: &platform::Device<Bound>, soc: SocData) -> Result<(Arc<Sdhc>, Limits)> {
    let dev: &Device<Bound> = pdev.as_ref();
    let regs = map_regs(pdev)?;
    let pclk = enable_pclk(dev)?;
    hw::init_hw(&regs, &soc);

    let clkc = Clkc::register(dev, &regs)
        .map_err(|e| probe_err(dev, "failed to register the clock controller", e))?;

    let merge_boundary = mmc::dma_merge_boundary(dev);
    let buffers = Buffers::allocate(dev);
    let (skip_clean, skip_reason) = buffers.skip_clean();
    dev_info!(
        dev,
        "skip_clean_invalidate: {} ({})\n",
        u8::from(skip_clean),
        skip_reason.as_str()
    );
    let limits = buffers.limits();
    dev_dbg!(dev, "queue limits: {:?}\n", limits);
    let debugfs = HostDebugfs::new(LimitsInfo {
        limits,
        bounce_size: buffers.size(),
        bounce_cached: buffers.cached(),
        bounce_buffers: buffers.count(),
        dma_merge_boundary: merge_boundary,
    });

    let sdhc = Arc::pin_init(
        try_pin_init!(Sdhc {
            dev: dev.into(),
            soc,
            pclk,
            clkc,
            regs,
            bounce <- buffers.into_bouncer(merge_boundary),
            cur <- new_mutex!(None, "meson_mx_sdhc_rs::cur"),
            irq_ista: Atomic::new(0),
            held_slots: Atomic::new(0),
            held_tries: Atomic::new(0),
            started_seq: Atomic::new(0),
            irq_seq: Atomic::new(0),
            bus_hz: Atomic::new(0),
            bus_lines: BusLines::new(),
            bus <- new_mutex!(BusState::new(), "meson_mx_sdhc_rs::bus"),
            sdio <- SdioIrqs::new(),
            debugfs <- debugfs,
        }),
        GFP_KERNEL,
    )?;
    Ok((sdhc, limits))
}

/// Creates the MMC host of `sdhc`, configured from the limits, the clock tree and the device tree.
fn new_host<'a>(
    dev: &'a Device<Bound>,
    sdhc: &Arc<Sdhc>,
    limits: &Limits,
) -> Result<UnregisteredHost<'a, SdhcHost>> {
    let mut host = UnregisteredHost::new(dev, SdhcHost::new(sdhc.clone()))
        .map_err(|e| probe_err(dev, "failed to allocate the MMC host", e))?;

    // Get regulators and the supported OCR mask.
    host.regulator_get_supply()
        .map_err(|e| probe_err(dev, "failed to get the vmmc/vqmmc supplies", e))?;
    // Without vmmc (and no other source of voltages) every card would fail to initialise with
    // a bare -EINVAL from the MMC core; say what is missing instead.
    if host.ocr_avail() == 0 {
        return Err(probe_err(
            dev,
            "no card voltage: vmmc-supply is missing from the device tree",
            EINVAL,
        ));
    }

    let rate_err = |e| probe_err(dev, "no usable bus clock rate", e);
    let f_min = sdhc.clkc.round_rate(1).map_err(rate_err)?;
    let f_max = sdhc.clkc.round_rate(c_ulong::MAX).map_err(rate_err)?;
    if f_max == 0 {
        return Err(probe_err(dev, "bus clock has no rate", EINVAL));
    }

    host.configure(&HostConfig {
        f_min,
        f_max,
        max_req_size: limits.max_req_size,
        max_seg_size: limits.max_seg_size,
        max_segs: limits.max_segs,
        max_blk_count: limits.max_blk_count,
        max_blk_size: limits.max_blk_size,
        max_busy_timeout: crate::logic::MAX_BUSY_TIMEOUT_MS,
        max_current_180: 300,
        max_current_330: 300,
        caps: Cap::WaitWhileBusy | Cap::HwReset,
    });

    host.of_parse().map_err(|e| {
        probe_err(
            dev,
            "invalid MMC properties in the device tree (bus-width, cd-gpios, ...)",
            e,
        )
    })?;
    set_up_sdio_irq(&mut host, sdhc);
    Ok(host)
}

/// Sets up SDIO card interrupts through DAT1, or the core's polling (`sdio_irq=0`).
fn set_up_sdio_irq(host: &mut UnregisteredHost<'_, SdhcHost>, sdhc: &Sdhc) {
    let sdio_irq = crate::sdio_irq();
    host.set_sdio_irq(sdio_irq);
    if sdio_irq {
        sdhc.sdio.set_signal(host.sdio_irq_signal());
    }
}

/// Probes `pdev`, creating the controller, then its interrupt, then the host.
///
/// The interrupt is requested before the host exists, so the host is removed before the interrupt
/// is freed at unbind (devres undoes in reverse order).
fn probe_sdhc(pdev: &platform::Device<Bound>, info: Option<&SocData>) -> Result {
    let dev: &Device<Bound> = pdev.as_ref();
    let soc = *info.ok_or_else(|| probe_err(dev, "no match data", EINVAL))?;
    let (sdhc, limits) = new_sdhc(pdev, soc)?;
    let host = new_host(dev, &sdhc, &limits)?;
    managed::request_threaded_irq_by_index(
        pdev,
        kernel::irq::Flags::ONESHOT,
        0,
        c"meson-mx-sdhc-rs",
        Ok::<_, Error>(IrqHandler(sdhc.clone())),
    )
    .map_err(|e| probe_err(dev, "failed to request the interrupt", e))?;
    HostDebugfs::register(host, |h| &h.sdhc.debugfs, |h| &h.sdhc.bounce)
        .map_err(|e| probe_err(dev, "failed to add the MMC host", e))?;
    // After the host: at unbind runtime PM is disabled, with the controller powered, before the
    // host is removed.
    pm::Runtime::enable(dev, sdhc, AUTOSUSPEND_MS)
        .map_err(|e| probe_err(dev, "failed to enable runtime PM", e))
}

impl pm::Driver for SdhcDriver {
    type Pm = Sdhc;
}

impl platform::Driver for SdhcDriver {
    type IdInfo = SocData;
    /// Nothing, as the host's and the interrupt's registrations hold the controller.
    type Data<'bound> = ();
    const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>> = Some(&OF_TABLE);

    fn probe<'bound>(
        pdev: &'bound platform::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        probe_sdhc(pdev, info)
    }
}
