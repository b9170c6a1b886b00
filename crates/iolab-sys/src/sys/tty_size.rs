//! The size of the terminal stdout is, for tables that fit it.

/// Columns of the terminal on stdout, or `None` when stdout is not a
/// terminal (or says it has no width).
///
/// # Safety
/// Safe to call: the one `unsafe` call, `ioctl(TIOCGWINSZ)`, writes only
/// the `winsize` this function owns.
pub fn columns() -> Option<u16> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which
    // points to a live, properly aligned `winsize` owned by this frame.
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(ws.ws_col)
}
