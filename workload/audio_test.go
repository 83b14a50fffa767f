package workload

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// Audio joins a class's specs: a canonical 16 kHz mono 16-bit WAV whose
// header says the drawn length and whose size matches it, the same bytes
// for the same (seed, index), different between requests, a signal that
// is neither silent nor clipped; lengths outside 1 s to 1 h are refused.
func TestAudio(t *testing.T) {
	t.Parallel()
	c := ClassConfig{Name: "asr", Weight: 1, Input: Fixed(8), Output: Fixed(1)}
	secs, err := ParseDist("uniform(1,5)")
	if err != nil {
		t.Fatal(err)
	}
	c.Audio = AudioConfig{Seconds: secs}
	m, err := NewMix(MixConfig{Seed: 3, Classes: []ClassConfig{c}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for i := range uint64(20) {
		s, again := m.Spec(i), m.Spec(i)
		if s.AudioSeconds < 1 || s.AudioSeconds > 5 || !bytes.Equal(s.Audio, again.Audio) {
			t.Fatalf("request %d: %d s, same bytes twice: %v", i, s.AudioSeconds, bytes.Equal(s.Audio, again.Audio))
		}
		seen[s.AudioSeconds] = true
		got, err := WAVSeconds(s.Audio)
		if err != nil || got != float64(s.AudioSeconds) || len(s.Audio) != 44+s.AudioSeconds*32000 {
			t.Errorf("request %d: header says %v s (%v), %d bytes; want %d s", i, got, err, len(s.Audio), s.AudioSeconds)
		}
		if rate, ch, bits := binary.LittleEndian.Uint32(s.Audio[24:]), binary.LittleEndian.Uint16(s.Audio[22:]), binary.LittleEndian.Uint16(s.Audio[34:]); rate != 16000 || ch != 1 || bits != 16 {
			t.Errorf("request %d: %d Hz, %d channels, %d bits", i, rate, ch, bits)
		}
		checkSignal(t, s.Audio[44:])
	}
	if len(seen) < 3 {
		t.Errorf("lengths drawn %v: want the distribution's spread", seen)
	}
	if a, b := m.Spec(1), m.Spec(2); a.AudioSeconds == b.AudioSeconds && bytes.Equal(a.Audio, b.Audio) {
		t.Error("two requests sent the same audio")
	}
	for _, bad := range []string{"0", "3601"} {
		d, _ := ParseDist(bad)
		c.Audio = AudioConfig{Seconds: d}
		if _, err := NewMix(MixConfig{Seed: 1, Classes: []ClassConfig{c}}); err == nil {
			t.Errorf("audio of %s s accepted", bad)
		}
	}
}

// checkSignal wants a signal of moderate loudness: not silence, never at
// full scale.
func checkSignal(t *testing.T, pcm []byte) {
	t.Helper()
	peak := 0
	for n := 0; n+1 < len(pcm); n += 2 {
		v := int(int16(binary.LittleEndian.Uint16(pcm[n:])))
		peak = max(peak, v, -v)
	}
	if peak < 1000 || peak > 32000 {
		t.Errorf("peak sample %d: want a signal, not silence or clipping", peak)
	}
}
