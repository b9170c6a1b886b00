//! Seed 003: a tree of small files made, walked and copied (rsync -a),
//! with a cold and a warm cache: time, device reads and writes, inodes.

use super::{Lab, LabCtx, Outcome};
use crate::error::Result;
use crate::explain::{self, evidence::Evidence};
use crate::render::chart::Chart;
use crate::render::table::{Table, fig};
use crate::sys::environment::Environment;
use crate::sys::pagecache;
use crate::tree::{self, Shape, TreeResult, create::CreateOptions};

/// One line for `lab list`.
pub const ABOUT: &str = "seed 003: tree create, walk and copy (rsync -a) of small files, cold vs warm cache: time, reads, writes, inodes";

/// What the lab does, for `lab metadata --help`.
pub const DETAILS: &str = "Makes (and syncs, timed) an fdtree-shaped tree of 4 KiB files (D=10 L=3 F=10: 1,111 directories and \
         11,110 files; quick D=5 L=2 F=20: 31 and 620; --ops sets F), syncs, then walks it \
         and copies it with a cold cache (drop_caches as root, else the files' pages \
         evicted) and again warm. Reports time, ops/s, device reads and writes and inodes \
         per step, like seed 003's tables.";

/// The metadata lab.
pub struct Metadata;

/// Empties the page cache, dentries and inodes (root), else evicts the
/// files' data pages; says which.
fn make_cold(dir: &std::path::Path) -> Result<&'static str> {
    if pagecache::drop_all().is_ok() {
        return Ok("dropped page cache, dentries and inodes (drop_caches=3)");
    }
    pagecache::evict_all(&[dir.to_path_buf()])?;
    Ok("not root: evicted file data only (dentries and inodes stay cached)")
}

fn dev(t: &TreeResult, f: fn(&crate::counters::DiskDelta) -> u64) -> u64 {
    t.phases
        .iter()
        .flat_map(|p| p.counters.disks.iter())
        .map(f)
        .sum()
}

impl Lab for Metadata {
    fn details(&self) -> &'static str {
        DETAILS
    }

    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome> {
        let (dirs, levels, files) = if ctx.quick { (5, 2, 20) } else { (10, 3, 10) };
        let shape = Shape {
            dirs,
            levels,
            files: ctx.ops.unwrap_or(files),
            size: 4096,
            bs: 4096,
        };
        let src = ctx.dir.join("tree");
        let opts = CreateOptions {
            shared_rank: None,
            shape,
            threads: 1,
            fsync: false,
            time_limit_ns: None,
            sync: true,
        };
        ctx.say(&format!(
            "metadata: creating {} directories and {} files",
            shape.total_dirs(),
            shape.total_files()
        ));
        let mut steps: Vec<(String, &'static str, TreeResult)> = Vec::new();
        let created = tree::create::create(&src, &opts, ctx.stop)?;
        steps.push(("create".into(), "-", created));
        let mut how = "";
        for (round, state) in [(0, "cold"), (1, "warm")] {
            if round == 0 {
                ctx.say("metadata: emptying the cache");
                how = make_cold(&ctx.dir)?;
            }
            ctx.say(&format!("metadata: walk ({state})"));
            let w = tree::walk::walk(&src, false, 1, None, ctx.stop)?;
            steps.push(("walk".into(), state, w));
            if round == 0 {
                make_cold(&ctx.dir)?;
            }
            ctx.say(&format!("metadata: copy ({state})"));
            let c = tree::copy::copy(
                &src,
                &ctx.dir.join(format!("copy-{state}")),
                128 << 10,
                None,
                ctx.stop,
            )?;
            steps.push(("copy".into(), state, c));
        }
        let mut t = Table::new([
            "step", "cache", "time (s)", "ops/s", "reads", "writes", "inodes", "run",
        ]);
        let mut runs = Vec::new();
        for (name, state, r) in &steps {
            let id = ctx.store_tree(r)?;
            runs.extend(id);
            let s = r.summary();
            t.push(vec![
                name.clone(),
                state.to_string(),
                fig(s.get("time_s")),
                fig(s.get("iops")),
                dev(r, |d| d.read_ios).to_string(),
                dev(r, |d| d.write_ios).to_string(),
                r.inodes().to_string(),
                id.map(|i| i.to_string()).unwrap_or_default(),
            ]);
        }
        let time = |i: usize| steps[i].2.summary().get("time_s");
        let mut o = Outcome::new(
            ctx.lab,
            "Metadata: create, walk and copy, cold vs warm (seed 003)",
            t,
        );
        o.setup = vec![
            format!(
                "tree {}: D={} L={} F={} of 4 KiB ({} directories, {} files)",
                src.display(),
                shape.dirs,
                shape.levels,
                shape.files,
                shape.total_dirs(),
                shape.total_files()
            ),
            format!("cold: {how}"),
        ];
        // The answer is the explanation of the warm walk against the cold one.
        let env = Environment::capture(std::slice::from_ref(&src), crate::disk::state::injected_at);
        let why = |i: usize, name: &str| {
            let found = (ctx.store.as_deref())
                .and_then(|st| explain::ceilings::find(st, &env).ok())
                .unwrap_or_default();
            explain::explain(Evidence::of_tree(&steps[i].2, &env), found, None).named(name)
        };
        o.answer = format!(
            "Walking {} entries took {} s cold and {} s warm; copying {} s cold and {} s warm. {}",
            steps[1].2.inodes(),
            fig(time(1)),
            fig(time(3)),
            fig(time(2)),
            fig(time(4)),
            explain::diff::explain_diff(why(1, "the cold walk"), why(3, "the warm walk"))
                .sentences()
                .join(" ")
        );
        o.charts.push((
            "metadata-time".into(),
            Chart::Bars {
                title: "Time per step, cold vs warm".into(),
                x_label: "step".into(),
                y_label: "time (s)".into(),
                categories: vec!["walk".into(), "copy".into()],
                series: vec![
                    ("cold".into(), vec![time(1), time(2)], None),
                    ("warm".into(), vec![time(3), time(4)], None),
                ],
            },
        ));
        o.runs = runs;
        Ok(o)
    }
}
