package rundir

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// A compressed JSON-lines file (records.jsonl.zst) is a run of whole zstd
// frames, one per writer flush, each holding whole lines. A frame is
// complete or absent on disk up to the last flush, so a reader decodes
// every complete frame and treats a cut-short last frame as a killed
// writer's, as it treats a cut-short last line of a plain file. Frames are
// found by walking their headers and block headers (RFC 8878 §3.1), never
// by decoding, so the uploader and the collector can cut a file between
// frames without a decoder's state.

const (
	zstdMagic     = 0xFD2FB528
	skippableMask = 0xFFFFFFF0
	skippableBase = 0x184D2A50
	// maxBlockSize is the largest block a frame may hold (RFC 8878 §3.1.1.2.3).
	maxBlockSize = 128 << 10
	// MaxFrameBytes bounds one compressed frame a reader accepts, and
	// maxDecodedFrame what it decodes to. The writer ends a frame by
	// frameTarget of input, so frames hold about that plus one line (at
	// most MaxLineBytes); anything bigger is not a file we wrote.
	MaxFrameBytes   = 2 * MaxLineBytes
	maxDecodedFrame = 2 * MaxLineBytes
)

// errNotZstd: bytes where a frame should start are not one.
var errNotZstd = errors.New("not a zstd frame")

// IsZstd reports whether b starts with a zstd frame's magic number.
func IsZstd(b []byte) bool {
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == zstdMagic
}

// frameLen returns the length of the frame at the start of b: 0 when b
// holds only part of it, an error when b does not start a frame.
func frameLen(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, nil
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&skippableMask == skippableBase {
		if len(b) < 8 {
			return 0, nil
		}
		return wholeOrNone(8+int64(binary.LittleEndian.Uint32(b[4:])), len(b))
	}
	if magic != zstdMagic {
		return 0, errNotZstd
	}
	if len(b) < 5 {
		return 0, nil
	}
	fhd := b[4]
	if fhd&0x08 != 0 {
		return 0, errors.New("zstd frame header has its reserved bit set")
	}
	pos := int64(5) + [4]int64{0, 1, 2, 4}[fhd&3] // dictionary id
	single := fhd&0x20 != 0
	if !single {
		pos++ // window descriptor
	}
	fcs := [4]int64{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	pos += fcs
	for {
		if int64(len(b)) < pos+3 {
			return 0, nil
		}
		h := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
		pos += 3
		size := int64(h >> 3)
		switch (h >> 1) & 3 {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return 0, errors.New("zstd block of the reserved type")
		}
		if size > maxBlockSize {
			return 0, fmt.Errorf("zstd block of %d bytes (at most %d)", size, maxBlockSize)
		}
		pos += size
		if h&1 != 0 { // the frame's last block
			break
		}
		if pos > MaxFrameBytes {
			return 0, fmt.Errorf("zstd frame longer than %d bytes", MaxFrameBytes)
		}
	}
	if fhd&0x04 != 0 {
		pos += 4 // content checksum
	}
	return wholeOrNone(pos, len(b))
}

func wholeOrNone(n int64, have int) (int, error) {
	if n > MaxFrameBytes {
		return 0, fmt.Errorf("zstd frame longer than %d bytes", MaxFrameBytes)
	}
	if n > int64(have) {
		return 0, nil
	}
	return int(n), nil
}

// CompleteFrames returns how many bytes at the start of b are whole
// frames: where a compressed file may be cut with nothing decodable lost.
func CompleteFrames(b []byte) int {
	n := 0
	for {
		l, err := frameLen(b[n:])
		if err != nil || l == 0 {
			return n
		}
		n += l
	}
}

// newFrameDecoder makes a decoder for one frame at a time, bounded so a
// hostile frame cannot claim unbounded memory. It starts no goroutines.
func newFrameDecoder() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecodedFrame))
	if err != nil {
		panic(err) // only an invalid option errs, and these are constant
	}
	return d
}

// DecodeFrames decodes the whole frames at the start of b, appending
// their content to dst, and returns it with the number of bytes of b they
// took; the rest of b is a frame still arriving. An error means b holds
// something that is not a frame we wrote, or a frame that does not decode.
func DecodeFrames(dst, b []byte) ([]byte, int, error) {
	d := newFrameDecoder()
	defer d.Close()
	n := 0
	for {
		l, err := frameLen(b[n:])
		if err != nil {
			return dst, n, fmt.Errorf("byte %d: %w", n, err)
		}
		if l == 0 {
			return dst, n, nil
		}
		if dst, err = d.DecodeAll(b[n:n+l], dst); err != nil {
			return dst, n, fmt.Errorf("frame at byte %d: %w", n, err)
		}
		n += l
	}
}

// frameReader is the decoded content of a compressed file, frame by
// frame. At the end of the file it reports io.EOF and, when the file
// ended inside a frame, sets truncated.
type frameReader struct {
	src       *bufio.Reader
	dec       *zstd.Decoder
	raw       []byte // bytes of the next frame read so far
	out       []byte // decoded content not yet read
	at        int64  // file offset of raw[0]
	eof       bool
	truncated bool
}

func newFrameReader(src *bufio.Reader) *frameReader {
	return &frameReader{src: src, dec: newFrameDecoder()}
}

func (r *frameReader) Close() { r.dec.Close() }

func (r *frameReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if err := r.nextFrame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// nextFrame decodes the next whole frame into out.
func (r *frameReader) nextFrame() error {
	for {
		l, err := frameLen(r.raw)
		if err != nil {
			return fmt.Errorf("byte %d: %w", r.at, err)
		}
		if l > 0 {
			out, err := r.dec.DecodeAll(r.raw[:l], r.out[:0])
			if err != nil {
				return fmt.Errorf("frame at byte %d: corrupt: %w", r.at, err)
			}
			r.out = out
			r.raw = append(r.raw[:0], r.raw[l:]...)
			r.at += int64(l)
			return nil
		}
		if r.eof {
			r.truncated = len(r.raw) > 0
			return io.EOF
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

// fill reads more of the file onto raw.
func (r *frameReader) fill() error {
	if len(r.raw) == cap(r.raw) {
		r.raw = append(r.raw, make([]byte, max(64<<10, len(r.raw)))...)[:len(r.raw)]
	}
	n, err := r.src.Read(r.raw[len(r.raw):cap(r.raw)])
	r.raw = r.raw[:len(r.raw)+n]
	if errors.Is(err, io.EOF) {
		r.eof = true
		return nil
	}
	return err
}
