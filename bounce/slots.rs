// SPDX-License-Identifier: GPL-2.0

//! Who holds which bounce buffer when there are two.
//!
//! The pure state machine of the [`Bouncer`](super::Bouncer)'s double buffering, also built on the
//! host for `cargo test`. (With one buffer, the buffer is taken at a request's start and freed at
//! its completion.)
//!
//! The MMC core prepares request N+1 (`pre_req`) while N is in flight and cleans N up
//! (`post_req`) after N+1 has started. With two buffers a write's data is copied into a free
//! buffer in `pre_req`, and a read's data stays in its buffer after completion and is copied
//! out in `post_req`, both while the controller moves the other buffer. The rules:
//!
//! - A buffer the controller has ([`State::Device`]) or the CPU is copying ([`State::Cpu`]) is
//!   never handed to anyone else.
//! - A request is known by its address (`owner`) and a token the driver wrote into its
//!   `host_cookie` in `pre_req`, always positive: 0 is the core's value and -1 marks a mapping
//!   made by `kernel::dma::pre_map`. The core zeroes the cookie when it prepares the same request
//!   again (error recovery reuses it), so state left for an owner whose cookie no longer
//!   matches is stale and dropped without copying.
//! - Only a read that completed without any error waits for `post_req`
//!   ([`State::ReadDone`]); every other completion frees its buffer at once.
//! - A request that needs a buffer at start and finds none free takes one that was prepared
//!   for another request (that request copies its data again when it starts); it never takes
//!   read data that waits for `post_req`.

use super::MAX_BUFFERS;

/// One of a host's bounce buffers.
///
/// An index below [`MAX_BUFFERS`], made only here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot(usize);

impl Slot {
    /// Returns the buffer's index, from 0.
    pub(crate) fn index(self) -> usize {
        self.0
    }

    /// Returns the buffer's bit in a set of buffers (`1 << index`).
    pub(crate) fn bit(self) -> u32 {
        u32::try_from(self.0)
            .ok()
            .and_then(|i| 1u32.checked_shl(i))
            .unwrap_or(0)
    }

    /// Returns the buffers whose bits are set in `mask`.
    pub(crate) fn in_mask(mask: u32) -> impl Iterator<Item = Slot> {
        (0..MAX_BUFFERS)
            .map(Slot)
            .filter(move |s| mask & s.bit() != 0)
    }
}

/// What one bounce buffer is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
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
    /// A read of `len` bytes completed without error.
    ///
    /// Its data waits for `post_req`.
    ReadDone {
        /// The request's address.
        owner: usize,
        /// The token in the request's `host_cookie`.
        token: i32,
        /// Bytes read.
        len: u32,
    },
}

impl State {
    fn owner(&self) -> Option<usize> {
        match *self {
            State::Prepared { owner, .. }
            | State::Device { owner, .. }
            | State::ReadDone { owner, .. } => Some(owner),
            State::Free | State::Cpu => None,
        }
    }
}

/// How the request starting got its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// The buffer `pre_req` prepared for it (a write's data is in it already).
    Prepared(Slot),
    /// A buffer taken now.
    ///
    /// The data is copied as with a single buffer.
    Claimed(Slot),
    /// No buffer can be taken (cannot happen with the MMC core's ordering; the request fails).
    None,
}

impl Start {
    /// Returns the buffer taken, and whether `pre_req` prepared it.
    ///
    /// `None` if none could be.
    pub(crate) fn taken(self) -> Option<(Slot, bool)> {
        match self {
            Start::Prepared(slot) => Some((slot, true)),
            Start::Claimed(slot) => Some((slot, false)),
            Start::None => None,
        }
    }
}

/// What `post_req` finds for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Post {
    /// Its read data, `len` bytes in buffer `slot` (now [`State::Cpu`]).
    ///
    /// Copy it out, then [`Slots::free`].
    CopyOut {
        /// The buffer.
        slot: Slot,
        /// Bytes to copy.
        len: u32,
    },
    /// Nothing to copy (a prepared buffer it never used was freed, or nothing was held).
    Nothing,
}

/// The state of a host's bounce buffers.
#[derive(Debug)]
pub(crate) struct Slots {
    slots: [State; MAX_BUFFERS],
    /// How many of `slots` are buffers that exist.
    count: usize,
    last_token: i32,
}

impl Slots {
    /// Creates `count` free buffers (at most [`MAX_BUFFERS`]).
    pub(crate) const fn new(count: usize) -> Self {
        Self {
            slots: [State::Free; MAX_BUFFERS],
            count: if count > MAX_BUFFERS {
                MAX_BUFFERS
            } else {
                count
            },
            last_token: 0,
        }
    }

    /// Returns the buffers that exist.
    fn live(&mut self) -> &mut [State] {
        &mut self.slots[..self.count]
    }

    /// Returns the state of buffer `slot` (`Free` for one that does not exist).
    pub(crate) fn get(&self, slot: Slot) -> State {
        self.slots.get(slot.0).copied().unwrap_or(State::Free)
    }

    /// Sets buffer `slot` to `to` if it is `from` now.
    ///
    /// `false` if not (or no such buffer).
    fn change(&mut self, slot: Slot, from: State, to: State) -> bool {
        match self.slots.get_mut(slot.0) {
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
            if s.owner() == Some(owner) && !matches!(s, State::Device { .. }) {
                *s = State::Free;
            }
        }
    }

    /// Takes a free buffer for `owner` (`pre_req`) and returns it, now [`State::Cpu`], with the
    /// token for the request's cookie.
    ///
    /// `None` if all are in use.
    pub(crate) fn prepare(&mut self, owner: usize) -> Option<(Slot, i32)> {
        self.drop_stale(owner);
        let i = self.live().iter().position(|s| *s == State::Free)?;
        self.slots[i] = State::Cpu;
        Some((Slot(i), self.next_token()))
    }

    /// Marks buffer `slot` as prepared by `pre_req`.
    ///
    /// It is ready for `owner`'s start.
    pub(crate) fn prepared(&mut self, slot: Slot, owner: usize, token: i32) {
        self.change(slot, State::Cpu, State::Prepared { owner, token });
    }

    /// Gives the buffer for `owner`, whose cookie is `cookie`, to the controller (`request`).
    pub(crate) fn start(&mut self, owner: usize, cookie: i32) -> Start {
        let mine = State::Prepared {
            owner,
            token: cookie,
        };
        if cookie > 0 {
            if let Some(i) = self.live().iter().position(|s| *s == mine) {
                self.slots[i] = State::Device {
                    owner,
                    token: cookie,
                };
                return Start::Prepared(Slot(i));
            }
        }
        self.drop_stale(owner);
        let live = self.live();
        let free = live.iter().position(|s| *s == State::Free);
        let taken = free.or_else(|| {
            live.iter()
                .position(|s| matches!(s, State::Prepared { .. }))
        });
        match taken {
            Some(i) => {
                self.slots[i] = State::Device { owner, token: 0 };
                Start::Claimed(Slot(i))
            }
            None => Start::None,
        }
    }

    /// Records that the request in flight on buffer `slot` completed.
    ///
    /// `read_ok`: the bytes of a read that completed without any error, else `None`. A read
    /// prepared in `pre_req` keeps its buffer for `post_req` (returns `true`); otherwise the buffer
    /// is freed (the caller copied what it had to before).
    pub(crate) fn finish(&mut self, slot: Slot, read_ok: Option<u32>) -> bool {
        let now = self.get(slot);
        let State::Device { owner, token } = now else {
            return false;
        };
        match read_ok {
            Some(len) if token > 0 && len > 0 => {
                self.change(slot, now, State::ReadDone { owner, token, len })
            }
            _ => {
                self.change(slot, now, State::Free);
                false
            }
        }
    }

    /// Returns whether the request in flight on `slot` keeps its buffer after a read without error.
    pub(crate) fn defers_copy_out(&self, slot: Slot) -> bool {
        matches!(self.get(slot), State::Device { token, .. } if token > 0)
    }

    /// Handles `post_req` for `owner`, whose cookie is `cookie`.
    pub(crate) fn post(&mut self, owner: usize, cookie: i32) -> Post {
        let mut post = Post::Nothing;
        for (i, s) in self.live().iter_mut().enumerate() {
            match *s {
                State::ReadDone {
                    owner: o,
                    token,
                    len,
                } if o == owner && token == cookie => {
                    *s = State::Cpu;
                    post = Post::CopyOut { slot: Slot(i), len };
                }
                State::Prepared { owner: o, .. } | State::ReadDone { owner: o, .. }
                    if o == owner =>
                {
                    *s = State::Free;
                }
                _ => {}
            }
        }
        post
    }

    /// Frees buffer `slot` once the CPU is done with it (or `pre_req` could not fill it).
    pub(crate) fn free(&mut self, slot: Slot) {
        self.change(slot, State::Cpu, State::Free);
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "slots/tests.rs"]
mod tests;
