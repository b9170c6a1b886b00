//! Pictures with plotters: line charts (sweep curves with error bars, time
//! series, latency CCDFs and percentile curves) and grouped bars (A/B
//! comparisons, log-count latency histograms), as SVG text (for reports)
//! or the bytes of an SVG/PNG file ([`Chart::image`]; the caller writes
//! them). Every picture has a title, axis labels with units, a
//! legend outside the plot area (never over the data) and a footnote with
//! host, date and iolab version. Axes are linear or plotters' log
//! coordinates with 1-2-5 ticks ([`super::axis`]). The DejaVu Sans font
//! is embedded, so PNG text renders on a machine without fonts.

pub use super::axis::Scale;
pub use super::image::ImageFormat;
pub use super::latency_chart::{ccdf, log2_histogram, percentile_curve};

/// Pixel size of every picture.
pub(super) const SIZE: (u32, u32) = (900, 520);

/// A named line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// Per point, the (low, high) ends of its error bar (e.g. the minimum
    /// and maximum over repetitions); `None`: no error bars.
    pub spread: Option<Vec<(f64, f64)>>,
}

impl Series {
    /// A line without error bars.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            spread: None,
        }
    }
}

/// A picture to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// Lines (with markers when they have few points).
    Lines {
        /// Caption.
        title: String,
        /// x axis label, with its unit.
        x_label: String,
        /// y axis label, with its unit.
        y_label: String,
        /// The lines.
        series: Vec<Series>,
        /// Names of categorical x positions 0, 1, 2... (None: numeric x).
        x_names: Option<Vec<String>>,
        /// Scale of a numeric x.
        x_scale: Scale,
        /// Scale of y.
        y_scale: Scale,
    },
    /// Grouped bars from zero: one group per category, one bar per series.
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
    /// Grouped bars of counts on a log axis, so a tail of a few
    /// operations stays visible next to millions.
    Counts {
        /// Caption.
        title: String,
        /// x axis label.
        x_label: String,
        /// y axis label.
        y_label: String,
        /// Category names.
        categories: Vec<String>,
        /// (series name, count per category).
        series: Vec<(String, Vec<f64>)>,
    },
}

/// The line under every picture: where and when its data was made, and by
/// which iolab (a stored run's: [`super::run_charts::footnote`]; here and
/// now: [`super::Here::footnote`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Footnote {
    /// Host name.
    pub host: String,
    /// Date and time.
    pub date: String,
    /// iolab version.
    pub version: String,
}

impl Footnote {
    /// The line as drawn: `host h · 2026-11-24 17:05 · iolab 0.1.0`.
    pub fn text(&self) -> String {
        format!(
            "host {} · {} · iolab {}",
            if self.host.is_empty() {
                "unknown"
            } else {
                &self.host
            },
            self.date,
            self.version
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> Footnote {
        Footnote {
            host: "h1".into(),
            date: "2026-11-24 17:00".into(),
            version: "9.9".into(),
        }
    }

    /// `(x, text)` of every `<text>` of an SVG.
    fn texts(svg: &str) -> Vec<(f64, String)> {
        svg.split("<text x=\"")
            .skip(1)
            .map(|t| {
                let x = t.split('"').next().unwrap().parse().unwrap();
                let body = t
                    .split_once('>')
                    .unwrap()
                    .1
                    .split("</text>")
                    .next()
                    .unwrap();
                (x, body.trim().to_string())
            })
            .collect()
    }

    /// Four lines over the whole width and height on a log y axis, as the
    /// log-scan lab draws: the legend stands right of every marker.
    #[test]
    fn legend_is_clear_of_the_data() {
        let line = |name: &str, y: [f64; 3]| {
            Series::new(name, vec![(0.0, y[0]), (1.0, y[1]), (2.0, y[2])])
        };
        let c = Chart::Lines {
            title: "Scanning logs".into(),
            x_label: "buffer size (bytes)".into(),
            y_label: "bandwidth (MiB/s, log scale)".into(),
            series: vec![
                line("buffered, cold", [900.0, 1500.0, 1600.0]),
                line("buffered, warm", [4000.0, 6000.0, 7000.0]),
                line("O_DIRECT, cold", [20.0, 300.0, 1400.0]),
                line("O_DIRECT, warm", [21.0, 310.0, 1450.0]),
            ],
            x_names: Some(vec!["4k".into(), "64k".into(), "1m".into()]),
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
        };
        let svg = c.svg(&note()).unwrap();
        let right = svg
            .split("<circle cx=\"")
            .skip(1)
            .map(|t| t.split('"').next().unwrap().parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        let t = texts(&svg);
        for name in ["buffered, cold", "O_DIRECT, warm"] {
            let (x, _) = t.iter().find(|t| t.1 == name).unwrap();
            assert!(*x > right + 20.0, "{name} at {x}, data to {right}");
        }
        for want in [
            "Scanning logs",
            "bandwidth (MiB/s, log scale)",
            "buffer size (bytes)",
            "20",
            "50",
            "100",
            "200",
            "500",
            "1k",
            "2k",
            "5k",
            "host h1 · 2026-11-24 17:00 · iolab 9.9",
        ] {
            assert!(t.iter().any(|t| t.1 == want), "missing {want}");
        }
    }

    /// The PNG bytes decode to the picture's size, white with ink on it;
    /// the SVG bytes are the SVG document.
    #[test]
    fn image_bytes_in_each_format() {
        let c = Chart::Bars {
            title: "IOPS per run".into(),
            x_label: "run".into(),
            y_label: "IOPS".into(),
            categories: vec!["1".into(), "2".into()],
            series: vec![("IOPS".into(), vec![100.0, 200.0], None)],
        };
        let png = c.image(ImageFormat::Png, &note()).unwrap();
        let mut r = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let mut px = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut px).unwrap();
        assert_eq!((info.width, info.height), SIZE);
        let white = px.chunks(3).filter(|p| p == &[255, 255, 255]).count();
        assert!(white > px.len() / 6 && white < px.len() / 3, "{white}");
        let svg = c.image(ImageFormat::Svg, &note()).unwrap();
        assert_eq!(svg, c.svg(&note()).unwrap().into_bytes());
    }

    /// A single series has no legend; error bars reach the spread's ends.
    #[test]
    fn error_bars_and_no_legend_for_one_line() {
        let mut s = Series::new("IOPS", vec![(1.0, 100.0), (2.0, 200.0)]);
        s.spread = Some(vec![(80.0, 130.0), (150.0, 260.0)]);
        let c = Chart::Lines {
            title: "IOPS vs numjobs".into(),
            x_label: "numjobs (jobs)".into(),
            y_label: "IOPS (I/Os per second)".into(),
            series: vec![s],
            x_names: None,
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        };
        let svg = c.svg(&note()).unwrap();
        assert!(!texts(&svg).iter().any(|t| t.1 == "IOPS"), "no legend");
        let bars = svg
            .split("<line")
            .skip(1)
            .filter(|l| l.split('>').next().unwrap().contains("stroke=\"#1F77B4\""))
            .count();
        assert_eq!(bars, 6, "two bars, each a stem and two caps");
    }
}
