//! A gzip stream written a piece at a time, whose large pieces are compressed once and
//! shared: an event stream's snapshot is compressed once for every stream that sends it
//! ([`Deflated`]), and what follows (changes, comment lines) goes as stored blocks, so a
//! stream keeps no compressor of its own (a DEFLATE compressor's state is some 256 KB).
//!
//! The pieces make one DEFLATE stream: each compressed piece ends in a sync flush (so the
//! next starts on a byte boundary) and refers back only within itself, which any decoder
//! accepts whatever came before. The stream ends with an empty final block and the gzip
//! trailer (the CRC-32 and length of everything, combined piece by piece).

use bytes::Bytes;

/// Bytes compressed as raw DEFLATE blocks ending in a sync flush (byte-aligned, not the
/// last block), to be spliced into a gzip stream, with the checksum and length of what
/// they hold.
#[derive(Clone, Debug)]
pub struct Deflated {
    blocks: Bytes,
    crc: crc32fast::Hasher,
    len: u64,
}

impl Deflated {
    /// Compresses `data` at the fastest level.
    pub fn new(data: &[u8]) -> Self {
        use std::io::Write;
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        // `flush` is a sync flush: everything so far, ending on a byte boundary.
        encoder
            .write_all(data)
            .and_then(|()| encoder.flush())
            .expect("compressing into memory cannot fail");
        let blocks = std::mem::take(encoder.get_mut());
        let mut crc = crc32fast::Hasher::new();
        crc.update(data);
        Self {
            blocks: blocks.into(),
            crc,
            len: data.len() as u64,
        }
    }

    /// How many compressed bytes.
    pub fn compressed_len(&self) -> usize {
        self.blocks.len()
    }
}

/// One gzip stream being written.
#[derive(Clone, Debug, Default)]
pub struct GzipStream {
    crc: crc32fast::Hasher,
    len: u64,
}

/// Most bytes one stored block holds.
const STORED_MOST: usize = 65_535;

impl GzipStream {
    /// The stream's header: no name, no time, operating system unknown.
    pub fn header() -> Bytes {
        Bytes::from_static(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])
    }

    /// `data`, compressed once elsewhere, as the stream's next piece.
    pub fn deflated(&mut self, data: &Deflated) -> Bytes {
        self.crc.combine(&data.crc);
        self.len += data.len;
        data.blocks.clone()
    }

    /// `data` as the stream's next piece, uncompressed (stored blocks).
    pub fn stored(&mut self, data: &[u8]) -> Bytes {
        self.crc.update(data);
        self.len += data.len() as u64;
        let mut out = Vec::with_capacity(data.len() + 5 * (data.len() / STORED_MOST + 1));
        for chunk in data.chunks(STORED_MOST) {
            let len = chunk.len() as u16;
            // Not the last block, stored; the rest of the byte is padding.
            out.push(0);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(chunk);
        }
        out.into()
    }

    /// The stream's end: an empty last block, then the CRC-32 and length of it all.
    pub fn end(&self) -> Bytes {
        let mut out = vec![1, 0, 0, 0xff, 0xff];
        out.extend_from_slice(&self.crc.clone().finalize().to_le_bytes());
        out.extend_from_slice(&(self.len as u32).to_le_bytes());
        out.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn shared_and_stored_pieces_make_one_gzip_stream() {
        let big: Vec<u8> = (0..200_000).map(|i| b"abcdefgh"[i % 8]).collect();
        let shared = Deflated::new(&big);
        assert!(shared.compressed_len() < big.len() / 10);
        let mut stream = GzipStream::default();
        let mut bytes = GzipStream::header().to_vec();
        bytes.extend_from_slice(&stream.stored(b"event: one\ndata: 1\n\n"));
        bytes.extend_from_slice(&stream.deflated(&shared));
        let long = vec![b'x'; 70_000];
        bytes.extend_from_slice(&stream.stored(&long));
        bytes.extend_from_slice(&stream.deflated(&shared));
        bytes.extend_from_slice(&stream.end());

        let mut expected = b"event: one\ndata: 1\n\n".to_vec();
        expected.extend_from_slice(&big);
        expected.extend_from_slice(&long);
        expected.extend_from_slice(&big);
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut decoded)
            .expect("a valid gzip stream, checksum and length included");
        assert_eq!(decoded, expected);
    }
}
