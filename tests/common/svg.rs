//! Reading plotters' SVG output: text labels with their position, markers,
//! error-bar strokes, and the PNG pixels of a screenshot.

use std::path::Path;

/// The value of attribute `name` in the tag text `tag`.
fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[at..].split('"').next()?.to_string())
}

/// Every `<text>`: (x, y, the text trimmed).
pub fn texts(svg: &str) -> Vec<(f64, f64, String)> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (tag, rest) = t.split_once('>')?;
            let body = rest.split("</text>").next()?.trim().to_string();
            Some((
                attr(tag, "x")?.parse().ok()?,
                attr(tag, "y")?.parse().ok()?,
                body,
            ))
        })
        .collect()
}

/// Whether some `<text>` is exactly `want`.
pub fn has_text(svg: &str, want: &str) -> bool {
    texts(svg).iter().any(|t| t.2 == want)
}

/// The x of every marker (`<circle>`).
pub fn marker_xs(svg: &str) -> Vec<f64> {
    svg.split("<circle")
        .skip(1)
        .filter_map(|t| attr(t.split('>').next()?, "cx")?.parse().ok())
        .collect()
}

/// Vertical `<line>`s drawn in `colour` (`#1F77B4`) that are longer than
/// one pixel: error bars (the mesh is drawn in black).
pub fn vertical_lines(svg: &str, colour: &str) -> usize {
    svg.split("<line")
        .skip(1)
        .filter_map(|t| t.split('>').next())
        .filter(|t| attr(t, "stroke").as_deref() == Some(colour))
        .filter(|t| {
            let n = |k| attr(t, k).and_then(|v| v.parse::<f64>().ok());
            n("x1") == n("x2") && (n("y1").unwrap_or(0.0) - n("y2").unwrap_or(0.0)).abs() > 1.0
        })
        .count()
}

/// Width, height, and the number of distinct colours and of non-white
/// pixels of a PNG, decoded.
pub fn png_pixels(p: &Path) -> (u32, u32, usize, usize) {
    let mut dec = png::Decoder::new(std::fs::File::open(p).unwrap());
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0;
    for c in px.chunks(step) {
        let rgb = &c[..step.min(3)];
        if rgb.iter().any(|&v| v < 250) {
            ink += 1;
        }
        colours.insert(rgb.to_vec());
    }
    (info.width, info.height, colours.len(), ink)
}
