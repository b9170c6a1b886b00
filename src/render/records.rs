//! Stored runs as typed records, one per run, for machines: `export
//! --format csv`, `history --format csv|json`. Every value comes from the
//! stored data (never from a display string): ids and counts as integers,
//! figures with every digit, names from [`crate::metrics::names`]. The
//! columns up to the figures, less the job's (`rw`, `bs_bytes`, `engine`,
//! `iodepth`), are those of the database view `v_runs` (docs/schema.md).

use crate::job::JobSpec;
use crate::metrics::figures::Figures;
use crate::metrics::names::{FigureColumn, Number, figure_columns};
use crate::runner::RunResult;
use crate::runner::summary::{direction_figures, figures};
use crate::store::{StoreError, StoredRun, kind};
use serde::Deserialize;
use serde_json::Value;

/// One value of a record.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Not measured, or not known.
    Null,
    /// A whole number.
    Int(i64),
    /// A real number (finite).
    Real(f64),
    /// Text.
    Text(String),
}

impl Cell {
    /// As CSV writes it: empty for `Null`, reals in the shortest form
    /// that reads back to the same `f64`.
    pub fn csv(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Int(i) => i.to_string(),
            Cell::Real(x) => x.to_string(),
            Cell::Text(s) => s.clone(),
        }
    }

    /// As JSON.
    pub fn json(&self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Int(i) => (*i).into(),
            Cell::Real(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
            Cell::Text(s) => s.clone().into(),
        }
    }

    fn opt_text(s: Option<&str>) -> Cell {
        s.map_or(Cell::Null, |s| Cell::Text(s.to_string()))
    }
}

impl From<Option<Number>> for Cell {
    fn from(n: Option<Number>) -> Cell {
        match n {
            None => Cell::Null,
            Some(Number::Int(i)) => Cell::Int(i),
            Some(Number::Real(x)) => Cell::Real(x),
        }
    }
}

/// The columns before the figures, in order.
pub const RUN_COLUMNS: [&str; 14] = [
    "id",
    "created_unix",
    "created_utc",
    "label",
    "kind",
    "status",
    "job",
    "sweep_id",
    "point",
    "reps",
    "rw",
    "bs_bytes",
    "engine",
    "iodepth",
];

/// The columns that come from the stored job rather than from `v_runs`.
pub const JOB_COLUMNS: [&str; 4] = ["rw", "bs_bytes", "engine", "iodepth"];

/// Rows of typed values under named columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    /// Column names.
    pub columns: Vec<String>,
    /// One row per run, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
}

/// Only the jobs of a stored result (the rest is skipped unread).
#[derive(Deserialize)]
struct Jobs {
    #[serde(default)]
    jobs: Vec<JobSpec>,
}

/// The distinct values `f` gives over `jobs`, joined by `,`: one value
/// stays typed, several are text.
fn joined(jobs: &[JobSpec], f: impl Fn(&JobSpec) -> Cell) -> Cell {
    let mut vals: Vec<Cell> = Vec::new();
    for j in jobs {
        let v = f(j);
        if !vals.contains(&v) {
            vals.push(v);
        }
    }
    match vals.len() {
        0 => Cell::Null,
        1 => vals.remove(0),
        _ => Cell::Text(vals.iter().map(Cell::csv).collect::<Vec<_>>().join(",")),
    }
}

/// `rw`, `bs_bytes`, `engine` and `iodepth` of a stored run (null for a
/// tree command).
fn stored_job_cells(r: &StoredRun) -> Result<[Cell; 4], StoreError> {
    if r.kind == kind::TREE {
        return Ok([Cell::Null, Cell::Null, Cell::Null, Cell::Null]);
    }
    let jobs: Jobs = r.decode_as("stored jobs")?;
    Ok(job_cells(&jobs.jobs))
}

/// `rw`, `bs_bytes`, `engine` and `iodepth` of `j`.
fn job_cells(j: &[JobSpec]) -> [Cell; 4] {
    [
        joined(j, |j| Cell::Text(j.rw_name().to_string())),
        joined(j, |j| {
            if j.bs_min == j.bs_max {
                Cell::Int(j.bs_min as i64)
            } else {
                Cell::Text(format!("{}-{}", j.bs_min, j.bs_max))
            }
        }),
        joined(j, |j| Cell::Text(j.engine.clone())),
        joined(j, |j| Cell::Int(i64::from(j.iodepth))),
    ]
}

/// The point of a sweep as `key=value` pairs joined by spaces.
pub fn point_text(r: &StoredRun) -> Option<String> {
    r.point.as_ref().map(|p| {
        p.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The figure cells of `f`, one per column of `cols`.
fn figure_cells(cols: &[FigureColumn], f: &Figures) -> Vec<Cell> {
    cols.iter().map(|c| c.value(f).into()).collect()
}

/// The named figures of a run as a JSON object (null where not measured).
pub fn figures_json(f: &Figures) -> Value {
    Value::Object(
        figure_columns()
            .iter()
            .map(|c| (c.name.clone(), Cell::from(c.value(f)).json()))
            .collect(),
    )
}

impl Records {
    /// One record per stored run, in the order given.
    pub fn of_runs(runs: &[StoredRun]) -> Result<Records, StoreError> {
        let cols = figure_columns();
        let mut columns: Vec<String> = RUN_COLUMNS.iter().map(|c| c.to_string()).collect();
        columns.extend(cols.iter().map(|c| c.name.clone()));
        let mut rows = Vec::with_capacity(runs.len());
        for r in runs {
            let created = chrono::DateTime::from_timestamp(r.created_unix, 0)
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            let mut row = vec![
                Cell::Int(r.id),
                Cell::Int(r.created_unix),
                Cell::opt_text(created.as_deref()),
                Cell::opt_text(r.label.as_deref()),
                Cell::Text(r.kind.clone()),
                Cell::Text(r.status.to_string()),
                Cell::Text(r.name.clone()),
                r.sweep_id.map_or(Cell::Null, Cell::Int),
                Cell::opt_text(point_text(r).as_deref()),
                Cell::Int(r.summary.reps.len() as i64),
            ];
            row.extend(stored_job_cells(r)?);
            row.extend(figure_cells(&cols, &r.summary.total));
            rows.push(row);
        }
        Ok(Records { columns, rows })
    }

    /// One record per reported job of a run (`run` and `show` as CSV):
    /// what it was, then every named figure of its clones together.
    pub fn of_jobs(r: &RunResult) -> Records {
        let cols = figure_columns();
        let mut columns: Vec<String> = ["job", "clones", "rw", "bs_bytes", "engine", "iodepth"]
            .map(String::from)
            .to_vec();
        columns.extend(cols.iter().map(|c| c.name.clone()));
        let rows = r
            .entries()
            .iter()
            .map(|e| {
                let job = &r.jobs[e.job];
                let mut f = figures(&e.total, None);
                f.extend(direction_figures(&e.total));
                let [rw, bs, engine, depth] = job_cells(std::slice::from_ref(job));
                let mut row = vec![
                    Cell::Text(job.name.clone()),
                    Cell::Int(e.clones.len() as i64),
                    rw,
                    bs,
                    engine,
                    depth,
                ];
                row.extend(figure_cells(&cols, &f));
                row
            })
            .collect();
        Records { columns, rows }
    }

    /// CSV (RFC 4180), a header line then one line per record.
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns).expect("write to memory");
        for r in &self.rows {
            w.write_record(r.iter().map(Cell::csv))
                .expect("write to memory");
        }
        String::from_utf8(w.into_inner().expect("flush to memory")).expect("utf-8 cells")
    }

    /// A JSON array of objects, one per record.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                Value::Object(
                    self.columns
                        .iter()
                        .zip(r)
                        .map(|(c, v)| (c.clone(), v.json()))
                        .collect(),
                )
            })
            .collect();
        Value::Array(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_every_digit_and_their_type() {
        let x = 0.1 + 0.2;
        assert_eq!(Cell::Real(x).csv().parse::<f64>().unwrap(), x);
        assert_eq!(Cell::Int(7).csv(), "7");
        assert_eq!(Cell::Int(7).json(), serde_json::json!(7));
        assert!(Cell::Int(7).json().is_i64());
        assert_eq!(Cell::Real(x).json().as_f64(), Some(x));
        assert_eq!(Cell::Null.csv(), "");
        assert_eq!(Cell::Real(f64::NAN).json(), Value::Null);
    }
}
