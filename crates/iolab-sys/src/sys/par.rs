//! Many small blocking calls at once (unlinking thousands of files on a
//! disk mounted with `discard` takes milliseconds each; side by side it is
//! quick enough that Ctrl-C still ends a run within a second).

/// Threads used at most.
const THREADS: usize = 16;
/// Below this many items one thread does it all.
const SERIAL_BELOW: usize = 32;

/// `f` of every item, in order, computed on up to 16 threads.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < SERIAL_BELOW {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(THREADS);
    let f = &f;
    let work = move |part: &[T]| part.iter().map(f).collect::<Vec<R>>();
    std::thread::scope(|s| {
        // A thread that cannot be started leaves its part to this one.
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                std::thread::Builder::new()
                    .spawn_scoped(s, move || work(part))
                    .map_err(|_| part)
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                Err(part) => work(part),
            })
            .collect()
    })
}
