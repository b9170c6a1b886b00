//! Pictures with plotters: line charts (sweep curves, time series,
//! percentile curves) and grouped bars (log2 latency histograms, A/B
//! comparisons), as SVG text (for reports) or SVG/PNG files. The DejaVu
//! Sans font is embedded, so PNG text renders on a machine without fonts.

use crate::error::{Error, Result};
use crate::metrics::LatencyHistogram;
use crate::metrics::histogram::FIO_PERCENTILES;
use crate::sys::fs::{write_atomic, write_atomic_with};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// Registered under the generic name, so SVG text asks browsers for a
/// sans-serif face too.
const FAMILY: &str = "sans-serif";
const SIZE: (u32, u32) = (900, 520);
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The embedded font's family, registered on first use.
pub(super) fn font() -> &'static str {
    static REG: Once = Once::new();
    REG.call_once(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("embedded font is valid"));
    });
    FAMILY
}

/// A named line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

/// A picture to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// Lines with markers.
    Lines {
        /// Caption.
        title: String,
        /// x axis label.
        x_label: String,
        /// y axis label.
        y_label: String,
        /// The lines.
        series: Vec<Series>,
        /// Names of categorical x positions 0, 1, 2... (None: numeric x).
        x_names: Option<Vec<String>>,
        /// Logarithmic x (numeric x only).
        log_x: bool,
        /// Logarithmic y.
        log_y: bool,
    },
    /// Grouped bars: one group per category, one bar per series.
    Bars {
        /// Caption.
        title: String,
        /// x axis label.
        x_label: String,
        /// y axis label.
        y_label: String,
        /// Category names.
        categories: Vec<String>,
        /// (series name, value per category, error per category).
        series: Vec<(String, Vec<f64>, Option<Vec<f64>>)>,
    },
}

impl Chart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String> {
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, SIZE).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(drawing)?;
        }
        Ok(s)
    }

    /// Writes the chart to `path`: `.svg` or `.png`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let shown = path.display();
        match ext.as_deref() {
            Some("svg") => write_atomic(path, self.svg()?.as_bytes()),
            Some("png") => write_atomic_with(path, |tmp| {
                let root = BitMapBackend::new(tmp.path(), SIZE).into_drawing_area();
                self.draw(&root)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                root.present()
                    .map_err(|e| std::io::Error::other(format!("plotters: {e}")))
            }),
            _ => Err(Error::usage(
                format!("plot file {shown}"),
                "name must end in .svg or .png",
            )),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let f = font();
        root.fill(&WHITE).map_err(drawing)?;
        match self {
            Chart::Lines {
                title,
                x_label,
                y_label,
                series,
                x_names,
                log_x,
                log_y,
            } => {
                let tx = |x: f64| if *log_x { x.max(1e-12).log10() } else { x };
                let ty = |y: f64| if *log_y { y.max(1e-12).log10() } else { y };
                let pts: Vec<(f64, f64)> = series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|&(x, y)| (tx(x), ty(y))))
                    .collect();
                let (x0, x1) = match x_names {
                    Some(n) => (-0.5, n.len() as f64 - 0.5),
                    None => pad(range(pts.iter().map(|p| p.0)), 0.03, false),
                };
                let (y0, y1) = pad(range(pts.iter().map(|p| p.1)), 0.08, !*log_y);
                let mut chart = ChartBuilder::on(root)
                    .caption(title, (f, 22))
                    .margin(18)
                    .x_label_area_size(48)
                    .y_label_area_size(80)
                    .build_cartesian_2d(x0..x1, y0..y1)
                    .map_err(drawing)?;
                let names = x_names.clone();
                // Integer parameters (numjobs, iodepth) get integer ticks only.
                let int_x = !*log_x
                    && series
                        .iter()
                        .all(|s| s.points.iter().all(|p| p.0.fract() == 0.0));
                let xfmt = move |v: &f64| match &names {
                    Some(n) => {
                        let i = v.round();
                        if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n.len() {
                            n[i as usize].clone()
                        } else {
                            String::new()
                        }
                    }
                    None if *log_x => tick(10f64.powf(*v)),
                    None if int_x && v.fract().abs() > 1e-9 => String::new(),
                    None => tick(*v),
                };
                // Over two decades or more, label whole powers of ten only.
                let decades = *log_y && y1 - y0 >= 2.0;
                let yfmt = move |v: &f64| {
                    if decades && (v - v.round()).abs() > 1e-9 {
                        String::new()
                    } else if *log_y {
                        tick(10f64.powf(*v))
                    } else {
                        tick(*v)
                    }
                };
                let n_x = x_names.as_ref().map_or(10, |n| n.len().min(16));
                chart
                    .configure_mesh()
                    .x_desc(x_label.as_str())
                    .y_desc(y_label.as_str())
                    .x_labels(n_x)
                    .x_label_formatter(&xfmt)
                    .y_label_formatter(&yfmt)
                    .label_style((f, 14))
                    .axis_desc_style((f, 16))
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(drawing)?;
                for (i, s) in series.iter().enumerate() {
                    let c = COLORS[i % COLORS.len()];
                    let line: Vec<(f64, f64)> =
                        s.points.iter().map(|&(x, y)| (tx(x), ty(y))).collect();
                    chart
                        .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
                        .map_err(drawing)?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                        });
                    chart
                        .draw_series(line.iter().map(|&p| Circle::new(p, 3, c.filled())))
                        .map_err(drawing)?;
                }
                if series.len() > 1 || series.iter().any(|s| !s.name.is_empty()) {
                    legend(&mut chart, f)?;
                }
            }
            Chart::Bars {
                title,
                x_label,
                y_label,
                categories,
                series,
            } => {
                let top = series
                    .iter()
                    .flat_map(|(_, v, e)| {
                        v.iter()
                            .enumerate()
                            .map(move |(i, y)| y + e.as_ref().map_or(0.0, |e| e[i]))
                    })
                    .fold(0.0f64, f64::max);
                let top = if top > 0.0 { top * 1.1 } else { 1.0 };
                let n = categories.len().max(1);
                let mut chart = ChartBuilder::on(root)
                    .caption(title, (f, 22))
                    .margin(18)
                    .x_label_area_size(48)
                    .y_label_area_size(80)
                    .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..top)
                    .map_err(drawing)?;
                let cats = categories.clone();
                let xfmt = move |v: &f64| {
                    let i = v.round();
                    if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                        cats[i as usize].clone()
                    } else {
                        String::new()
                    }
                };
                chart
                    .configure_mesh()
                    .x_desc(x_label.as_str())
                    .y_desc(y_label.as_str())
                    .x_labels(n.min(24))
                    .x_label_formatter(&xfmt)
                    .y_label_formatter(&|v| tick(*v))
                    .label_style((f, 13))
                    .axis_desc_style((f, 16))
                    .disable_x_mesh()
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(drawing)?;
                let k = series.len().max(1) as f64;
                let w = 0.8 / k;
                for (s, (name, vals, errs)) in series.iter().enumerate() {
                    let c = COLORS[s % COLORS.len()];
                    let left = |i: usize| i as f64 - 0.4 + s as f64 * w;
                    chart
                        .draw_series(vals.iter().enumerate().map(|(i, &v)| {
                            Rectangle::new([(left(i), 0.0), (left(i) + w * 0.92, v)], c.filled())
                        }))
                        .map_err(drawing)?
                        .label(name.as_str())
                        .legend(move |(x, y)| {
                            Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled())
                        });
                    if let Some(e) = errs {
                        chart
                            .draw_series(vals.iter().zip(e).enumerate().map(|(i, (&v, &e))| {
                                let mid = left(i) + w * 0.46;
                                PathElement::new(
                                    vec![(mid, (v - e).max(0.0)), (mid, v + e)],
                                    BLACK.stroke_width(2),
                                )
                            }))
                            .map_err(drawing)?;
                    }
                }
                if series.len() > 1 {
                    legend(&mut chart, f)?;
                }
            }
        }
        Ok(())
    }
}

type Xy =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;

/// A drawing failure of plotters, as iolab's error.
pub(super) fn drawing(e: impl std::fmt::Display) -> Error {
    Error::tool("plotters", e.to_string())
}

/// The legend box, top right.
fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Xy>,
    f: &str,
) -> Result<()> {
    chart
        .configure_series_labels()
        .label_font((f, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(drawing)
}

fn range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
}

/// Widens a range by `frac` on each side (from zero when `from_zero`).
fn pad((lo, hi): (f64, f64), frac: f64, from_zero: bool) -> (f64, f64) {
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let lo = if from_zero { lo.min(0.0) } else { lo };
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    (
        if from_zero && lo >= 0.0 {
            0.0
        } else {
            lo - span * frac
        },
        hi + span * frac,
    )
}

/// A short axis number: 1.5k, 2M, 0.25.
pub(super) fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        trim(format!("{:.3}", v / 1e9)) + "G"
    } else if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        // Three significant digits, so close small ticks stay distinct.
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// log2 latency histograms (dtrace's quantize) of several operations as
/// grouped bars, one group per power-of-two bucket.
pub fn log2_histogram(title: &str, hists: &[(&str, &LatencyHistogram)]) -> Chart {
    let mut lo = u64::MAX;
    let mut hi = 0;
    for (_, h) in hists {
        for (b, c) in h.log2_buckets() {
            if c > 0 {
                lo = lo.min(b);
                hi = hi.max(b);
            }
        }
    }
    let mut buckets = Vec::new();
    if hi > 0 {
        let mut b = lo.max(1);
        while b <= hi {
            buckets.push(b);
            b *= 2;
        }
    }
    let series = hists
        .iter()
        .map(|(name, h)| {
            let m: std::collections::BTreeMap<u64, u64> = h.log2_buckets().into_iter().collect();
            (
                name.to_string(),
                buckets
                    .iter()
                    .map(|b| m.get(b).copied().unwrap_or(0) as f64)
                    .collect(),
                None,
            )
        })
        .collect();
    Chart::Bars {
        title: title.into(),
        x_label: "latency (lower bound of power-of-two bucket)".into(),
        y_label: "operations".into(),
        categories: buckets.iter().map(|b| ns_name(*b)).collect(),
        series,
    }
}

/// Latency against percentile (fio's percentile list), log scale.
pub fn percentile_curve(title: &str, hists: &[(&str, &LatencyHistogram)]) -> Chart {
    let pcts: Vec<f64> = FIO_PERCENTILES
        .iter()
        .copied()
        .filter(|p| *p >= 10.0)
        .collect();
    Chart::Lines {
        title: title.into(),
        x_label: "percentile".into(),
        y_label: "latency (us)".into(),
        series: hists
            .iter()
            .filter(|(_, h)| h.count() > 0)
            .map(|(name, h)| Series {
                name: name.to_string(),
                points: pcts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, h.percentile(*p) as f64 / 1000.0))
                    .collect(),
            })
            .collect(),
        x_names: Some(pcts.iter().map(|p| format!("{p}")).collect()),
        log_x: false,
        log_y: true,
    }
}

/// `1536` → `1.5us`: a nanosecond figure in the largest fitting unit.
pub fn ns_name(ns: u64) -> String {
    let v = ns as f64;
    if v >= 1e9 {
        trim(format!("{:.1}", v / 1e9)) + "s"
    } else if v >= 1e6 {
        trim(format!("{:.1}", v / 1e6)) + "ms"
    } else if v >= 1e3 {
        trim(format!("{:.1}", v / 1e3)) + "us"
    } else {
        format!("{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_title_axis_labels_and_data() {
        let c = Chart::Lines {
            title: "IOPS vs numjobs".into(),
            x_label: "numjobs".into(),
            y_label: "IOPS".into(),
            series: vec![Series {
                name: "iops".into(),
                points: vec![(1.0, 1000.0), (2.0, 1900.0), (4.0, 3500.0)],
            }],
            x_names: None,
            log_x: false,
            log_y: false,
        };
        let svg = c.svg().unwrap();
        for s in [
            ">\nIOPS vs numjobs\n<",
            ">\nnumjobs\n<",
            ">\nIOPS\n<",
            "<polyline",
            "<circle",
            "font-family=\"sans-serif\"",
        ] {
            assert!(svg.contains(s), "missing {s}");
        }
    }

    #[test]
    fn ticks_and_names() {
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(25000.0), "25k");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.035), "0.035");
        assert_eq!(tick(0.0125), "0.0125");
        assert_eq!(tick(2.5e9), "2.5G");
        assert_eq!(ns_name(1536), "1.5us");
        assert_eq!(ns_name(2_097_152), "2.1ms");
    }
}
