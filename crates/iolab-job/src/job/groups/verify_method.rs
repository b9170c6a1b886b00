//! The ways `verify=` checks a block: fio 3.33's methods, their numbers
//! in the header and the size of their checksums (used by the
//! verification group, [`super::verify`], and `runner::verify`).

use serde::{Deserialize, Serialize};

/// Bytes of fio 3.33's `struct verify_header`.
pub const HEADER_LEN: usize = 40;

/// A way of checking a block: fio's `verify` values, with fio 3.33's
/// numbers for the header's `verify_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Method {
    /// No verification.
    #[default]
    None,
    /// The header alone (`meta`).
    Meta,
    /// MD5 of the data.
    Md5,
    /// fio's CRC-64 (polynomial 0x95AC9329AC4BC9B5 reflected, init 0).
    Crc64,
    /// fio's CRC-32 (polynomial 0x04C11DB7, init 0, not reflected).
    Crc32,
    /// CRC-32C (Castagnoli).
    Crc32c,
    /// `crc32c-intel`: CRC-32C, as fio (the name only asked for hardware).
    Crc32cIntel,
    /// CRC-16 (ARC).
    Crc16,
    /// CRC-7 (MMC).
    Crc7,
    /// fio's SHA-256 (as fio 3.33 computes and stores it).
    Sha256,
    /// fio's SHA-512 (as fio 3.33 stores it).
    Sha512,
    /// XXH32, seed 1.
    Xxhash,
    /// SHA-1 (fio stores its five words in host order).
    Sha1,
    /// No header: every byte is `verify_pattern` (`pattern`).
    Pattern,
    /// Pretend to verify (`null`).
    Null,
}

impl Method {
    /// The words of `verify=` and their methods.
    pub const NAMES: &[(&str, Method)] = &[
        ("0", Method::None),
        ("meta", Method::Meta),
        ("md5", Method::Md5),
        ("crc64", Method::Crc64),
        ("crc32", Method::Crc32),
        ("crc32c", Method::Crc32c),
        ("crc32c-intel", Method::Crc32cIntel),
        ("crc16", Method::Crc16),
        ("crc7", Method::Crc7),
        ("sha256", Method::Sha256),
        ("sha512", Method::Sha512),
        ("xxhash", Method::Xxhash),
        ("sha1", Method::Sha1),
        ("pattern", Method::Pattern),
        ("null", Method::Null),
    ];

    /// Bytes of the header before a block's data: fio's `struct
    /// verify_header` (40 bytes in fio 3.33) and the checksum after it
    /// (fio's `vhdr_*`); none for `pattern`.
    pub fn header_size(self) -> usize {
        let sum = match self {
            Method::None | Method::Meta | Method::Null => 0,
            Method::Pattern => return 0,
            Method::Md5 => 16,
            Method::Crc64 => 8,
            Method::Crc32 | Method::Crc32c | Method::Crc32cIntel | Method::Xxhash => 4,
            Method::Crc16 => 2,
            Method::Crc7 => 1,
            Method::Sha256 => 64,
            Method::Sha512 => 128,
            Method::Sha1 => 20,
        };
        HEADER_LEN + sum
    }

    /// fio 3.33's number for it in the header (`verify_type`).
    pub fn fio_type(self) -> u16 {
        match self {
            Method::None => 0,
            Method::Meta => 1,
            Method::Md5 => 2,
            Method::Crc64 => 3,
            Method::Crc32 => 4,
            Method::Crc32c => 5,
            Method::Crc32cIntel => 6,
            Method::Crc16 => 7,
            Method::Crc7 => 8,
            Method::Sha256 => 9,
            Method::Sha512 => 10,
            Method::Xxhash => 15,
            Method::Sha1 => 16,
            Method::Pattern => 18,
            Method::Null => 19,
        }
    }

    /// fio's name.
    pub fn name(self) -> &'static str {
        (Method::NAMES.iter().find(|(_, m)| *m == self)).map_or("0", |(n, _)| n)
    }
}
