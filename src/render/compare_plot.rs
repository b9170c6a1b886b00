//! The picture of an A/B comparison: one small panel per figure shown
//! (the figures that matter, or every one with `--all`), each with its
//! own axis in the figure's unit, A's and B's mean as paired bars and
//! their 95% confidence intervals (Student's t) as error bars. The title
//! says what A and B are; the footnote names the runs, the date and the
//! iolab version. It comes back as a file's bytes: the caller writes it.

use super::Here;
use super::axis::tick;
use super::chart_draw::font;
use super::image::drawing;
use super::image::{ImageFormat, png, svg};
use crate::analysis::compare::{Comparison, Row};
use crate::analysis::fingerprint::runs_text;
use crate::error::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

const A_COLOR: RGBColor = RGBColor(31, 119, 180);
const B_COLOR: RGBColor = RGBColor(255, 127, 14);
const PANEL: (u32, u32) = (300, 260);
const TITLE_H: u32 = 56;
const FOOT_H: u32 = 24;

/// The unit a figure's axis is labelled with.
pub fn unit(row: &Row) -> &'static str {
    match row.metric {
        "time_s" => "time (s)",
        "ops" => "I/Os",
        "bytes" => "bytes",
        "iops" => "IOPS (I/Os per s)",
        "bw_mib_s" => "bandwidth (MiB/s)",
        "p50_us" | "p99_us" => "latency (us)",
        "cpu_pct" => "CPU (% of thread time)",
        "dev_reads" => "device reads",
        "dev_writes" => "device writes",
        "inodes" => "inodes",
        _ => row.label,
    }
}

/// The comparison's picture as the bytes of a `format` file, dated with
/// `here`'s time (the host in its footnote is A's, from the data).
pub fn image(c: &Comparison, format: ImageFormat, here: &Here) -> Result<Vec<u8>> {
    let made = (here.when)(here.now_unix);
    let rows: Vec<&Row> = c.shown_rows().collect();
    let cols = rows.len().clamp(1, 4) as u32;
    let lines = rows.len().div_ceil(cols as usize).max(1) as u32;
    let size = (
        (cols * PANEL.0).max(640),
        TITLE_H + lines * PANEL.1 + FOOT_H,
    );
    match format {
        ImageFormat::Svg => Ok(svg(size, |root| draw(c, &rows, cols, &made, root))?.into_bytes()),
        ImageFormat::Png => png(size, |root| draw(c, &rows, cols, &made, root)),
    }
}

fn draw<DB: DrawingBackend>(
    c: &Comparison,
    rows: &[&Row],
    cols: u32,
    made: &str,
    root: &DrawingArea<DB, Shift>,
) -> Result<()> {
    let f = font();
    root.fill(&WHITE).map_err(drawing)?;
    let (_, h) = root.dim_in_pixel();
    let [a, b] = &c.sides;
    let title = format!("A: {}  vs  B: {}", a.name, b.name);
    root.draw_text(&title, &(f, 22).into_font().color(&BLACK), (14, 8))
        .map_err(drawing)?;
    let sub = c.verdict.as_ref().map_or_else(
        || "mean of each side; error bars: 95% CI of the mean; * significant".to_string(),
        |v| {
            format!(
                "{}; error bars: 95% CI of the mean; * significant",
                v.line()
            )
        },
    );
    root.draw_text(&sub, &(f, 13).into_font().color(&BLACK), (14, 34))
        .map_err(drawing)?;
    let ids = |s: &crate::analysis::compare::Side| {
        let ids: Vec<Option<i64>> = s.members.iter().map(|m| m.run).collect();
        runs_text(&ids)
    };
    let host = a.members.first().map_or("unknown", |m| m.env.0[0].as_str());
    let foot = format!(
        "host {host} · A: {} · B: {} · {} · iolab {}",
        ids(a),
        ids(b),
        made,
        env!("CARGO_PKG_VERSION")
    );
    root.draw_text(
        &foot,
        &(f, 12).into_font().color(&RGBColor(110, 110, 110)),
        (14, h as i32 - FOOT_H as i32 + 4),
    )
    .map_err(drawing)?;
    let body = root.margin(TITLE_H, FOOT_H, 0, 0);
    let lines = rows.len().div_ceil(cols as usize).max(1);
    let panels = body.split_evenly((lines, cols as usize));
    for (row, area) in rows.iter().zip(&panels) {
        panel(row, area)?;
    }
    Ok(())
}

/// One figure: A's and B's bar with their intervals, on the figure's axis.
fn panel<DB: DrawingBackend>(r: &Row, area: &DrawingArea<DB, Shift>) -> Result<()> {
    let f = font();
    let [ca, cb] = r.ci95();
    let bars = [(r.a_mean, ca, A_COLOR), (r.b_mean, cb, B_COLOR)];
    let top = bars.iter().map(|(m, e, _)| m + e).fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.15 } else { 1.0 };
    let change = r
        .change_pct
        .map_or_else(String::new, |c| format!(" {c:+.1}%"));
    let mark = if r.significant { " *" } else { "" };
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}{change}{mark}", r.label), (f, 15))
        .margin(10)
        .x_label_area_size(26)
        .y_label_area_size(58)
        .build_cartesian_2d(-0.5f64..1.5f64, 0f64..top)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .y_desc(unit(r))
        .x_labels(2)
        .x_label_formatter(&|v| match v.round() as i64 {
            0 if (v - 0.0).abs() < 1e-6 => "A".into(),
            1 if (v - 1.0).abs() < 1e-6 => "B".into(),
            _ => String::new(),
        })
        .y_label_formatter(&|v| tick(*v))
        .y_labels(6)
        .label_style((f, 12))
        .axis_desc_style((f, 13))
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(drawing)?;
    for (i, (m, e, color)) in bars.iter().enumerate() {
        let x = i as f64;
        chart
            .draw_series([Rectangle::new(
                [(x - 0.3, 0.0), (x + 0.3, *m)],
                color.filled(),
            )])
            .map_err(drawing)?;
        if *e > 0.0 {
            let (lo, hi) = ((m - e).max(0.0), m + e);
            chart
                .draw_series([
                    PathElement::new(vec![(x, lo), (x, hi)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, lo), (x + 0.08, lo)], BLACK.stroke_width(2)),
                    PathElement::new(vec![(x - 0.08, hi), (x + 0.08, hi)], BLACK.stroke_width(2)),
                ])
                .map_err(drawing)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::here::tests::here;

    /// Dated with `here`'s time; as PNG, the picture's size in pixels.
    #[test]
    fn dated_here_in_each_format() {
        let c = Comparison::default();
        let svg = String::from_utf8(image(&c, ImageFormat::Svg, &here()).unwrap()).unwrap();
        assert!(svg.contains("· t=90 · iolab "), "{svg}");
        let png = image(&c, ImageFormat::Png, &here()).unwrap();
        let r = ::png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let (w, h) = (r.info().width, r.info().height);
        assert_eq!((w, h), (640, TITLE_H + PANEL.1 + FOOT_H));
    }
}
