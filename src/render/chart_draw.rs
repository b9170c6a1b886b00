//! Drawing a [`Chart`] with plotters: the plot area, a legend in a column
//! of its own right of the plot (so it never covers data), and the
//! footnote along the bottom; [`Chart::svg`] and [`Chart::image`] draw it
//! as an SVG document or the bytes of an image file.

use super::axis::{Axis, Scale};
use super::chart::{Chart, Footnote, SIZE, Series};
use super::image::{ImageFormat, drawing};
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// Registered under the generic name, so SVG text asks browsers for a
/// sans-serif face too.
const FAMILY: &str = "sans-serif";
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
/// Height of the footnote strip.
const FOOT: u32 = 22;
/// Lines with more points than this are drawn without markers.
const MARKERS_UP_TO: usize = 60;

impl Chart {
    /// The chart as an SVG document with `note` under it.
    pub fn svg(&self, note: &Footnote) -> Result<String> {
        super::image::svg(SIZE, |root| draw(self, root, note))
    }

    /// The chart as the bytes of a `format` file with `note` under it.
    pub fn image(&self, format: ImageFormat, note: &Footnote) -> Result<Vec<u8>> {
        match format {
            ImageFormat::Svg => Ok(self.svg(note)?.into_bytes()),
            ImageFormat::Png => super::image::png(SIZE, |root| draw(self, root, note)),
        }
    }
}

pub(super) fn font() -> &'static str {
    static REG: Once = Once::new();
    REG.call_once(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .unwrap_or_else(|_| panic!("embedded font is valid"));
    });
    FAMILY
}

type Area<'a, DB> = DrawingArea<DB, Shift>;
type Ctx<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// (name, value per category, error per category) of grouped bars.
type BarSeries = (String, Vec<f64>, Option<Vec<f64>>);

/// How a legend entry shows its series.
#[derive(Clone, Copy)]
enum Mark {
    Line,
    Block,
}

/// Draws `c` on `root` with `note` as its footnote.
fn draw<DB: DrawingBackend>(c: &Chart, root: &Area<DB>, note: &Footnote) -> Result<()> {
    let f = font();
    root.fill(&WHITE).map_err(drawing)?;
    let (w, h) = root.dim_in_pixel();
    let (main, foot) = root.split_vertically(h.saturating_sub(FOOT));
    foot.draw_text(
        &note.text(),
        &TextStyle::from((f, 12).into_font()).color(&RGBColor(110, 110, 110)),
        (10, 4),
    )
    .map_err(drawing)?;
    let (entries, mark) = match c {
        Chart::Lines { series, .. } => {
            (series.iter().map(|s| s.name.clone()).collect(), Mark::Line)
        }
        Chart::Bars { series, .. } => (series.iter().map(|s| s.0.clone()).collect(), Mark::Block),
        Chart::Counts { series, .. } => (series.iter().map(|s| s.0.clone()).collect(), Mark::Block),
    };
    let entries: Vec<String> = entries;
    let shown = entries.len() > 1;
    let area = if shown {
        let widest = entries.iter().map(|e| e.chars().count()).max().unwrap_or(0) as u32;
        let lw = (widest * 8 + 44).clamp(110, w / 3);
        let (plot, side) = main.split_horizontally(w - lw);
        legend(&side, &entries, mark)?;
        plot
    } else {
        main
    };
    match c {
        Chart::Lines {
            title,
            x_label,
            y_label,
            series,
            x_names,
            x_scale,
            y_scale,
        } => lines(
            &area,
            [title, x_label, y_label],
            series,
            x_names,
            *x_scale,
            *y_scale,
        ),
        Chart::Bars {
            title,
            x_label,
            y_label,
            categories,
            series,
        } => bars(
            &area,
            [title, x_label, y_label],
            categories,
            series,
            Scale::Linear,
        ),
        Chart::Counts {
            title,
            x_label,
            y_label,
            categories,
            series,
        } => {
            let series: Vec<_> = series
                .iter()
                .map(|(n, v)| (n.clone(), v.clone(), None))
                .collect();
            bars(
                &area,
                [title, x_label, y_label],
                categories,
                &series,
                Scale::Log,
            )
        }
    }
}

/// The legend: one entry per series, top-aligned with the plot area, in
/// the column `side` right of it.
fn legend<DB: DrawingBackend>(side: &Area<DB>, names: &[String], mark: Mark) -> Result<()> {
    let f = font();
    let (w, _) = side.dim_in_pixel();
    let top = 60;
    let rows = names.len() as i32;
    side.draw(&Rectangle::new(
        [(2, top - 8), (w as i32 - 8, top + rows * 22 - 4)],
        BLACK.mix(0.3),
    ))
    .map_err(drawing)?;
    for (i, name) in names.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let y = top + i as i32 * 22 + 6;
        match mark {
            Mark::Line => side.draw(&PathElement::new(vec![(10, y), (30, y)], c.stroke_width(2))),
            Mark::Block => side.draw(&Rectangle::new([(12, y - 5), (26, y + 5)], c.filled())),
        }
        .map_err(drawing)?;
        side.draw_text(name, &TextStyle::from((f, 14).into_font()), (36, y - 7))
            .map_err(drawing)?;
    }
    Ok(())
}

/// The chart context with title and axes drawn.
fn axes<'a, DB: DrawingBackend>(
    area: &'a Area<'a, DB>,
    [title, x_label, y_label]: [&String; 3],
    (x, y): (Axis, Axis),
    xfmt: &dyn Fn(&f64) -> String,
    yfmt: &dyn Fn(&f64) -> String,
    n_x: usize,
    x_mesh: bool,
) -> Result<Ctx<'a, DB>> {
    let f = font();
    let mut chart = ChartBuilder::on(area)
        .caption(title, (f, 22))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(drawing)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_label.as_str())
        .y_desc(y_label.as_str())
        .x_labels(n_x)
        .x_label_formatter(xfmt)
        .y_label_formatter(yfmt)
        .label_style((f, 14))
        .axis_desc_style((f, 16))
        .light_line_style(WHITE.mix(0.0));
    if !x_mesh {
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(drawing)?;
    Ok(chart)
}

/// Lines, with error bars where a series has a spread.
fn lines<DB: DrawingBackend>(
    area: &Area<DB>,
    text: [&String; 3],
    series: &[Series],
    x_names: &Option<Vec<String>>,
    x_scale: Scale,
    y_scale: Scale,
) -> Result<()> {
    let x_scale = if x_names.is_some() {
        Scale::Linear
    } else {
        x_scale
    };
    let keep = |v: f64, s: Scale| v.is_finite() && (!s.is_log() || v > 0.0);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.spread.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]))
    });
    let (x0, x1) = match x_names {
        Some(n) => (-0.5, n.len() as f64 - 0.5),
        None => extent(xs.filter(|v| keep(*v, x_scale)), x_scale, 0.03, false),
    };
    let (y0, y1) = extent(ys.filter(|v| keep(*v, y_scale)), y_scale, 0.08, true);
    // Integer parameters (numjobs, iodepth) get integer ticks only.
    let int_x = x_scale == Scale::Linear
        && series
            .iter()
            .all(|s| s.points.iter().all(|p| p.0.fract() == 0.0));
    let xfmt = |v: &f64| match x_names {
        Some(n) => name_at(n, *v),
        None if int_x && v.fract().abs() > 1e-9 => String::new(),
        None => x_scale.label(*v, x0.abs().max(x1.abs())),
    };
    let yfmt = |v: &f64| y_scale.label(*v, y0.abs().max(y1.abs()));
    let n_x = x_names.as_ref().map_or(10, |n| n.len().min(16));
    let mut chart = axes(
        area,
        text,
        (Axis::new(x_scale, x0, x1), Axis::new(y_scale, y0, y1)),
        &xfmt,
        &yfmt,
        n_x,
        true,
    )?;
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        let line: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| keep(x, x_scale) && keep(y, y_scale))
            .collect();
        chart
            .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
            .map_err(drawing)?;
        if line.len() <= MARKERS_UP_TO {
            chart
                .draw_series(line.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .map_err(drawing)?;
        }
        if let Some(spread) = &s.spread {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .zip(spread)
                        .filter_map(|(&(x, y), &(lo, hi))| {
                            let ok = keep(x, x_scale) && keep(lo, y_scale) && keep(hi, y_scale);
                            ok.then(|| ErrorBar::new_vertical(x, lo, y, hi, c.stroke_width(2), 12))
                        }),
                )
                .map_err(drawing)?;
        }
    }
    Ok(())
}

/// Grouped bars from the bottom of the y axis (zero, or below one on a
/// log axis); bars of zero are not drawn on a log axis.
fn bars<DB: DrawingBackend>(
    area: &Area<DB>,
    text: [&String; 3],
    categories: &[String],
    series: &[BarSeries],
    y_scale: Scale,
) -> Result<()> {
    let tops = series.iter().flat_map(|(_, v, e)| {
        v.iter()
            .enumerate()
            .map(move |(i, y)| y + e.as_ref().map_or(0.0, |e| e[i]))
    });
    let (y0, y1) = if y_scale.is_log() {
        let (lo, hi) = extent(tops.filter(|v| *v > 0.0), y_scale, 0.0, true);
        // Below the smallest count, so a bar of one still shows.
        (lo.min(1.0) * 0.6, hi)
    } else {
        extent(tops.chain([0.0]), y_scale, 0.1, true)
    };
    let n = categories.len().max(1);
    let xfmt = |v: &f64| name_at(categories, *v);
    let yfmt = |v: &f64| y_scale.label(*v, y0.abs().max(y1.abs()));
    let mut chart = axes(
        area,
        text,
        (
            Axis::new(Scale::Linear, -0.5, n as f64 - 0.5),
            Axis::new(y_scale, y0, y1),
        ),
        &xfmt,
        &yfmt,
        n.min(24),
        false,
    )?;
    let w = 0.8 / series.len().max(1) as f64;
    for (s, (_, vals, errs)) in series.iter().enumerate() {
        let c = COLORS[s % COLORS.len()];
        let left = |i: usize| i as f64 - 0.4 + s as f64 * w;
        chart
            .draw_series(
                vals.iter()
                    .enumerate()
                    .filter(|(_, v)| **v > y0)
                    .map(|(i, &v)| {
                        Rectangle::new([(left(i), y0), (left(i) + w * 0.92, v)], c.filled())
                    }),
            )
            .map_err(drawing)?;
        if let Some(e) = errs {
            chart
                .draw_series(vals.iter().zip(e).enumerate().map(|(i, (&v, &e))| {
                    let mid = left(i) + w * 0.46;
                    PathElement::new(
                        vec![(mid, (v - e).max(y0)), (mid, v + e)],
                        BLACK.stroke_width(2),
                    )
                }))
                .map_err(drawing)?;
        }
    }
    Ok(())
}

/// The name of categorical position `v` (blank between positions).
fn name_at(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
        names[i as usize].clone()
    } else {
        String::new()
    }
}

/// The axis range for values `v`: on a log axis from the 1-2-5 value at or
/// below the smallest to the one at or above the largest; on a linear one
/// widened by `frac` each side (from zero when `from_zero`).
fn extent(v: impl Iterator<Item = f64>, scale: Scale, frac: f64, from_zero: bool) -> (f64, f64) {
    let (lo, hi) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    if scale.is_log() {
        if !lo.is_finite() {
            return (1.0, 10.0);
        }
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo / 2.0, hi * 2.0)
        };
        return (snap(lo, false), snap(hi, true));
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let lo = if from_zero { lo.min(0.0) } else { lo };
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let start = if from_zero && lo >= 0.0 {
        0.0
    } else {
        lo - span * frac
    };
    (start, hi + span * frac)
}

/// The nearest value of the 1-2-5 sequence at or above (`up`) or at or
/// below `v` (> 0).
fn snap(v: f64, up: bool) -> f64 {
    let e = v.log10().floor() as i32;
    let p = 10f64.powi(e);
    let steps = [1.0, 2.0, 5.0, 10.0];
    let eps = 1e-9;
    if up {
        steps
            .iter()
            .map(|m| m * p)
            .find(|c| *c >= v * (1.0 - eps))
            .unwrap_or(10.0 * p)
    } else {
        steps
            .iter()
            .rev()
            .map(|m| m * p)
            .find(|c| *c <= v * (1.0 + eps))
            .unwrap_or(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_extents_end_on_one_two_five() {
        assert_eq!(snap(0.0003, false), 0.0002);
        assert_eq!(snap(1.0, true), 1.0);
        assert_eq!(snap(1.01, true), 2.0);
        assert_eq!(snap(730.0, true), 1000.0);
        assert_eq!(snap(730.0, false), 500.0);
        assert_eq!(
            extent([3.0, 40.0].into_iter(), Scale::Log, 0.0, true),
            (2.0, 50.0)
        );
        assert_eq!(
            extent([1.0, 9.0].into_iter(), Scale::Linear, 0.0, true),
            (0.0, 9.0)
        );
    }
}
