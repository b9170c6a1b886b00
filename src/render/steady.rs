//! fio's steady-state report of a job: the JSON `steadystate` object and
//! the `steadystate  :` line of the normal output, as fio's stat.c writes
//! them.

use crate::metrics::format::{bytes_iec, si};
use crate::runner::steady::SteadyOut;
use serde_json::{Value, json};

/// `%f` of a C float, as fio prints its criterion.
fn c_float(v: f64) -> String {
    if v.is_nan() {
        "-nan".into()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.into()
    } else {
        format!("{:.6}", v as f32)
    }
}

/// fio's JSON `steadystate` object.
pub fn json(ss: &SteadyOut) -> Value {
    let pct = if ss.spec.pct { "%" } else { "" };
    let (bw, iops) = ss.in_order();
    json!({
        "ss": ss.spec.text(),
        "duration": ss.spec.dur_s,
        "attained": u8::from(ss.attained),
        "criterion": format!("{}{pct}", c_float(ss.criterion)),
        "max_deviation": ss.deviation,
        "slope": ss.slope,
        "data": {
            "bw_mean": ss.bw_mean(),
            "iops_mean": ss.iops_mean(),
            "iops": iops,
            "bw": bw,
        },
    })
}

/// fio's line of the normal output.
pub fn line(ss: &SteadyOut) -> String {
    format!(
        "  steadystate  : attained={}, bw={}/s, iops={}, {}{}={:.3}{}\n",
        if ss.attained { "yes" } else { "no" },
        bytes_iec(ss.bw_mean() as f64),
        si(ss.iops_mean() as f64),
        if ss.spec.bw { "bw" } else { "iops" },
        if ss.spec.slope { " slope" } else { " mean dev" },
        ss.criterion,
        if ss.spec.pct { "%" } else { "" }
    )
}
