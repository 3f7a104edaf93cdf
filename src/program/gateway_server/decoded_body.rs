//! An upstream's answer as the gateway reads it: decoded when the upstream compressed it although
//! the gateway asked for `identity` (some proxies and servers do), so that the calls in it lose
//! their reasons like any other's. An encoding the gateway cannot read is refused before anything
//! is sent: a compressed answer passed on as it came would carry its reasons to the agent.
//!
//! Each decoder is written to as the answer's pieces arrive and gives back what it can decode so
//! far, so a compressed stream of events is still passed on event by event.

use std::io::{self, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{self, HeaderMap};

use super::BoxError;

/// A `Content-Encoding` the gateway reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoding {
    Gzip,
    /// HTTP's `deflate`: zlib's format.
    Deflate,
    Brotli,
    Zstd,
}

impl Encoding {
    /// The encodings `headers` say the body went through, in the order they were applied
    /// (`identity` is none); the name of the first one the gateway cannot read as the error.
    pub(super) fn of(headers: &HeaderMap) -> Result<Vec<Encoding>, String> {
        let mut applied = Vec::new();
        for value in headers.get_all(header::CONTENT_ENCODING) {
            let value = value
                .to_str()
                .map_err(|_| String::from_utf8_lossy(value.as_bytes()).into_owned())?;
            for name in value
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
            {
                let encoding = match name.to_ascii_lowercase().as_str() {
                    "identity" => continue,
                    "gzip" | "x-gzip" => Encoding::Gzip,
                    "deflate" => Encoding::Deflate,
                    "br" => Encoding::Brotli,
                    "zstd" => Encoding::Zstd,
                    _ => return Err(name.to_owned()),
                };
                applied.push(encoding);
            }
        }
        Ok(applied)
    }
}

/// One encoding's decoder, writing what it decodes into a buffer taken after each piece.
enum Decoder {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Deflate(flate2::write::ZlibDecoder<Vec<u8>>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Decoder<'static, Vec<u8>>),
}

impl Decoder {
    fn new(encoding: Encoding) -> io::Result<Decoder> {
        Ok(match encoding {
            Encoding::Gzip => Decoder::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            Encoding::Deflate => Decoder::Deflate(flate2::write::ZlibDecoder::new(Vec::new())),
            Encoding::Brotli => Decoder::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096),
            )),
            Encoding::Zstd => Decoder::Zstd(zstd::stream::write::Decoder::new(Vec::new())?),
        })
    }

    /// Decodes `piece`, giving back every byte it could decode so far.
    fn push(&mut self, piece: &[u8]) -> io::Result<Vec<u8>> {
        let decoded = match self {
            Decoder::Gzip(decoder) => {
                decoder.write_all(piece)?;
                decoder.flush()?;
                decoder.get_mut()
            }
            Decoder::Deflate(decoder) => {
                decoder.write_all(piece)?;
                decoder.flush()?;
                decoder.get_mut()
            }
            Decoder::Brotli(decoder) => {
                decoder.write_all(piece)?;
                decoder.flush()?;
                decoder.get_mut()
            }
            Decoder::Zstd(decoder) => {
                decoder.write_all(piece)?;
                decoder.flush()?;
                decoder.get_mut()
            }
        };
        Ok(std::mem::take(decoded))
    }

    /// The last decoded bytes once the body has ended; an error when it ended before its
    /// encoding did (a body cut short).
    fn finish(&mut self) -> io::Result<Vec<u8>> {
        let decoded = match self {
            Decoder::Gzip(decoder) => {
                decoder.try_finish()?;
                decoder.get_mut()
            }
            Decoder::Deflate(decoder) => {
                decoder.try_finish()?;
                decoder.get_mut()
            }
            Decoder::Brotli(decoder) => {
                decoder.close()?;
                decoder.get_mut()
            }
            Decoder::Zstd(decoder) => {
                decoder.do_finish()?;
                decoder.get_mut()
            }
        };
        Ok(std::mem::take(decoded))
    }
}

/// The upstream's body, decoded as its `Content-Encoding` says.
pub(super) struct DecodedBody {
    upstream: Incoming,
    /// The decoders, the last encoding applied first; none for an uncompressed body.
    decoders: Vec<Decoder>,
    ended: bool,
}

impl DecodedBody {
    /// `upstream`, decoded from `applied` (as [`Encoding::of`] gives them).
    pub(super) fn new(upstream: Incoming, applied: &[Encoding]) -> io::Result<DecodedBody> {
        let decoders = applied
            .iter()
            .rev()
            .map(|&encoding| Decoder::new(encoding))
            .collect::<io::Result<_>>()?;
        Ok(DecodedBody {
            upstream,
            decoders,
            ended: false,
        })
    }

    /// `piece` through every decoder; at the end of the body (`piece` empty), each finishes.
    fn decode(&mut self, piece: &[u8], end: bool) -> io::Result<Vec<u8>> {
        let mut bytes = piece.to_vec();
        for decoder in &mut self.decoders {
            let mut decoded = decoder.push(&bytes)?;
            if end {
                decoded.extend(decoder.finish()?);
            }
            bytes = decoded;
        }
        Ok(bytes)
    }
}

impl Body for DecodedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let frame = ready!(Pin::new(&mut this.upstream).poll_frame(cx));
            if this.decoders.is_empty() {
                return Poll::Ready(frame.map(|frame| frame.map_err(BoxError::from)));
            }
            let decoded = match frame {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(piece) => this.decode(&piece, false),
                    // Trailers: nothing of the answer's content.
                    Err(_) => continue,
                },
                Some(Err(error)) => return Poll::Ready(Some(Err(error.into()))),
                None => {
                    this.ended = true;
                    this.decode(&[], true)
                }
            };
            match decoded {
                Ok(bytes) if bytes.is_empty() => continue,
                Ok(bytes) => return Poll::Ready(Some(Ok(Frame::data(Bytes::from(bytes))))),
                Err(error) => {
                    this.ended = true;
                    let error = format!("its compressed answer cannot be read: {error}");
                    return Poll::Ready(Some(Err(error.into())));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended || (self.decoders.is_empty() && self.upstream.is_end_stream())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(encoding: Encoding, encoded: &[u8], pieces: usize) -> io::Result<Vec<u8>> {
        let mut decoder = Decoder::new(encoding)?;
        let mut out = Vec::new();
        let size = encoded.len().div_ceil(pieces).max(1);
        for piece in encoded.chunks(size) {
            out.extend(decoder.push(piece)?);
        }
        out.extend(decoder.finish()?);
        Ok(out)
    }

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn a_gzip_answer_decodes_whole_however_it_is_cut_into_pieces() {
        let text = br#"{"content":[{"type":"tool_use","input":{"reason":"See the files"}}]}"#;
        let encoded = gzip(text);
        for pieces in [1, 2, 7, encoded.len()] {
            assert_eq!(decoded(Encoding::Gzip, &encoded, pieces).unwrap(), text);
        }
    }

    #[test]
    fn every_encoding_decodes_and_a_cut_one_is_an_error() {
        let text = b"data: {\"type\":\"message_start\"}\n\n".repeat(50);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(&text).unwrap();
        let zstd = zstd::stream::encode_all(&text[..], 1).unwrap();
        for (encoding, encoded) in [
            (Encoding::Gzip, gzip(&text)),
            (Encoding::Deflate, zlib.finish().unwrap()),
            (Encoding::Zstd, zstd),
        ] {
            assert_eq!(
                decoded(encoding, &encoded, 3).unwrap(),
                text,
                "{encoding:?}"
            );
            let cut = &encoded[..encoded.len() - 4];
            assert!(decoded(encoding, cut, 3).is_err(), "{encoding:?} cut short");
        }
    }

    #[test]
    fn brotli_decodes_and_a_cut_stream_is_an_error() {
        // RFC 7932 by hand: a 16-bit window, one uncompressed meta-block of 5 bytes, then the
        // last, empty one.
        let encoded = [0x40, 0x00, 0x10, b'h', b'e', b'l', b'l', b'o', 0x03];
        assert_eq!(decoded(Encoding::Brotli, &encoded, 2).unwrap(), b"hello");
        assert!(decoded(Encoding::Brotli, &encoded[..6], 2).is_err());
    }

    #[test]
    fn the_encodings_are_read_in_the_order_applied_and_an_unknown_one_is_named() {
        let mut headers = HeaderMap::new();
        headers.append(header::CONTENT_ENCODING, "gzip, identity".parse().unwrap());
        headers.append(header::CONTENT_ENCODING, "br".parse().unwrap());
        assert_eq!(
            Encoding::of(&headers),
            Ok(vec![Encoding::Gzip, Encoding::Brotli])
        );
        headers.insert(header::CONTENT_ENCODING, "compress".parse().unwrap());
        assert_eq!(Encoding::of(&headers), Err("compress".to_owned()));
        assert_eq!(Encoding::of(&HeaderMap::new()), Ok(vec![]));
    }
}
