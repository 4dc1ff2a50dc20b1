// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of how the runtime PM callbacks find a device's state.

/// The runtime PM state search test suite.
#[kernel::macros::kunit_tests(rust_kernel_pm)]
mod suite {
    use super::super::*;
    use kernel::{
        c_str,
        faux, //
    };

    /// One type of runtime PM state.
    struct First;

    /// Another type of runtime PM state, whose callbacks are the same as [`First`]'s.
    struct Second;

    impl PmOps for First {
        fn runtime_suspend(&self) -> Result {
            Err(EIO)
        }

        // Refused, so that the release of the node at unbind leaves the status alone.
        fn runtime_resume(&self) -> Result {
            Err(EIO)
        }
    }

    impl PmOps for Second {
        fn runtime_suspend(&self) -> Result {
            Err(EIO)
        }

        fn runtime_resume(&self) -> Result {
            Err(EIO)
        }
    }

    /// Two types' nodes released by one function, as identical code folding of their
    /// `Runtime::release` would make them: each type finds its own state.
    #[test]
    fn a_state_is_found_by_its_type_when_releases_are_folded() -> Result {
        let reg = faux::Registration::new(c_str!("rust-pm-test"), None)?;
        let faux_dev: &faux::Device<Bound> = reg.as_ref();
        let dev: &Device<Bound> = faux_dev.as_ref();
        let raw = dev.as_raw();
        let first = Arc::new(First, GFP_KERNEL)?;
        let second = Arc::new(Second, GFP_KERNEL)?;
        let folded: bindings::dr_release_t = Some(Runtime::<First>::release);
        let first_node = Runtime::<First>::new_node(first.clone(), folded)?;
        let second_node = Runtime::<Second>::new_node(second.clone(), folded)?;
        // SAFETY: Both nodes are initialised; the device is bound. The second, released by
        // `First`'s function, is taken back below before the device is unbound.
        unsafe {
            bindings::devres_add(raw, first_node.as_ptr().cast());
            bindings::devres_add(raw, second_node.as_ptr().cast());
        }
        // SAFETY: Nothing releases the nodes while the states found are used: the device stays
        // bound until `reg` is dropped, after the second node is taken back.
        let (found_first, found_second) =
            unsafe { (Runtime::<First>::find(raw), Runtime::<Second>::find(raw)) };
        // The newest node of the folded function is `Second`'s: without the key, `First`
        // would find it.
        let first_ok = found_first.is_some_and(|p| core::ptr::eq(p, &*first));
        // `Second` finds its own node or, if its function is not `First`'s, none: never
        // `First`'s. (Built with rustc's function merging, the two releases are one here.)
        let second_ok = found_second.is_none_or(|p| core::ptr::eq(p, &*second));
        let mut key = TypeId::of::<Second>();
        // SAFETY: The device's devres holds the second node, added above with `First`'s function,
        // a `Node<Second>` with the key `key`; `same_key` may compare it.
        let node =
            unsafe { bindings::devres_remove(raw, folded, Some(same_key), (&raw mut key).cast()) };
        let removed = core::ptr::eq(node, second_node.as_ptr().cast());
        if removed {
            // SAFETY: The second node is out of the device's devres: nothing else uses it; it
            // is dropped and freed once.
            unsafe {
                core::ptr::drop_in_place(second_node.as_ptr());
                bindings::devres_free(second_node.as_ptr().cast());
            }
        }
        assert!(removed);
        assert!(first_ok);
        assert!(second_ok);
        Ok(())
    }

    /// A second enable in one binding is refused, and the first one's state stays found.
    #[test]
    fn a_second_enable_in_one_binding_is_refused() -> Result {
        let reg = faux::Registration::new(c_str!("rust-pm-test-twice"), None)?;
        let faux_dev: &faux::Device<Bound> = reg.as_ref();
        let dev: &Device<Bound> = faux_dev.as_ref();
        let first = Arc::new(First, GFP_KERNEL)?;
        Runtime::<First>::enable(dev, first.clone(), 60_000)?;
        let again = Runtime::<First>::enable(dev, Arc::new(First, GFP_KERNEL)?, 60_000);
        // SAFETY: Nothing releases the node while the state found is used: the device stays
        // bound until `reg` is dropped.
        let found = unsafe { Runtime::<First>::find(dev.as_raw()) };
        assert!(again == Err(EBUSY));
        assert!(found.is_some_and(|p| core::ptr::eq(p, &*first)));
        Ok(())
    }
}
