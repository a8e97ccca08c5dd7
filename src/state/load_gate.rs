//! Which bundle load is current: the generation counter and abort handle every open takes.

use web_sys::{AbortController, AbortSignal};

/// Which bundle load is current. Every open (URL, file, drop, or a bundle made in the tab) takes a
/// [`LoadTicket`] from [`LoadGate::begin`], which numbers it one above the last (its generation) and
/// aborts the previous load's `AbortController`. When a load completes it asks [`LoadGate::settle`]
/// whether its generation is still the last one: if not, a later open superseded it and its result
/// (bytes, bundle or error) is dropped without touching the page.
#[derive(Debug, Default)]
pub struct LoadGate {
    generation: u64,
    controller: Option<AbortController>,
}

/// One open's place in the [`LoadGate`]: its generation and the signal that aborts its reading.
#[derive(Debug, Clone)]
pub struct LoadTicket {
    generation: u64,
    signal: Option<AbortSignal>,
}

impl LoadTicket {
    /// The open's number: 1 for the first open of the page, one more for each later one.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The signal that aborts this open's fetch or file read (`None` where the browser could not
    /// create an `AbortController`; the result is then still discarded when superseded).
    pub fn signal(&self) -> Option<&AbortSignal> {
        self.signal.as_ref()
    }
}

impl LoadGate {
    /// A new, empty gate (no open yet; generation 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts an open: aborts the load still in progress (if any) and returns the new current ticket.
    pub fn begin(&mut self) -> LoadTicket {
        if let Some(previous) = self.controller.take() {
            previous.abort();
        }
        self.generation += 1;
        let controller = AbortController::new().ok();
        let signal = controller.as_ref().map(AbortController::signal);
        self.controller = controller;
        LoadTicket {
            generation: self.generation,
            signal,
        }
    }

    /// Whether `ticket` is the last open begun.
    pub fn is_current(&self, ticket: &LoadTicket) -> bool {
        ticket.generation == self.generation
    }

    /// Ends `ticket`'s load. `true`: it is still the last open, its result is to be shown (and a later
    /// [`begin`](Self::begin) has nothing left to abort); `false`: a later open superseded it, its result
    /// is to be discarded.
    pub fn settle(&mut self, ticket: &LoadTicket) -> bool {
        let current = self.is_current(ticket);
        if current {
            self.controller = None;
        }
        current
    }

    /// The generation of the last open begun (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}
