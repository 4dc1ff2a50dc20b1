// SPDX-License-Identifier: GPL-2.0

//! Work done for a request while the previous one runs (`pre_req`, `post_req`).
//!
//! Mapping its data, or, with two bounce buffers, copying a write in before it starts and a read
//! out after it completed.

use crate::mmc::{
    IdleRequest,
    PreReqRequest, //
};

use crate::controller::Sdhc;

impl Sdhc {
    /// Prepares a request while the previous one runs (`pre_req`).
    ///
    /// Maps the data of a request that will go direct, or, with double buffering, gives a request
    /// that will be bounced its buffer now (a write is copied in, a read's range invalidated).
    pub(crate) fn pre_request(&self, mrq: &PreReqRequest) {
        let force = self.debugfs.force_bounce();
        if self.bounce.pre_map(mrq, force) {
            self.debugfs.stats().record_pre_mapped();
            return;
        }
        if self
            .bounce
            .prepare(&self.dev, mrq, force, &|| self.debugfs.take_copy_in_fault())
        {
            self.debugfs.stats().record_prepared();
        }
    }

    /// Finishes a request after the MMC layer unmapped what `pre_req` mapped (`post_req`).
    ///
    /// With double buffering, copies a read out of its buffer while the next request runs.
    pub(crate) fn post_request(&self, mrq: &IdleRequest) {
        if self.bounce.clean_up(&self.dev, mrq) {
            self.debugfs.stats().record_post_req_copy();
        }
    }
}
