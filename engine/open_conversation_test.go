package engine

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/inferload/inferload/record"
	"github.com/inferload/inferload/workload"
)

// fixedThink is a think time of exactly d.
type fixedThink time.Duration

func (f fixedThink) Sample(*rand.Rand) time.Duration { return time.Duration(f) }

// TestConversationsUnderOpenLoop: each arrival starts a conversation, and
// its turn k+1 is sent Think after turn k's reply ended, so with a
// service time of L turn k+1 goes L+Think after turn k, whatever the
// arrivals do meanwhile. Later turns are open-loop records due when they
// were sent, never late.
func TestConversationsUnderOpenLoop(t *testing.T) {
	const service = 100 * time.Millisecond
	tests := []struct {
		name     string
		arrivals []time.Duration
		think    ThinkTime
		duration time.Duration
		requests int
		convs    int           // conversations started: one per arrival
		turns    int           // turns each conversation sent
		gap      time.Duration // between a conversation's turns' sends
	}{
		// Three arrivals, 10 ms apart: three 3-turn conversations, each
		// turn 100 ms service + 50 ms think after the last (all done
		// by 1 s).
		{"think", []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond}, fixedThink(50 * time.Millisecond), time.Second, 0, 3, 3, 150 * time.Millisecond},
		// Without think time the next turn goes as the reply ends.
		{"no think", []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond}, nil, time.Second, 0, 3, 3, 100 * time.Millisecond},
		// The arrivals, not the replies, start conversations: four
		// arrive in 35 ms, and the run ends before any second turn is due.
		{"duration", []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, time.Hour}, nil, 35 * time.Millisecond, 0, 4, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simulated(t, func(t *testing.T) {
				mix, err := workload.NewMix(workload.MixConfig{Seed: 1, Classes: []workload.ClassConfig{
					{Name: "chat", Weight: 1, Input: workload.Fixed(4), Output: workload.Fixed(1), Turns: 3}}})
				if err != nil {
					t.Fatal(err)
				}
				arr := &offsets{at: append(tt.arrivals, never)}
				rs := collect(t, Config{Client: &serviceClient{service: service}, Source: mix, Render: render, Clock: TimerClock{},
					Shape: OpenLoop{Arrivals: arr, Think: tt.think, LateAfter: time.Millisecond}, Duration: tt.duration,
					Requests: tt.requests, Grace: time.Second}, context.Background())
				bySession := map[uint64][]*record.Result{}
				for _, r := range rs {
					bySession[r.Session] = append(bySession[r.Session], r)
				}
				if len(bySession) != tt.convs {
					t.Fatalf("%d conversations, want %d (%d records)", len(bySession), tt.convs, len(rs))
				}
				for id, turns := range bySession {
					if len(turns) != tt.turns {
						t.Fatalf("conversation %d sent %d turns, want %d", id, len(turns), tt.turns)
					}
					for k, r := range turns {
						if r.Turn != k+1 || !r.OpenLoop || r.Late || r.IntendedUS != r.SendUS || r.Error != record.ErrNone {
							t.Errorf("conversation %d turn %d: %+v: want turn %d, open loop, on time, sent when due", id, k+1, r, k+1)
						}
						if k == 0 {
							continue
						}
						if gap := time.Duration(r.SendUS-turns[k-1].SendUS) * time.Microsecond; gap != tt.gap {
							t.Errorf("conversation %d: turn %d sent %v after turn %d, want %v", id, k+1, gap, k, tt.gap)
						}
					}
				}
			})
		})
	}
}

// TestLaterTurnsNeverLate: a later turn that waits for an in-flight slot
// shows the wait as queue delay but is never late (its due time is the
// server's doing), while a first turn that waits is late as any arrival.
// One slot, 100 ms service, no think: A arrives at 0 and B at 150 ms.
// A's turn 2 runs 100-200 ms; B waits for it (50 ms late) and runs
// 200-300 ms; A's turn 3, due at 200 ms, waits 100 ms for B's.
func TestLaterTurnsNeverLate(t *testing.T) {
	simulated(t, func(t *testing.T) {
		mix, err := workload.NewMix(workload.MixConfig{Seed: 1, Classes: []workload.ClassConfig{
			{Name: "chat", Weight: 1, Input: workload.Fixed(4), Output: workload.Fixed(1), Turns: 3}}})
		if err != nil {
			t.Fatal(err)
		}
		arr := &offsets{at: []time.Duration{0, 150 * time.Millisecond, never}}
		rs := collect(t, Config{Client: &serviceClient{service: 100 * time.Millisecond}, Source: mix, Render: render, Clock: TimerClock{},
			Shape: OpenLoop{Arrivals: arr, MaxInFlight: 1, LateAfter: time.Millisecond}, Duration: time.Second, Grace: time.Second}, context.Background())
		type key struct {
			intendedMS, queueMS int64
			turn                int
			late                bool
		}
		got := map[key]bool{}
		for _, r := range rs {
			got[key{r.IntendedUS / 1000, r.QueueDelayUS / 1000, r.Turn, r.Late}] = true
		}
		for _, want := range []key{
			{0, 0, 1, false},     // A's first turn, on time
			{150, 50, 1, true},   // B's first turn waited for A's second: the schedule's lateness
			{200, 100, 3, false}, // A's third waited for B's first: queue delay, never late
		} {
			if !got[want] {
				t.Errorf("no record %+v among %+v", want, got)
			}
		}
	})
}
