//! `iolab plot`: one picture of a stored run, as SVG or PNG.

use super::{check_picture, db};
use iolab::Result;
use iolab::metrics::format::local_time;
use iolab::render::chart::ImageFormat;
use iolab::render::run_charts::{Picture, footnote, for_stored};
use std::path::PathBuf;

/// Options of `iolab plot`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab plot 12 --what ccdf -o tail.svg\n  iolab plot 12 --what log2 -o lat.png\n  iolab plot 12 --what percentiles -o p.svg\n  iolab plot 12 --what timeseries -o iops.png"
)]
pub struct PlotArgs {
    /// Run id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The picture.
    #[arg(long, value_enum, default_value = "log2")]
    pub what: Picture,
    /// Output file (.svg or .png).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab plot`.
pub fn execute(a: PlotArgs) -> Result<()> {
    check_picture("-o", &a.output)?;
    let run = a.db.open_read_only()?.run(db::parse_id(&a.id)?)?;
    let format = ImageFormat::of(&a.output)?;
    let picture = for_stored(&run, a.what)?.image(format, &footnote(&run, local_time))?;
    iolab::sys::fs::write_atomic(&a.output, &picture)?;
    eprintln!("iolab: wrote {}", a.output.display());
    Ok(())
}
