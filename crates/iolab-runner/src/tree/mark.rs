//! The mark iolab puts on the top directory of a tree it made, so that
//! `tree remove` never deletes a directory iolab did not create unless told.

use std::path::Path;

/// Attribute on the top directory of an iolab tree.
pub const TREE_XATTR: &str = "user.iolab.tree";

/// Marks `dir` as an iolab tree.
pub fn set(dir: &Path) -> std::io::Result<()> {
    crate::sys::xattr::set(dir, TREE_XATTR, b"1")
}

/// True when `dir` is the top of a tree iolab made.
pub fn is_ours(dir: &Path) -> bool {
    crate::sys::xattr::has(dir, TREE_XATTR)
}
