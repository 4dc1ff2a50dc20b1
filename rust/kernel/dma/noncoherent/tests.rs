// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the mappings of non-coherent pages and the device's binding.

/// The non-coherent pages' mapping test suite.
#[kernel::macros::kunit_tests(rust_kernel_dma_noncoherent)]
mod suite {
    use super::super::*;
    use kernel::{
        c_str,
        faux, //
    };

    /// Gives the device of `reg` a 32-bit DMA mask, as a platform device has, for the DMA API.
    fn set_dma_mask(reg: &faux::Registration) {
        let faux_dev: &faux::Device<Bound> = reg.as_ref();
        let dev: &Device<Bound> = faux_dev.as_ref();
        let raw = dev.as_raw();
        // SAFETY: The device is valid and bound, and no DMA is set up for it yet: its masks are
        // written before any mapping, the streaming mask pointing at the coherent one, as
        // `of_dma_configure()` does for a platform device.
        unsafe {
            (*raw).coherent_dma_mask = u64::from(u32::MAX);
            (*raw).dma_mask = &raw mut (*raw).coherent_dma_mask;
        }
    }

    /// A mapping is made only on the pages' own device, bound.
    #[test]
    fn pages_are_mapped_on_their_own_device_only() -> Result {
        let own = faux::Registration::new(c_str!("rust-dma-noncoherent-own"), None)?;
        let other = faux::Registration::new(c_str!("rust-dma-noncoherent-other"), None)?;
        let own_faux: &faux::Device<Bound> = own.as_ref();
        let own_dev: &Device<Bound> = own_faux.as_ref();
        let other_faux: &faux::Device<Bound> = other.as_ref();
        let other_dev: &Device<Bound> = other_faux.as_ref();
        set_dma_mask(&own);
        let pages = NoncoherentPages::alloc(own_dev, 4096, DataDirection::ToDevice, GFP_KERNEL)?;
        // Refused before the DMA API is called.
        let mapped = pages.map(other_dev, 0, 64, DataDirection::ToDevice, MapSync::Always);
        assert!(matches!(mapped, Err(e) if e == EINVAL));
        let m = pages.map(own_dev, 0, 64, DataDirection::ToDevice, MapSync::Always)?;
        assert!(matches!(pages.map_target(other_dev, &m), Err(e) if e == EINVAL));
        assert!(pages.map_target(own_dev, &m).is_ok());
        pages.unmap(m)?;
        Ok(())
    }

    /// A mapping still there when the device is unbound is undone then: the pages are the
    /// CPU's afterwards, and unmapping it later reaches no DMA API.
    #[test]
    fn the_unbinding_undoes_a_mapping() -> Result {
        let reg = faux::Registration::new(c_str!("rust-dma-noncoherent-unbind"), None)?;
        set_dma_mask(&reg);
        let pages = {
            let faux_dev: &faux::Device<Bound> = reg.as_ref();
            let dev: &Device<Bound> = faux_dev.as_ref();
            NoncoherentPages::alloc(dev, 4096, DataDirection::Bidirectional, GFP_KERNEL)?
        };
        let m = {
            let faux_dev: &faux::Device<Bound> = reg.as_ref();
            let dev: &Device<Bound> = faux_dev.as_ref();
            pages.map(dev, 0, 4096, DataDirection::FromDevice, MapSync::Always)?
        };
        // Mapped: the CPU has no view.
        assert!(matches!(pages.cpu_read(), Err(e) if e == EBUSY));
        // The device goes: its devres undoes the mapping.
        drop(reg);
        assert!(pages.cpu_read().is_ok());
        assert!(matches!(pages.unmap(m), Err(e) if e == ENODEV));
        assert!(pages.cpu_write(0, 4).is_ok());
        Ok(())
    }
}
