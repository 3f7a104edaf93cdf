//! Buffered reading into a buffer that starts on a page boundary.
//!
//! Most of the time spent on a large log that is already cached goes to the kernel copying it
//! into the read buffer, and how fast that copy runs depends on where the buffer starts. A
//! `BufReader`'s buffer starts wherever the allocator put it, a few bytes past a 32-byte
//! boundary or a few more, and some of those places get a much slower copy: which one a run got
//! changed with the command line (`doc/internals.md`, "Benchmarks", has the measurements). A
//! buffer on a page boundary, as the page cache's own pages are, always gets the fast copy.

use std::cell::RefCell;
use std::io::{self, BufRead, Read};

/// The buffer's start is a multiple of this.
const ALIGNMENT: usize = 4096;

thread_local! {
    /// The memory of the last reader dropped on this thread, for the next one: a buffer must be
    /// zeroed before it is read into, and zeroing a new one for each of many small files cost
    /// more than reading them.
    static SPARE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A buffered reader like [`std::io::BufReader`], whose buffer starts on a page boundary: the
/// kernel copies a cached file into it at full speed. Each fill is one `read` of the inner
/// reader into the whole buffer, with nothing to initialise first.
#[derive(Debug)]
pub struct AlignedBufReader<R> {
    inner: R,
    /// Room for the buffer, and for the distance to the first page boundary in it.
    memory: Vec<u8>,
    /// Where the buffer starts in `memory`.
    start: usize,
    capacity: usize,
    /// What the buffer holds: `position..filled`, counted from `start`.
    position: usize,
    filled: usize,
}

impl<R: Read> AlignedBufReader<R> {
    /// Reads `inner` through a buffer of `capacity` bytes.
    pub fn with_capacity(capacity: usize, inner: R) -> AlignedBufReader<R> {
        let size = capacity + ALIGNMENT;
        let mut memory = SPARE.with_borrow_mut(std::mem::take);
        if memory.len() != size {
            memory = vec![0; size];
        }
        let start = memory.as_ptr().addr().next_multiple_of(ALIGNMENT) - memory.as_ptr().addr();
        AlignedBufReader {
            inner,
            memory,
            start,
            capacity,
            position: 0,
            filled: 0,
        }
    }
}

impl<R> Drop for AlignedBufReader<R> {
    fn drop(&mut self) {
        let memory = std::mem::take(&mut self.memory);
        // Ignored when the thread is ending: there is no next reader then.
        let _ = SPARE.try_with(|spare| *spare.borrow_mut() = memory);
    }
}

impl<R: Read> Read for AlignedBufReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl<R: Read> BufRead for AlignedBufReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.position == self.filled {
            let buffer = &mut self.memory[self.start..self.start + self.capacity];
            self.filled = self.inner.read(buffer)?;
            self.position = 0;
        }
        Ok(&self.memory[self.start + self.position..self.start + self.filled])
    }

    fn consume(&mut self, amount: usize) {
        self.position = (self.position + amount).min(self.filled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_starts_on_a_page_boundary() {
        for capacity in [1, 100, 64 << 10, 128 << 10] {
            let mut reader = AlignedBufReader::with_capacity(capacity, &[7u8; 10][..]);
            let start = reader.fill_buf().expect("read").as_ptr().addr();
            assert_eq!(start % ALIGNMENT, 0, "{capacity}");
        }
    }

    #[test]
    fn reads_what_a_bufreader_reads_whatever_the_sizes() {
        let text: Vec<u8> = (0..10_000u32).flat_map(|n| n.to_le_bytes()).collect();
        for capacity in [1, 3, 4096, 100_000] {
            let mut read_back = Vec::new();
            let mut reader = AlignedBufReader::with_capacity(capacity, &text[..]);
            let mut chunk = vec![0; 777];
            loop {
                let read = reader.read(&mut chunk).expect("read");
                if read == 0 {
                    break;
                }
                read_back.extend_from_slice(&chunk[..read]);
                // And through fill_buf and consume, a little at a time.
                let available = reader.fill_buf().expect("fill").len();
                let taken = available.min(5);
                read_back.extend_from_slice(&reader.fill_buf().expect("fill")[..taken]);
                reader.consume(taken);
            }
            assert_eq!(read_back, text, "{capacity}");
        }
    }
}
