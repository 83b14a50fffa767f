package live

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
)

// BenchmarkUIPerRunSecond is the live UI's work for one second of a run
// at 1,000 requests/s of 128 output tokens each, with one page open:
// 1,000 Observe calls, the Tick that closes the second, and the event
// stream's message (View of the new point, JSON-encoded). ns/op is the
// CPU the UI adds per second of run: 50 ms/op would be 5% of a core.
func BenchmarkUIPerRunSecond(b *testing.B) {
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
	m.Start("d", 0)
	m.Gauges(func() int { return 64 }, func() float64 { return 64 })
	gaps := make([]int64, 127)
	for i := range gaps {
		gaps[i] = 8 + int64(i%5)
	}
	res := make([]*record.Result, 1000)
	for i := range res {
		res[i] = ok(0, 50+int64(i%200), []string{"short", "long"}[i%2], gaps...)
	}
	var since int64
	b.ReportAllocs()
	b.ResetTimer()
	for sec := range b.N {
		for i, r := range res {
			r.SendUS = int64(sec)*1e6 + int64(i)*1000 - r.E2EUS + 1e6
		}
		for _, r := range res {
			m.Observe(r)
		}
		now = now.Add(time.Second)
		m.Tick()
		v := m.View(since, 0)
		since = v.Seq
		if _, err := json.Marshal(State{View: v}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUIPageOpen is a page opening on a run with a full hour of
// points: the first message carries the whole window.
func BenchmarkUIPageOpen(b *testing.B) {
	now := time.Unix(0, 0)
	m := NewMonitor(MonitorOptions{Now: func() time.Time { return now }})
	m.Start("d", 0)
	for s := range 3600 {
		m.Observe(ok(int64(s)*1000+500, 50, "short", 8, 9))
	}
	now = now.Add(3602 * time.Second)
	m.Tick()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b1, err := json.Marshal(State{View: m.View(0, 0)})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(b1)))
	}
}
