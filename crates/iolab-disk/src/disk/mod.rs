//! Injected disks (`iolab disk`): slow and faulty disks on demand, in user
//! space. [`rules`] says what to do with each operation ([`dist`]: how a
//! delay is drawn, [`bucket`]: bandwidth and IOPS caps); a [`gate::Gate`]
//! applies them and answers later through [`timer`]; an injector
//! ([`layer::INJECTORS`]: the block layer of [`layer::block`], [`block_fs`],
//! [`image`]; the file layer of [`layer::fs`], [`passthrough`]) puts a gate
//! under a mounted file system. [`daemon`] serves a
//! disk, [`client`] is what the commands call, [`state`] and [`control`]
//! connect the two.

pub mod block_fs;
pub mod bucket;
pub mod client;
pub mod control;
pub mod daemon;
pub mod dist;
pub mod error;
pub mod fuse;
pub mod gate;
pub mod hist;
pub mod image;
pub mod layer;
pub mod passthrough;
pub mod rules;
pub mod serving;
pub mod state;
pub mod timer;

pub use error::DiskError;
pub use layer::{INJECTORS, Injector, Mounted, Spec};
pub use rules::{Decision, Op, RuleError, Rules};
