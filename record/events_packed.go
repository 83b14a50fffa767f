package record

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// The packed form of a record's event offsets, "events_b64", is what
// records.jsonl.zst holds. The offsets' deltas (as in
// "events_dus": the first offset, then each gap from the one before, with
// wrapping arithmetic) are zigzag-coded (0, -1, 1, -2 … → 0, 1, 2, 3 …) and
// laid out in byte planes: one byte w (1–8, the bytes the largest value
// needs), then w planes of n bytes each, the most significant plane first,
// byte t of a plane belonging to delta t. The whole is base64 (standard
// alphabet, no padding) in a JSON string.
//
// Why planes: decimal text spends about 3.4 bits a digit whatever the
// value, and zstd codes bytes one at a time. In planes, the high bytes of
// gaps of a few tens of milliseconds are nearly constant and vanish under
// compression, and the low bytes carry the jitter at close to its entropy.
// On a simulated run's records (64 streams, 200 tokens) zstd's fastest level
// gives 1.84 B/token against 2.27 for decimal deltas in 4 MB frames
// (BENCHMARKS.md, "Record size", BenchmarkRecompressRecords); the rest of
// every record stays readable with jq, and `inferload export --jsonl`
// prints the offsets absolute.

// b64 is the packed form's base64: standard alphabet, no padding, so a
// value is JSON-string-safe as it stands.
var b64 = base64.RawStdEncoding

// b64Strict refuses a value whose unused trailing bits are set, so every
// value has one spelling.
var b64Strict = b64.Strict()

// packedWidth is the bytes the largest zigzag-coded delta needs (1–8).
func packedWidth(events []int64) int {
	var or uint64
	prev := int64(0)
	for _, v := range events {
		or |= zigzag(v - prev)
		prev = v
	}
	w := 1
	for w < 8 && or>>(8*w) != 0 {
		w++
	}
	return w
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// appendEventsPacked writes events as "events_b64"; nothing when empty, as
// appendEvents omits "events_us". The planes are produced in order into a
// buffer on the stack and base64-coded a whole number of 3-byte groups at a
// time, so nothing is allocated beyond b's growth.
func appendEventsPacked(b []byte, events []int64) []byte {
	if len(events) == 0 {
		return b
	}
	w := packedWidth(events)
	b = append(b, `,"events_b64":"`...)
	var chunk [768]byte // a multiple of 3: only the last Encode may pad
	chunk[0] = byte(w)
	k := 1
	for p := w - 1; p >= 0; p-- {
		shift := uint(8 * p)
		prev := int64(0)
		for _, v := range events {
			if k == len(chunk) {
				b = b64.AppendEncode(b, chunk[:])
				k = 0
			}
			chunk[k] = byte(zigzag(v-prev) >> shift)
			k++
			prev = v
		}
	}
	b = b64.AppendEncode(b, chunk[:k])
	return append(b, '"')
}

// errPacked: an "events_b64" value that is not the packed form.
var errPacked = errors.New("events_b64 is not packed event offsets")

// unpackEvents reads an "events_b64" value back into absolute offsets.
func unpackEvents(s []byte) ([]int64, error) {
	raw := make([]byte, b64.DecodedLen(len(s)))
	n, err := b64Strict.Decode(raw, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPacked, err)
	}
	raw = raw[:n]
	if len(raw) < 2 {
		return nil, fmt.Errorf("%w: %d bytes", errPacked, len(raw))
	}
	w := int(raw[0])
	if w < 1 || w > 8 || (len(raw)-1)%w != 0 {
		return nil, fmt.Errorf("%w: width %d for %d bytes", errPacked, w, len(raw)-1)
	}
	count := (len(raw) - 1) / w
	events := make([]int64, count)
	planes := raw[1:]
	prev := int64(0)
	for t := range events {
		var u uint64
		for p := range w {
			u = u<<8 | uint64(planes[p*count+t])
		}
		prev += unzigzag(u)
		events[t] = prev
	}
	return events, nil
}
