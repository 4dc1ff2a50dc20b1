// SPDX-License-Identifier: GPL-2.0

//! Who holds which bounce buffer when there are two: the pure state machine of the
//! [`Bouncer`](super::Bouncer)'s double buffering, also built on the host for `cargo test`.
//!
//! The MMC core prepares request N+1 (`pre_req`) while N is in flight and cleans N up
//! (`post_req`) after N+1 has started. With two buffers a write's data is copied into a free
//! buffer in `pre_req`, and a read's data stays in its buffer after completion and is copied
//! out in `post_req`, both while the controller moves the other buffer. The rules:
//!
//! - A buffer the controller has ([`Slot::Device`]) or the CPU is copying ([`Slot::Cpu`]) is
//!   never handed to anyone else.
//! - A request is known by its address (`owner`) and a token the driver wrote into its
//!   `host_cookie` in `pre_req`, always positive: 0 is the core's value and -1 marks a mapping
//!   made by `kernel::mmc::pre_map`. The core zeroes the cookie when it prepares the same request
//!   again (error recovery reuses it), so state left for an owner whose cookie no longer
//!   matches is stale and dropped without copying.
//! - Only a read that completed without any error waits for `post_req`
//!   ([`Slot::ReadDone`]); every other completion frees its buffer at once.
//! - A request that needs a buffer at start and finds none free takes one that was prepared
//!   for another request (that request copies its data again when it starts); it never takes
//!   read data that waits for `post_req`.

/// What one bounce buffer is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Nobody's.
    Free,
    /// The CPU is copying into or out of it, outside the lock.
    Cpu,
    /// Prepared in `pre_req` for `owner` (a write's data is in it).
    Prepared {
        /// The request's address.
        owner: usize,
        /// The token in the request's `host_cookie`.
        token: i32,
    },
    /// The controller has it, for the request in flight (`token` 0: not prepared).
    Device {
        /// The request's address.
        owner: usize,
        /// The token in the request's `host_cookie`.
        token: i32,
    },
    /// A read of `len` bytes completed without error; its data waits for `post_req`.
    ReadDone {
        /// The request's address.
        owner: usize,
        /// The token in the request's `host_cookie`.
        token: i32,
        /// Bytes read.
        len: u32,
    },
}

impl Slot {
    fn owner(&self) -> Option<usize> {
        match *self {
            Slot::Prepared { owner, .. }
            | Slot::Device { owner, .. }
            | Slot::ReadDone { owner, .. } => Some(owner),
            Slot::Free | Slot::Cpu => None,
        }
    }
}

/// How the request starting got its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// The buffer `pre_req` prepared for it (a write's data is in it already).
    Prepared(usize),
    /// A buffer taken now: the data is copied as with a single buffer.
    Claimed(usize),
    /// No buffer can be taken (cannot happen with the MMC core's ordering; the request fails).
    None,
}

/// What `post_req` finds for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Post {
    /// Its read data, `len` bytes in buffer `slot` (now [`Slot::Cpu`]): copy it out, then
    /// [`Slots::free`].
    CopyOut {
        /// The buffer.
        slot: usize,
        /// Bytes to copy.
        len: u32,
    },
    /// Nothing to copy (a prepared buffer it never used was freed, or nothing was held).
    Nothing,
}

/// The most bounce buffers of a host.
pub(crate) const MAX_BUFFERS: usize = 2;

/// The state of a host's bounce buffers.
#[derive(Debug)]
pub(crate) struct Slots {
    slots: [Slot; MAX_BUFFERS],
    /// How many of `slots` are buffers that exist.
    count: usize,
    last_token: i32,
}

impl Slots {
    /// `count` free buffers (at most [`MAX_BUFFERS`]).
    pub(crate) const fn new(count: usize) -> Self {
        Self {
            slots: [Slot::Free; MAX_BUFFERS],
            count: if count > MAX_BUFFERS {
                MAX_BUFFERS
            } else {
                count
            },
            last_token: 0,
        }
    }

    /// The buffers that exist.
    fn live(&mut self) -> &mut [Slot] {
        &mut self.slots[..self.count]
    }

    /// The state of buffer `i` (`Free` for one that does not exist).
    pub(crate) fn get(&self, i: usize) -> Slot {
        self.slots.get(i).copied().unwrap_or(Slot::Free)
    }

    /// Sets buffer `i` to `to` if it is `from` now; `false` if not (or no such buffer).
    fn change(&mut self, i: usize, from: Slot, to: Slot) -> bool {
        match self.slots.get_mut(i) {
            Some(s) if *s == from => {
                *s = to;
                true
            }
            _ => false,
        }
    }

    fn next_token(&mut self) -> i32 {
        self.last_token = match self.last_token.checked_add(1) {
            Some(t) if t > 0 => t,
            _ => 1,
        };
        self.last_token
    }

    /// Frees what `owner` left that nobody is using (stale after the core prepared it again).
    pub(crate) fn drop_stale(&mut self, owner: usize) {
        for s in self.live().iter_mut() {
            if s.owner() == Some(owner) && !matches!(s, Slot::Device { .. }) {
                *s = Slot::Free;
            }
        }
    }

    /// `pre_req`: takes a free buffer for `owner` and returns it (now [`Slot::Cpu`]) with the
    /// token for the request's cookie; `None` if all are in use.
    pub(crate) fn prepare(&mut self, owner: usize) -> Option<(usize, i32)> {
        self.drop_stale(owner);
        let i = self.live().iter().position(|s| *s == Slot::Free)?;
        self.slots[i] = Slot::Cpu;
        Some((i, self.next_token()))
    }

    /// `pre_req` is done with buffer `slot`: it is ready for `owner`'s start.
    pub(crate) fn prepared(&mut self, slot: usize, owner: usize, token: i32) {
        self.change(slot, Slot::Cpu, Slot::Prepared { owner, token });
    }

    /// `request`: the buffer for `owner`, whose cookie is `cookie`, now the controller's.
    pub(crate) fn start(&mut self, owner: usize, cookie: i32) -> Start {
        let mine = Slot::Prepared {
            owner,
            token: cookie,
        };
        if cookie > 0 {
            if let Some(i) = self.live().iter().position(|s| *s == mine) {
                self.slots[i] = Slot::Device {
                    owner,
                    token: cookie,
                };
                return Start::Prepared(i);
            }
        }
        self.drop_stale(owner);
        let live = self.live();
        let free = live.iter().position(|s| *s == Slot::Free);
        let taken = free.or_else(|| live.iter().position(|s| matches!(s, Slot::Prepared { .. })));
        match taken {
            Some(i) => {
                self.slots[i] = Slot::Device { owner, token: 0 };
                Start::Claimed(i)
            }
            None => Start::None,
        }
    }

    /// The request in flight on buffer `slot` completed. `read_ok`: the bytes of a read that
    /// completed without any error, else `None`. A read prepared in `pre_req` keeps its buffer
    /// for `post_req` (returns `true`); otherwise the buffer is freed (the caller copied what
    /// it had to before).
    pub(crate) fn finish(&mut self, slot: usize, read_ok: Option<u32>) -> bool {
        let now = self.get(slot);
        let Slot::Device { owner, token } = now else {
            return false;
        };
        match read_ok {
            Some(len) if token > 0 && len > 0 => {
                self.change(slot, now, Slot::ReadDone { owner, token, len })
            }
            _ => {
                self.change(slot, now, Slot::Free);
                false
            }
        }
    }

    /// Whether the request in flight on `slot` keeps its buffer after a read without error.
    pub(crate) fn defers_copy_out(&self, slot: usize) -> bool {
        matches!(self.get(slot), Slot::Device { token, .. } if token > 0)
    }

    /// `post_req` for `owner`, whose cookie is `cookie`.
    pub(crate) fn post(&mut self, owner: usize, cookie: i32) -> Post {
        let mut post = Post::Nothing;
        for (i, s) in self.live().iter_mut().enumerate() {
            match *s {
                Slot::ReadDone {
                    owner: o,
                    token,
                    len,
                } if o == owner && token == cookie => {
                    *s = Slot::Cpu;
                    post = Post::CopyOut { slot: i, len };
                }
                Slot::Prepared { owner: o, .. } | Slot::ReadDone { owner: o, .. } if o == owner => {
                    *s = Slot::Free;
                }
                _ => {}
            }
        }
        post
    }

    /// The CPU is done with buffer `slot` (or `pre_req` could not fill it).
    pub(crate) fn free(&mut self, slot: usize) {
        self.change(slot, Slot::Cpu, Slot::Free);
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "slots/tests.rs"]
mod tests;
