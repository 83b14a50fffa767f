package rundir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// A compressed JSON-lines file (records.jsonl.zst) is a run of zstd
// frames, each holding whole lines and followed by a skippable frame with
// the count of lines written so far. The writer ends a block at every
// background flush and the frame every second, so on disk, up to the last
// flush, the file is whole frames and then the whole blocks of the frame
// in progress: a reader decodes every whole frame and the whole blocks of
// a frame the file ends inside (a killed writer's), as it treats a
// cut-short last line of a plain file. Frames are found by walking their
// headers and block headers (RFC 8878 §3.1), never by decoding, so the
// uploader and the collector can cut a file between frames without a
// decoder's state.

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

// lineCountMagic starts the skippable frame the writer puts after each
// frame it ends: lineCountTag, then the number of lines written to the
// file so far (uint64, little-endian). zstd tools skip it; a reader
// compares it with the lines it decoded to count those lost in between.
const (
	lineCountMagic = skippableBase | 0xE
	lineCountTag   = "ILRC"
	lineCountLen   = 8 + len(lineCountTag) + 8
)

// appendLineCount appends the line-count frame for lines to dst.
func appendLineCount(dst []byte, lines uint64) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, lineCountMagic)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(lineCountTag)+8))
	dst = append(dst, lineCountTag...)
	return binary.LittleEndian.AppendUint64(dst, lines)
}

// lineCount reads a whole frame as a line-count frame.
func lineCount(frame []byte) (uint64, bool) {
	if len(frame) != lineCountLen || binary.LittleEndian.Uint32(frame) != lineCountMagic ||
		string(frame[8:12]) != lineCountTag {
		return 0, false
	}
	return binary.LittleEndian.Uint64(frame[12:]), true
}

// errNotZstd: bytes where a frame should start are not one.
var errNotZstd = errors.New("not a zstd frame")

// IsZstd reports whether b starts with a zstd frame's magic number.
func IsZstd(b []byte) bool {
	return len(b) >= 4 && binary.LittleEndian.Uint32(b) == zstdMagic
}

// frameLen returns the length of the frame at the start of b: 0 when b
// holds only part of it, an error when b does not start a frame.
func frameLen(b []byte) (int, error) {
	whole, _, err := frameExtent(b)
	return whole, err
}

// frameExtent walks the frame at the start of b: whole is its length when
// b holds all of it (else 0), blocks the end of its last whole block when
// b holds only part of it (0 when not even one block), err set when b
// does not start a frame.
func frameExtent(b []byte) (whole, blocks int, err error) {
	if len(b) < 4 {
		return 0, 0, nil
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&skippableMask == skippableBase {
		if len(b) < 8 {
			return 0, 0, nil
		}
		whole, err := wholeOrNone(8+int64(binary.LittleEndian.Uint32(b[4:])), len(b))
		return whole, 0, err
	}
	if magic != zstdMagic {
		return 0, 0, errNotZstd
	}
	if len(b) < 5 {
		return 0, 0, nil
	}
	fhd := b[4]
	if fhd&0x08 != 0 {
		return 0, 0, errors.New("zstd frame header has its reserved bit set")
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
			return 0, blocks, nil
		}
		h := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
		pos += 3
		size := int64(h >> 3)
		switch (h >> 1) & 3 {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return 0, 0, errors.New("zstd block of the reserved type")
		}
		if size > maxBlockSize {
			return 0, 0, fmt.Errorf("zstd block of %d bytes (at most %d)", size, maxBlockSize)
		}
		pos += size
		if h&1 != 0 { // the frame's last block
			break
		}
		if pos > MaxFrameBytes {
			return 0, 0, fmt.Errorf("zstd frame longer than %d bytes", MaxFrameBytes)
		}
		if pos <= int64(len(b)) {
			blocks = int(pos)
		}
	}
	if fhd&0x04 != 0 {
		pos += 4 // content checksum
	}
	whole, err = wholeOrNone(pos, len(b))
	return whole, blocks, err
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
// frame. It reads every record a damaged file still holds: bytes that are
// not a frame (zeros a crash left, junk) and frames that do not decode
// are skipped up to the next frame's magic number and counted in dropped;
// the writer's line counts after each frame tell how many lines such a
// stretch held (missing). A file that ends inside a frame (a killed
// writer, a cut file) sets truncated, and the whole blocks of that frame
// are read: the writer ends a block at every background flush.
type frameReader struct {
	src       *bufio.Reader
	dec       *zstd.Decoder
	raw       []byte // bytes of the next frame read so far
	out       []byte // decoded content not yet read
	at        int64  // file offset of raw[0]
	eof       bool
	truncated bool
	lines     uint64 // lines decoded, or the last line count seen
	dropped   int64
	missing   int64
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

// nextFrame decodes the next whole frame into out (which may stay empty:
// a skippable frame, a skipped stretch).
func (r *frameReader) nextFrame() error {
	for {
		l, err := frameLen(r.raw)
		if err != nil {
			r.skip()
			return nil
		}
		if l > 0 {
			r.frame(l)
			return nil
		}
		if r.eof {
			switch {
			case len(r.raw) == 0:
				return io.EOF
			case len(r.raw) < 4: // too short to start a frame: junk
				r.dropped += int64(len(r.raw))
				r.consume(len(r.raw))
			default:
				r.cutFrame()
			}
			return nil
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

// frame decodes the whole frame of l bytes at the start of raw.
func (r *frameReader) frame(l int) {
	if n, ok := lineCount(r.raw[:l]); ok {
		// A gap no writer could reach (2^40 lines) is damage, not a count.
		if n > r.lines && n-r.lines < 1<<40 {
			r.missing += int64(n - r.lines)
		}
		r.lines = n
		r.consume(l)
		return
	}
	out, err := r.dec.DecodeAll(r.raw[:l], r.out[:0])
	if err != nil {
		// A frame that does not decode: its length may be part of the
		// damage, so skip to the next magic number rather than by it.
		r.out = r.out[:0]
		r.skip()
		return
	}
	r.out = out
	r.lines += uint64(bytes.Count(out, []byte{'\n'}))
	r.consume(l)
}

// cutFrame reads the whole blocks of the frame the file ends inside and
// drops the rest.
func (r *frameReader) cutFrame() {
	r.truncated = true
	_, blocks, _ := frameExtent(r.raw)
	if blocks > 0 {
		out, err := r.dec.DecodeAll(r.raw[:blocks], r.out[:0])
		if errors.Is(err, io.ErrUnexpectedEOF) { // the frame's end is missing, as expected
			r.out = out
			r.lines += uint64(bytes.Count(out, []byte{'\n'}))
			r.consume(blocks)
		} else {
			r.out = r.out[:0]
		}
	}
	r.dropped += int64(len(r.raw))
	r.consume(len(r.raw))
}

// skip drops raw up to the next magic number of a frame after its first
// byte (at the end of the file, all of it).
func (r *frameReader) skip() {
	n := len(r.raw)
	if i := nextMagic(r.raw[1:]); i >= 0 {
		n = 1 + i
	} else if !r.eof {
		n = max(1, len(r.raw)-3) // a magic number may straddle the next read
	}
	r.dropped += int64(n)
	r.consume(n)
}

// nextMagic is the index of the first frame or line-count magic number
// in b, or -1.
func nextMagic(b []byte) int {
	var frame, count [4]byte
	binary.LittleEndian.PutUint32(frame[:], zstdMagic)
	binary.LittleEndian.PutUint32(count[:], lineCountMagic)
	at := -1
	for _, m := range [][]byte{frame[:], count[:]} {
		if i := bytes.Index(b, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

func (r *frameReader) consume(n int) {
	r.raw = append(r.raw[:0], r.raw[n:]...)
	r.at += int64(n)
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
