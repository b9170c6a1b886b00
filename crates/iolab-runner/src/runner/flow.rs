//! fio's token flow between jobs (`flow`, `flow_id`, `flow_sleep`; fio's
//! `flow.c`): the clones of one `flow_id` share a counter of I/Os and the
//! sum of their weights; a clone whose share of the counter is above its
//! share of the weights is held back until the others catch up. A clone
//! joins when it is prepared (before any clone starts, as fio adds every
//! job's weight when it reads the job) and leaves when it is dropped,
//! taking its I/Os and weight out, so the others are not held back by a
//! clone that ended.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One flow: the I/Os counted in it (from 1, as fio) and its weights.
#[derive(Debug)]
struct Flow {
    counter: AtomicU64,
    weight: AtomicU64,
}

/// The flows of one set of clones running together, by `flow_id`.
#[derive(Debug, Default)]
pub struct Flows(Mutex<HashMap<u64, Arc<Flow>>>);

impl Flows {
    /// A clone with `weight` (fio's `flow`) joins flow `id`; `None` for a
    /// weight of 0 (not in a flow).
    pub fn join(&self, id: u64, weight: u64, sleep_us: u64) -> Option<FlowMember> {
        if weight == 0 {
            return None;
        }
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let flow = Arc::clone(map.entry(id).or_insert_with(|| {
            Arc::new(Flow {
                counter: AtomicU64::new(1),
                weight: AtomicU64::new(0),
            })
        }));
        flow.weight.fetch_add(weight, Ordering::Relaxed);
        Some(FlowMember {
            flow,
            weight,
            mine: 0,
            sleep_us,
        })
    }
}

/// A clone's place in its flow.
#[derive(Debug)]
pub struct FlowMember {
    flow: Arc<Flow>,
    weight: u64,
    mine: u64,
    /// fio's `flow_sleep`: how long to sleep when held back (0: spin).
    pub sleep_us: u64,
}

impl FlowMember {
    /// This clone's share of the flow's I/Os is above its share of the
    /// weights.
    pub fn would_hold(&self) -> bool {
        let counter = self.flow.counter.load(Ordering::Relaxed) as f64;
        let total = self.flow.weight.load(Ordering::Relaxed) as f64;
        self.mine as f64 / counter > self.weight as f64 / total
    }

    /// fio's `flow_threshold_exceeded`: true when this clone must wait;
    /// otherwise its next I/O is counted.
    pub fn held_back(&mut self) -> bool {
        if self.would_hold() {
            return true;
        }
        self.flow.counter.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        false
    }
}

impl Drop for FlowMember {
    fn drop(&mut self) {
        self.flow.counter.fetch_sub(self.mine, Ordering::Relaxed);
        self.flow.weight.fetch_sub(self.weight, Ordering::Relaxed);
    }
}
