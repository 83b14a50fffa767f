package workload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// The synthetic audio's format: 16 kHz mono 16-bit PCM in a WAV file,
// what speech models resample their input to (Whisper's 16 kHz), so the
// server spends nothing on resampling that a real client's audio would
// not cost it too.
const (
	AudioSampleRate = 16000
	audioBytesPerS  = AudioSampleRate * 2
	wavHeaderBytes  = 44
	// MaxAudioSeconds bounds one request's audio (an hour: 115 MB).
	MaxAudioSeconds = 3600
	// audioVariants is how many one-second pieces a run's audio is
	// tiled from.
	audioVariants = 4
)

// AudioConfig asks for a WAV of Seconds seconds (drawn per request) with
// every request: what the transcriptions API uploads.
type AudioConfig struct {
	// Seconds is the audio's length in whole seconds (nil: no audio).
	Seconds Dist
}

// Validate checks the length's bounds.
func (c AudioConfig) Validate() error {
	if c.Seconds == nil {
		return nil
	}
	if c.Seconds.Min() < 1 || c.Seconds.Max() > MaxAudioSeconds {
		return fmt.Errorf("audio: seconds %s: want lengths of 1 to %d seconds", c.Seconds, MaxAudioSeconds)
	}
	return nil
}

// audioStream separates the draws of a request's audio from its other
// draws.
const audioStream = 0xa0d1_05ee

// withAudio adds a class's synthetic audio to the specs of its source.
type withAudio struct {
	src      Source
	seed     uint64
	cfg      AudioConfig
	variants [audioVariants][]byte // one second of PCM each
}

// newWithAudio renders the run's one-second pieces once, from the seed.
func newWithAudio(src Source, seed uint64, cfg AudioConfig) (*withAudio, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &withAudio{src: src, seed: seed, cfg: cfg}
	for k := range w.variants {
		w.variants[k] = speechLikeSecond(seed, k)
	}
	return w, nil
}

// Spec returns the source's spec with a WAV of a drawn length: its
// seconds are pieces drawn from (seed, i), so the same request sends the
// same bytes and neighbouring requests differ.
func (w *withAudio) Spec(i uint64) Spec {
	s := w.src.Spec(i)
	rng := rand.New(rand.NewPCG(w.seed^audioStream, splitmix64(i)))
	secs := w.cfg.Seconds.Sample(rng)
	wav := wavHeader(secs)
	for range secs {
		wav = append(wav, w.variants[rng.IntN(audioVariants)]...)
	}
	s.Audio, s.AudioSeconds = wav, secs
	return s
}

// wavHeader is the 44-byte header of a 16 kHz mono 16-bit PCM WAV of
// secs seconds, with room for its data.
func wavHeader(secs int) []byte {
	data := secs * audioBytesPerS
	b := make([]byte, wavHeaderBytes, wavHeaderBytes+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)              // fmt chunk size
	binary.LittleEndian.PutUint16(b[20:], 1)               // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)               // mono
	binary.LittleEndian.PutUint32(b[24:], AudioSampleRate) // sample rate
	binary.LittleEndian.PutUint32(b[28:], audioBytesPerS)  // byte rate
	binary.LittleEndian.PutUint16(b[32:], 2)               // block align
	binary.LittleEndian.PutUint16(b[34:], 16)              // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}

// speechLikeSecond renders one second of a voice-like signal: a pitch of
// 100–220 Hz with its first harmonics, its loudness rising and falling
// four times a second as syllables do, and a little noise. It is not
// speech (a model transcribes it as noise or nothing); what it gives the
// server is audio of the right length and format to decode and encode.
func speechLikeSecond(seed uint64, variant int) []byte {
	rng := rand.New(rand.NewPCG(seed^audioStream, uint64(variant)))
	f0 := 100 + 120*rng.Float64()
	out := make([]byte, audioBytesPerS)
	for n := range AudioSampleRate {
		t := float64(n) / AudioSampleRate
		v := 0.0
		for h := 1; h <= 5; h++ {
			v += math.Sin(2*math.Pi*f0*float64(h)*t) / float64(h)
		}
		env := math.Abs(math.Sin(2 * math.Pi * 4 * t))
		v = 0.3*env*v/2.3 + 0.01*(rng.Float64()*2-1)
		binary.LittleEndian.PutUint16(out[2*n:], uint16(int16(v*math.MaxInt16)))
	}
	return out
}

// WAVSeconds reads the length of a 16-bit PCM WAV's audio from its
// header, for checks on what was sent.
func WAVSeconds(wav []byte) (float64, error) {
	if len(wav) < wavHeaderBytes || string(wav[:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" {
		return 0, errors.New("not a canonical WAV header")
	}
	rate := binary.LittleEndian.Uint32(wav[24:])
	channels := binary.LittleEndian.Uint16(wav[22:])
	bits := binary.LittleEndian.Uint16(wav[34:])
	data := binary.LittleEndian.Uint32(wav[40:])
	if rate == 0 || channels == 0 || bits == 0 {
		return 0, errors.New("WAV header with a zero rate, channel count or sample size")
	}
	return float64(data) / float64(rate*uint32(channels)*uint32(bits/8)), nil
}
