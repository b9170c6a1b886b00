//! A picture as the bytes of its file: the format a file's name asks for
//! ([`ImageFormat::of`]), and a drawing made in memory, as SVG text or as
//! RGB pixels encoded as PNG ([`png`]). Writing the bytes is the caller's.

use crate::error::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// The formats a picture is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// An SVG document (text).
    Svg,
    /// A PNG image (RGB, 8 bits a channel).
    Png,
}

impl ImageFormat {
    /// The format `path`'s name asks for: `.svg` or `.png`, in any case;
    /// any other name is a usage error.
    pub fn of(path: &Path) -> Result<ImageFormat> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => Err(Error::usage(
                format!("plot file {}", path.display()),
                "name must end in .svg or .png",
            )),
        }
    }
}

/// `size` pixels drawn by `draw` as an SVG document.
pub(super) fn svg(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
) -> Result<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, size).into_drawing_area();
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(s)
}

/// `size` pixels drawn by `draw` into an RGB buffer, as a PNG file's bytes.
pub(super) fn png(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    encode_png(&rgb, size)
}

/// RGB pixels (8 bits a channel, row after row) of a `w` × `h` picture as
/// a PNG file, byte for byte what plotters' file backend writes (through
/// the `image` crate: its default fast compression, adaptive filters).
pub fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>> {
    let failed = |e: png::EncodingError| Error::tool("png", e.to_string());
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, w, h);
    e.set_color(png::ColorType::Rgb);
    e.set_depth(png::BitDepth::Eight);
    e.set_compression(png::Compression::Fast);
    e.set_filter(png::FilterType::Sub);
    e.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = e.write_header().map_err(failed)?;
    writer.write_image_data(rgb).map_err(failed)?;
    writer.finish().map_err(failed)?;
    Ok(out)
}

/// A drawing failure of plotters, as iolab's error.
pub(super) fn drawing(e: impl std::fmt::Display) -> Error {
    Error::tool("plotters", e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_the_name() {
        assert_eq!(
            ImageFormat::of(Path::new("a/b.svg")).unwrap(),
            ImageFormat::Svg
        );
        assert_eq!(
            ImageFormat::of(Path::new("b.PNG")).unwrap(),
            ImageFormat::Png
        );
        for bad in ["b.gif", "b", "svg", "b.svg.txt"] {
            let e = ImageFormat::of(Path::new(bad)).unwrap_err().to_string();
            assert_eq!(e, format!("plot file {bad}: name must end in .svg or .png"));
        }
    }

    /// The encoded pixels decode to the same size and the same pixels.
    #[test]
    fn png_decodes_to_its_pixels() {
        let (w, h) = (3u32, 2u32);
        let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 13) as u8).collect();
        let bytes = encode_png(&rgb, (w, h)).unwrap();
        let mut r = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (w, h));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(&buf[..info.buffer_size()], &rgb[..]);
    }
}
