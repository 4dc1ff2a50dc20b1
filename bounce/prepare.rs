// SPDX-License-Identifier: GPL-2.0

//! The `pre_req` and `post_req` halves of the bounce policy (`double_buffer`).
//!
//! A write that will go direct is mapped ahead, and with two buffers a request that will be bounced
//! gets its buffer while the controller moves the previous request's, a write copied in, a read
//! copied out after completion.

use kernel::{
    device::Device,
    dma::DataDirection,
    prelude::*, //
};

use crate::mmc::{
    IdleRequest,
    PreReqRequest, //
};

use super::{
    policy::{
        self,
        DataPath, //
    },
    slots::Post,
    Bouncer, //
};

impl Bouncer {
    /// Returns whether there are two buffers (copies hidden in `pre_req`/`post_req`).
    fn double(&self) -> bool {
        self.bufs[1].is_some()
    }

    /// Maps the data of a write that will go direct now, for `pre_req`, while the controller moves
    /// the previous request.
    ///
    /// Returns whether it did (`PreReqRequest::pre_map`).
    pub(crate) fn pre_map(&self, mrq: &PreReqRequest, force: bool) -> bool {
        let Some(data) = mrq.data() else {
            return false;
        };
        let (sg_len, offset) = (data.sg_len(), data.sg_first_offset());
        let (len, write) = (data.len(), data.is_write());
        policy::pre_map(
            sg_len,
            offset,
            len,
            self.size(),
            self.max_direct,
            force,
            write,
        ) && mrq.pre_map()
    }

    /// Takes a free buffer, with two buffers, for a request that will be bounced and hands it over
    /// now, while the controller moves the other (`pre_req`).
    ///
    /// A write's data is copied in and cleaned, a read's range invalidated. Returns whether the
    /// request was prepared. `copy_in_fault` as for [`Self::set_up`]. Process context (`pre_req`):
    /// it may sleep.
    pub(crate) fn prepare(
        &self,
        dev: &Device,
        mrq: &IdleRequest,
        force: bool,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> bool {
        let Some(data) = mrq.data().filter(|_| self.double()) else {
            return false;
        };
        let len = data.len();
        let force = self.bounce_all(force, data.is_write());
        let bounced = policy::segments_without_mapping(data.sg_len(), self.merge_boundary)
            .is_some_and(|n| {
                let offset = data.sg_first_offset();
                policy::data_path(n, offset, len, self.size(), self.max_direct, force)
                    == Ok(DataPath::Bounce)
            });
        if !bounced {
            return false;
        }
        let owner = mrq.addr();
        let Some((slot, token)) = self.slots.lock().prepare(owner) else {
            return false;
        };
        let Some(buf) = self.buf(slot) else {
            self.slots.lock().free(slot);
            return false;
        };
        // The host's bound device, which maps the buffer in its `pre_req`.
        let bound = mrq.bound_device();
        if self.settle_tail(bound, buf, slot).is_err() {
            self.slots.lock().free(slot);
            return false;
        }
        if data.is_write() {
            // A mapping left from an earlier user goes before the CPU writes.
            self.unmap_slot(slot);
            let copied = match buf.cpu_write(len) {
                Ok(cpu) if copy_in_fault() => mrq.copy_to_buffer(cpu.buffer(), len / 2),
                Ok(cpu) => mrq.copy_to_buffer(cpu.buffer(), len),
                Err(_) => 0,
            };
            if copied != len {
                dev_dbg!(dev, "pre_req copied {} of {} bytes\n", copied, len);
                self.slots.lock().free(slot);
                return false;
            }
        }
        let dir = if data.is_write() {
            DataDirection::ToDevice
        } else {
            // As in `set_up_bounce`; the buffer stays untouched until the request starts.
            DataDirection::FromDevice
        };
        if self.map_slot(bound, buf, slot, len, dir).is_err() {
            self.slots.lock().free(slot);
            return false;
        }
        data.set_host_cookie(token);
        self.slots.lock().prepared(slot, owner, token);
        true
    }

    /// Copies a prepared read's data out of its buffer and frees it, or frees what the request held
    /// otherwise (`post_req`).
    ///
    /// Returns whether data was copied; a short copy fails the request (`EIO`, nothing transferred:
    /// the core retries it). Process context (`post_req`): it may sleep.
    pub(crate) fn clean_up(&self, dev: &Device, mrq: &IdleRequest) -> bool {
        let Some(data) = mrq.data().filter(|_| self.double()) else {
            return false;
        };
        let post = self.slots.lock().post(mrq.addr(), data.host_cookie());
        data.set_host_cookie(0);
        let Post::CopyOut { slot, len } = post else {
            return false;
        };
        let unmapped = self.unmap_slot(slot);
        let copied = self.buf(slot).map_or(0, |buf| match buf.cpu_read() {
            Ok(cpu) if unmapped => mrq.copy_from_buffer(cpu.buffer(), len),
            _ => 0,
        });
        self.slots.lock().free(slot);
        if copied != len {
            dev_err!(
                dev,
                "post_req copied {} of {} bytes out of the bounce buffer\n",
                copied,
                len
            );
            data.set_error(EIO);
            data.set_bytes_xfered(0);
            return false;
        }
        true
    }
}
