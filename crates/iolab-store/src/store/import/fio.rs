//! The parts of fio's JSON result that `iolab import` reads, deserialised
//! as they stream in; every other field is skipped without being kept.
//! Values are read leniently: a number may be written as a string, and a
//! scalar of the wrong kind counts as absent (0, no text). What is kept is
//! bounded: see the limits in `mod.rs`.

use super::{MAX_BINS, MAX_JOBS, MAX_KEPT, MAX_OPTIONS, MAX_OPTIONS_TEXT, MAX_PERCENTILES};
use crate::metrics::format::bytes_iec;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// fio's document.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Doc {
    /// `fio version`.
    #[serde(rename = "fio version", default)]
    pub version: Text,
    /// Start, seconds since the epoch.
    #[serde(default)]
    pub timestamp: Num,
    /// Options of the `[global]` section.
    #[serde(rename = "global options", default)]
    pub global: Options,
    /// The jobs (absent: not a fio result).
    pub jobs: Option<Jobs>,
}

/// One entry of `jobs`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Job {
    /// Its name.
    #[serde(default)]
    pub jobname: Text,
    /// The options it was given.
    #[serde(rename = "job options", default)]
    pub options: Options,
    /// Milliseconds it ran.
    #[serde(default)]
    pub job_runtime: Num,
    /// User CPU, percent of the runtime.
    #[serde(default)]
    pub usr_cpu: Num,
    /// System CPU, percent of the runtime.
    #[serde(default)]
    pub sys_cpu: Num,
    /// fio's error number (0: none).
    #[serde(default)]
    pub error: Num,
    /// Reads.
    pub read: Option<Dir>,
    /// Writes.
    pub write: Option<Dir>,
}

impl Job {
    /// Roughly how many bytes of memory it holds.
    fn kept(&self) -> usize {
        let dirs = [&self.read, &self.write];
        self.jobname.0.as_ref().map_or(0, String::len)
            + self.options.kept()
            + dirs
                .iter()
                .flat_map(|d| d.iter())
                .map(|d| d.kept())
                .sum::<usize>()
            + std::mem::size_of::<Job>()
    }
}

/// One direction (`read`, `write`) of a job.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Dir {
    /// Bytes transferred.
    #[serde(default)]
    pub io_bytes: Num,
    /// I/Os done.
    #[serde(default)]
    pub total_ios: Num,
    /// This direction's runtime in ms (fio's own per direction), when given.
    pub runtime: Option<Num>,
    /// Completion latency.
    pub clat_ns: Option<Lat>,
    /// Total latency.
    pub lat_ns: Option<Lat>,
    /// Submission latency.
    pub slat_ns: Option<Lat>,
}

impl Dir {
    fn kept(&self) -> usize {
        [&self.clat_ns, &self.lat_ns, &self.slat_ns]
            .iter()
            .flat_map(|l| l.iter())
            .map(|l| l.kept())
            .sum()
    }
}

/// One of fio's latency objects.
#[derive(Debug, Default, Deserialize)]
#[allow(non_snake_case)]
pub(super) struct Lat {
    /// Count.
    #[serde(default)]
    pub N: Num,
    /// Smallest, ns.
    #[serde(default)]
    pub min: Num,
    /// Largest, ns.
    #[serde(default)]
    pub max: Num,
    /// Mean, ns.
    #[serde(default)]
    pub mean: Num,
    /// Sample standard deviation, ns.
    #[serde(default)]
    pub stddev: Num,
    /// Percentile → ns (json).
    #[serde(default)]
    pub percentile: Pairs<f64>,
    /// Bin (ns) → count (json+).
    #[serde(default)]
    pub bins: Pairs<u64>,
}

impl Lat {
    fn kept(&self) -> usize {
        (self.percentile.0.len() + self.bins.0.len()) * 16
    }
}

/// A number as fio writes it (or as a string); anything else reads as 0.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Num(pub f64);

impl Num {
    /// As a whole number, saturating (negative and NaN: 0).
    pub fn u64(self) -> u64 {
        self.0 as u64
    }
}

/// Text as fio writes it (a number or boolean as its digits); `None` for
/// null, an array or an object.
#[derive(Debug, Default, Clone)]
pub(super) struct Text(pub Option<String>);

/// An options object: name → value, in order; values that are not text
/// are left out.
#[derive(Debug, Default, Clone)]
pub(super) struct Options(pub Vec<(String, String)>);

impl Options {
    fn kept(&self) -> usize {
        self.0.iter().map(|(k, v)| k.len() + v.len() + 48).sum()
    }
}

/// A histogram object: key (parsed as `K`) → count or value, as numbers.
#[derive(Debug, Default, Clone)]
pub(super) struct Pairs<K>(pub Vec<(K, u64)>);

/// The `jobs` array.
#[derive(Debug, Default)]
pub(super) struct Jobs(pub Vec<Job>);

/// A value where fio writes a number or text, as far as a lenient field
/// reads it: an array or object is skipped, not kept.
enum Scalar {
    Num(f64),
    Text(String),
    Bool(bool),
    Other,
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or text")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Num(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Num(match Scalar::deserialize(d)? {
            Scalar::Num(n) => n,
            Scalar::Text(s) => s.trim().parse().unwrap_or(0.0),
            Scalar::Bool(_) | Scalar::Other => 0.0,
        }))
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Text(match Scalar::deserialize(d)? {
            Scalar::Num(n) => Some(n.to_string()),
            Scalar::Text(s) => Some(s),
            Scalar::Bool(b) => Some(b.to_string()),
            Scalar::Other => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Options {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Options;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of options")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Options, A::Error> {
                let mut out = Options::default();
                let mut text = 0;
                while let Some(k) = map.next_key::<String>()? {
                    let Text(Some(v)) = map.next_value::<Text>()? else {
                        continue;
                    };
                    text += k.len() + v.len();
                    if out.0.len() == MAX_OPTIONS || text > MAX_OPTIONS_TEXT {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_OPTIONS} options or {} of option text in one \
                             options object (fio has about 500 options)",
                            bytes_iec(MAX_OPTIONS_TEXT as f64)
                        )));
                    }
                    out.0.push((k, v));
                }
                Ok(out)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Options, E> {
                Ok(Options::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A key of a histogram object.
pub(super) trait Key: Sized + fmt::Debug {
    /// What the object is, for messages.
    const WHAT: &'static str;
    /// How many entries fio writes at most, times a margin.
    const MAX: usize;
    /// The key parsed, or `None` when it is not one.
    fn parse(s: &str) -> Option<Self>;
}

impl Key for u64 {
    const WHAT: &'static str = "histogram bins";
    const MAX: usize = MAX_BINS;
    fn parse(s: &str) -> Option<u64> {
        s.parse().ok()
    }
}

impl Key for f64 {
    const WHAT: &'static str = "percentiles";
    const MAX: usize = MAX_PERCENTILES;
    fn parse(s: &str) -> Option<f64> {
        s.parse().ok().filter(|p: &f64| p.is_finite())
    }
}

impl<'de, K: Key> Deserialize<'de> for Pairs<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<K>(std::marker::PhantomData<K>);
        impl<'de, K: Key> Visitor<'de> for V<K> {
            type Value = Pairs<K>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an object of {}", K::WHAT)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pairs<K>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    let key = K::parse(&k).ok_or_else(|| {
                        de::Error::custom(format!("bad key '{k}' in {}", K::WHAT))
                    })?;
                    let v = map.next_value::<Num>()?;
                    if out.len() == K::MAX {
                        return Err(de::Error::custom(format!(
                            "more than {} {} in one latency object",
                            K::MAX,
                            K::WHAT
                        )));
                    }
                    out.push((key, v.u64()));
                }
                Ok(Pairs(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Jobs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Jobs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of jobs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Jobs, A::Error> {
                let mut jobs = Vec::new();
                let mut kept = 0;
                while let Some(job) = seq.next_element::<Job>()? {
                    if jobs.len() == MAX_JOBS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_JOBS} jobs (fio runs at most {MAX_JOBS})"
                        )));
                    }
                    kept += job.kept();
                    if kept > MAX_KEPT {
                        return Err(de::Error::custom(format!(
                            "its jobs hold more than {} of names, options and histograms \
                             (iolab imports up to that; try fio's group_reporting)",
                            bytes_iec(MAX_KEPT as f64)
                        )));
                    }
                    jobs.push(job);
                }
                Ok(Jobs(jobs))
            }
        }
        d.deserialize_seq(V)
    }
}
