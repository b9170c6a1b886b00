//! The statistics of `iolab compare` (issue 35, point 7): below 3 runs a
//! side no p-value and no "significant" (the output says why), figures
//! that do not vary (calls, bytes) are exact and never "significant", one
//! run has no spread to show ("± 0.00" never appears), and the verdict
//! names the one figure it is on and agrees with that figure's row. The
//! Welch p-values are checked against SciPy's
//! `ttest_ind(a, b, equal_var=False)` on the same samples.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Cheap commands whose run times differ clearly.
const FAST: &str = "true";
const SLOW: &str = "sleep 0.01";

/// `compare --exec FAST SLOW --repeat N` into `db` (the sides stored as
/// runs 1 and 2): its text.
fn exec_compare(db: &Path, repeat: &str, extra: &[&str]) -> String {
    stdout_text(
        with_db(db)
            .args(["-q", "compare", "--exec", FAST, SLOW, "--repeat", repeat])
            .args(extra),
    )
}

/// What a text comparison printed below its header: the table's rows
/// (cells split at runs of two spaces) and the verdict line.
struct Printed {
    rows: Vec<Vec<String>>,
    verdict: String,
    body: String,
}

fn printed(out: &str) -> Printed {
    let body = out.split_once("\n\n").map_or(out, |(_, b)| b).to_string();
    let rows = body
        .lines()
        .skip(2) // column heads and their underline
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect();
    let verdict = body
        .lines()
        .find(|l| l.starts_with("verdict"))
        .unwrap_or_else(|| panic!("no verdict line:\n{out}"))
        .to_string();
    Printed {
        rows,
        verdict,
        body,
    }
}

/// The p-value as printed in `text` (`p=0.012`, `p<0.001`), if any.
fn p_text(text: &str) -> Option<&str> {
    let i = text.find("p=").or_else(|| text.find("p<"))?;
    let rest = &text[i..];
    Some(&rest[..rest.find([')', ';']).unwrap_or(rest.len())])
}

/// The judgement a verdict or a row's verdict cell comes to.
fn judgement(text: &str) -> &'static str {
    [
        "significant",
        "within noise",
        "under 1% change",
        "not tested",
        "exact values",
        "same",
    ]
    .into_iter()
    .find(|w| text.contains(w))
    .unwrap_or_else(|| panic!("no judgement in {text:?}"))
}

/// The verdict line names its figure (`verdict on time (s): ...`), and
/// says what that figure's row says: the same judgement, the same p, the
/// same direction.
fn assert_verdict_agrees(p: &Printed, figure: &str) {
    let want = format!("verdict on {figure}: ");
    assert!(
        p.verdict.starts_with(&want),
        "the verdict is not on {figure}: {}",
        p.verdict
    );
    let row = (p.rows.iter())
        .find(|r| r[0] == figure)
        .unwrap_or_else(|| panic!("no {figure} row:\n{}", p.body));
    let cell = row.last().unwrap();
    assert_eq!(
        judgement(&p.verdict),
        judgement(cell),
        "verdict {:?} against its row {cell:?}",
        p.verdict
    );
    assert_eq!(p_text(&p.verdict), p_text(cell), "{} / {cell}", p.verdict);
    if judgement(cell) == "significant" {
        // Time: lower is better, so "better" is "faster".
        let better = cell.contains("B better");
        assert_eq!(better, p.verdict.contains("times faster"), "{}", p.verdict);
    }
}

/// No p-value, no "significant", no "within noise" anywhere under the
/// header, and never "± 0.00".
fn assert_untested(p: &Printed) {
    for no in ["p=", "p<", "significant", "within noise", "± 0.00"] {
        assert!(
            !p.body.contains(no),
            "{no:?} below 3 runs a side:\n{}",
            p.body
        );
    }
}

/// Nothing tested, the verdict on time agreeing with its row, and saying
/// `why`.
fn assert_untested_on_time(p: &Printed, why: &str) {
    assert_untested(p);
    assert_verdict_agrees(p, "time (s)");
    assert!(p.verdict.contains(why), "{}", p.verdict);
}

/// `--repeat 2` and `--repeat 1`: every row and the verdict say "not
/// tested" and why; one run shows no spread (no "± 0.00", the sd cells
/// are no 0); the verdict is on the run time. The stored sides read back
/// by id are judged the same way, and the JSON has null p-values with a
/// reason.
#[test]
fn below_three_runs_a_side_nothing_is_called_significant() {
    let (_d, db) = scratch_db();
    let out = exec_compare(&db, "2", &[]);
    let p = printed(&out);
    assert_untested_on_time(&p, "not tested: 2 runs per side, 3 needed");
    // Read back from the database: the same rule.
    let again = printed(&stdout_text(
        with_db(&db).args(["compare", "1", "2", "--all"]),
    ));
    assert_untested(&again);
    assert_verdict_agrees(&again, "time (s)");
    let v = stdout_json(with_db(&db).args(["compare", "1", "2", "-f", "json"]));
    let verdict = &v["verdict"];
    assert_eq!(verdict["metric"], "time_s", "{verdict}");
    assert_eq!(verdict["p"], Value::Null, "{verdict}");
    assert_eq!(verdict["significant"], false, "{verdict}");
    assert!(
        verdict["no_test_reason"]
            .as_str()
            .is_some_and(|r| r.contains("3 needed")),
        "{verdict}"
    );
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["welch"], Value::Null, "{r}");
        assert_eq!(r["significant"], false, "{r}");
        assert!(r["no_test_reason"].is_string(), "{r}");
    }

    let (_d1, db1) = scratch_db();
    let out = exec_compare(&db1, "1", &[]);
    let p = printed(&out);
    assert_untested_on_time(&p, "not tested: 1 run per side, 3 needed");
    assert!(
        p.verdict.contains("spread unknown") && !p.verdict.contains('±'),
        "{}",
        p.verdict
    );
    // One run: its sd is unknown, not 0.
    for r in &p.rows {
        assert!(
            r[2] != "0" && r[4] != "0",
            "sd of one run shown as 0: {r:?}"
        );
    }
}

/// `--repeat 3`: the run time is tested and the verdict, on the run time,
/// agrees with its row; the calls and bytes, which do not vary from run
/// to run, are exact: no p-value, never "significant". In JSON the
/// verdict's p, significance and outcome are its row's.
#[test]
fn three_runs_test_what_varies_and_the_verdict_is_its_rows() {
    let (_d, db) = scratch_db();
    let out = exec_compare(&db, "3", &[]);
    let p = printed(&out);
    assert!(!p.body.contains("± 0.00"), "{out}");
    assert_verdict_agrees(&p, "time (s)");
    let v = stdout_json(with_db(&db).args(["compare", "1", "2", "-f", "json"]));
    let verdict = &v["verdict"];
    let row = json_item(&v["rows"], "metric", verdict["metric"].as_str().unwrap());
    assert_eq!(verdict["metric"], "time_s", "{verdict}");
    assert_eq!(verdict["p"], row["welch"]["p"], "{verdict}\n{row}");
    assert_eq!(
        verdict["significant"], row["significant"],
        "{verdict}\n{row}"
    );
    assert_eq!(verdict["outcome"], row["outcome"], "{verdict}\n{row}");
    let mut exact = 0;
    for r in v["rows"].as_array().unwrap() {
        let still = r["a_sd"] == 0.0 && r["b_sd"] == 0.0;
        if !still {
            continue;
        }
        exact += 1;
        let words = r["verdict"].as_str().unwrap();
        assert_eq!(r["welch"], Value::Null, "no spread, yet a test: {r}");
        assert_eq!(r["significant"], false, "{r}");
        assert!(
            p_text(words).is_none() && !words.contains("significant"),
            "{r}"
        );
        assert!(r["no_test_reason"].is_string(), "{r}");
    }
    // `sh -c true` and `sh -c 'sleep 0.01'` make the same calls every run.
    assert!(exact >= 2, "no exact rows: {v:#}");
    let ops = (p.rows.iter()).find(|r| r[0] == "ops").unwrap();
    assert!(
        !ops.last().unwrap().contains("significant"),
        "ops called significant: {ops:?}"
    );
}

// Welch's p-values against SciPy's.

/// The Python with python3-scipy: Debian's, else `python3` on PATH.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// Normal samples from a fixed seed (xorshift64* and Box-Muller).
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn samples(&mut self, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let (u, v) = (self.uniform(), self.uniform());
                mean + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect()
    }
}

/// The sample sets: small and unequal sizes (2 to 5 a side), larger ones,
/// far apart (a tiny p), a side that does not vary, and neither side
/// varying.
fn sample_sets() -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut g = Normal(0x9e37_79b9_7f4a_7c15);
    let mut sets = Vec::new();
    for (na, nb, ma, mb, sa, sb) in [
        (3, 3, 10.0, 10.5, 1.0, 1.0),
        (3, 3, 0.002, 0.017, 0.001, 0.001),
        (3, 5, 100.0, 104.0, 2.0, 6.0),
        (4, 7, 1.0, 1.2, 0.1, 0.3),
        (5, 5, 50.0, 50.0, 5.0, 5.0),
        (5, 3, 7.0, 3.0, 0.5, 2.5),
        (2, 2, 1.0, 2.0, 0.2, 0.2),
        (2, 4, 1.0, 1.5, 0.5, 0.1),
        (10, 4, 20.0, 25.0, 3.0, 1.0),
        (30, 25, 0.0, 0.3, 1.0, 1.5),
        (50, 50, 10.0, 11.0, 0.5, 0.5),
        (200, 150, 3.0, 3.02, 0.1, 0.1),
    ] {
        sets.push((g.samples(na, ma, sa), g.samples(nb, mb, sb)));
    }
    sets.push((vec![5.0; 3], g.samples(4, 5.5, 0.5)));
    sets.push((vec![9.0; 3], vec![19.0; 3]));
    sets.push((vec![2.0; 4], vec![2.0; 3]));
    sets
}

/// SciPy's (t, p) of each set; NaN where SciPy gives NaN.
fn scipy(sets: &[(Vec<f64>, Vec<f64>)]) -> Vec<(f64, f64)> {
    let script = [
        "import json, sys, warnings",
        "warnings.simplefilter('ignore')",
        "from scipy.stats import ttest_ind",
        "out = []",
        "for a, b in json.load(sys.stdin):",
        "    r = ttest_ind(a, b, equal_var=False)",
        "    out.append([repr(float(r.statistic)), repr(float(r.pvalue))])",
        "print(json.dumps(out))",
    ]
    .join("\n");
    let mut child = std::process::Command::new(python())
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start python3");
    let input = serde_json::to_vec(sets).unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "scipy script failed");
    let v: Vec<(String, String)> = serde_json::from_slice(&out.stdout).unwrap();
    let num = |s: &str| match s {
        "nan" => f64::NAN,
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        _ => s.parse().unwrap(),
    };
    v.iter().map(|(t, p)| (num(t), num(p))).collect()
}

/// Within 1e-6 of `want`, relative: a small p too (p = 5.6e-12 is one of
/// the sets; 2·(1 - cdf(|t|)) got it only to 4e-6).
fn close(x: f64, want: f64) -> bool {
    (x - want).abs() <= 1e-6 * want.abs().max(f64::MIN_POSITIVE)
}

/// iolab's Welch test on each sample set against SciPy's
/// `ttest_ind(a, b, equal_var=False)`: t and the two-sided p agree within
/// 1e-6 relative (they agree to 1e-12). Where neither side varies SciPy's t is
/// infinite or NaN: iolab makes no test (the values are exact).
#[test]
fn welch_p_values_match_scipy() {
    let ok = std::process::Command::new(python())
        .args(["-c", "import scipy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "SKIP welch_p_values_match_scipy: python3-scipy is not installed (.ci/run installs it)"
        );
        return;
    }
    let sets = sample_sets();
    let want = scipy(&sets);
    let mut checked = 0;
    for ((a, b), (t, p)) in sets.iter().zip(want) {
        let got = iolab::analysis::stats::welch(a, b);
        if !t.is_finite() {
            assert!(
                got.is_none(),
                "SciPy's t is {t} (no spread), iolab tested: {got:?}\n{a:?}\n{b:?}"
            );
            continue;
        }
        let w = got.unwrap_or_else(|| panic!("no test of\n{a:?}\n{b:?}"));
        assert!(close(w.t, t), "t {} against SciPy's {t}: {a:?} {b:?}", w.t);
        assert!(close(w.p, p), "p {} against SciPy's {p}: {a:?} {b:?}", w.p);
        checked += 1;
    }
    assert!(checked >= 12, "{checked} sets checked");
}
