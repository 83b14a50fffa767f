package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inferload/inferload/protocol"
	"github.com/inferload/inferload/record"
)

func TestImageJobCost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		job  imageJob
		want time.Duration
	}{
		// 1000×1000 = 1 MP at 30 steps: 20 ms + 30 × 20 ms.
		{imageJob{n: 1, width: 1000, height: 1000, steps: 30}, 620 * time.Millisecond},
		// Four times the pixels, four times the denoising.
		{imageJob{n: 1, width: 2000, height: 2000, steps: 30}, 20*time.Millisecond + 4*600*time.Millisecond},
		// Twice the steps, twice the denoising.
		{imageJob{n: 1, width: 1000, height: 1000, steps: 60}, 1220 * time.Millisecond},
		// n images one after another.
		{imageJob{n: 3, width: 1000, height: 1000, steps: 30}, 3 * 620 * time.Millisecond},
	} {
		if got := tt.job.cost(); got != tt.want {
			t.Errorf("%+v: cost %v, want %v", tt.job, got, tt.want)
		}
	}
}

// imagesClient is the protocol's client against a simulator on 127.0.0.1.
func imagesClient(t *testing.T, edit func(*Config)) (*protocol.OpenAI, func(extra map[string]any) *protocol.Trace) {
	t.Helper()
	p, _ := LookupProfile("tiny")
	cfg := Config{Profile: p, Seed: 1, Speedup: 20}
	if edit != nil {
		edit(&cfg)
	}
	s, base, err := Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, err := protocol.NewOpenAI(protocol.OpenAIOptions{BaseURL: base, ConnectTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	do := func(extra map[string]any) *protocol.Trace {
		body, err := protocol.OpenAIBody{Prompt: "a lighthouse at dusk", Extra: extra}.Render(protocol.APIImages)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var tr protocol.Trace
		c.Do(ctx, &protocol.Request{API: protocol.APIImages, Body: body}, &tr)
		if ctx.Err() != nil {
			t.Fatalf("request ran into the test deadline: %+v", tr)
		}
		return &tr
	}
	return c, do
}

// The images client against the simulator: success, latency growing with
// resolution, a LoRA name passed through, and bad requests classified.
func TestImagesAgainstSim(t *testing.T) {
	t.Parallel()
	_, do := imagesClient(t, nil)
	small := do(map[string]any{"size": "256x256", "steps": 20, "lora": "pixel-art"})
	large := do(map[string]any{"size": "2048x2048", "steps": 20, "response_format": "url"})
	for _, tr := range []*protocol.Trace{small, large} {
		if tr.Err != record.ErrNone || tr.Status != 200 || tr.FirstToken != tr.End {
			t.Fatalf("trace err %q %s status %d", tr.Err, tr.ErrMsg, tr.Status)
		}
	}
	// At speedup 20: 256² is ~3 ms, 2048² ~85 ms.
	if e2e := func(tr *protocol.Trace) time.Duration { return tr.End.Sub(tr.Sent) }; e2e(large)-e2e(small) < 50*time.Millisecond {
		t.Errorf("2048x2048 took %v, 256x256 %v: want the large one clearly slower", e2e(large), e2e(small))
	}
	for extra, want := range map[string]map[string]any{
		"size":  {"size": "huge"},
		"steps": {"steps": 0},
		"n":     {"n": 11},
		"model": {"model": "dall-e-9"},
	} {
		if tr := do(want); tr.Err != record.ErrHTTP4xx {
			t.Errorf("bad %s: error %q (%s), want http_4xx", extra, tr.Err, tr.ErrMsg)
		}
	}
}

// Every fault of the simulator reaches the images client as its kind of
// failure.
func TestImagesFaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		fault Faults
		want  record.ErrorKind
	}{
		{Faults{Status: map[int]float64{503: 1}}, record.ErrHTTP5xx},
		{Faults{Status: map[int]float64{429: 1}}, record.ErrHTTP429},
		{Faults{Reset: 1}, record.ErrConnReset},
		{Faults{Malformed: 1}, record.ErrMalformedEvent},
		{Faults{ErrorEvent: 1}, record.ErrHTTP5xx},
		{Faults{Stall: DelayFault{Fraction: 1, Duration: time.Millisecond}}, record.ErrNone},
		{Faults{SlowFirstByte: DelayFault{Fraction: 1, Duration: time.Millisecond}}, record.ErrNone},
	} {
		_, do := imagesClient(t, func(c *Config) { c.Faults = tt.fault })
		if tr := do(map[string]any{"size": "64x64"}); tr.Err != tt.want {
			t.Errorf("%+v: error %q (%s), want %q", tt.fault, tr.Err, tr.ErrMsg, tt.want)
		}
	}
}

// With a queue limit, requests beyond the two slots and the queue are
// refused with the profile's status: failures grow with concurrency.
func TestImagesQueueFull(t *testing.T) {
	t.Parallel()
	_, do := imagesClient(t, func(c *Config) {
		c.Profile.QueueLimit = 1
		c.Speedup = 1
	})
	const users = 6
	var wg sync.WaitGroup
	errs := make(chan record.ErrorKind, users)
	for range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- do(map[string]any{"size": "1024x1024", "steps": 40}).Err // ~860 ms each
		}()
	}
	wg.Wait()
	close(errs)
	count := map[record.ErrorKind]int{}
	for e := range errs {
		count[e]++
	}
	// 2 generate, 1 waits, 3 are refused — unless a slow start lets one
	// finish first, so allow a little slack but demand refusals.
	if count[record.ErrHTTP429] < 1 || count[record.ErrNone] < 3 || count[record.ErrHTTP429]+count[record.ErrNone] != users {
		t.Errorf("outcomes %v: want some 429s and the rest successes", count)
	}
}
