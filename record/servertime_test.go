package record

import "testing"

func TestServerTimeDecomposition(t *testing.T) {
	t.Parallel()
	// Open loop, sent 2 ms after its intended time: the client's TTFT from
	// the intended time is 60 ms, 58 ms from the send; the server queued
	// 30 ms and prefilled 20 ms, so 8 ms were spent outside it.
	open := Result{ID: 1, OpenLoop: true, IntendedUS: 1000, SendUS: 3000, QueueDelayUS: 2000, Stream: true,
		TTFTUS: 60_000, E2EUS: 200_000, OutputTokens: 10, CachedTokens: 4,
		Server: &ServerTime{QueueUS: 30_000, HasQueue: true, PrefillUS: 20_000, DecodeUS: 130_000}}
	// Closed loop, llama.cpp (no queue figure): outside is TTFT − prefill.
	closed := Result{ID: 2, SendUS: 5000, Stream: true, TTFTUS: 25_000, E2EUS: 90_000, OutputTokens: 5,
		Server: &ServerTime{PrefillUS: 24_000, DecodeUS: 60_000}}
	plain := Result{ID: 3, SendUS: 6000, Stream: true, TTFTUS: 9000, E2EUS: 20_000, OutputTokens: 3}
	// A non-streamed llama.cpp reply: its timings count, but it has no
	// first token of its own, so nothing outside the server.
	whole := Result{ID: 4, SendUS: 7000, E2EUS: 50_000, OutputTokens: 5,
		Server: &ServerTime{PrefillUS: 22_000, DecodeUS: 25_000}}
	if us, ok := OutsideUS(&open); !ok || us != 8000 {
		t.Errorf("open-loop outside %d %v, want 8000", us, ok)
	}
	if us, ok := OutsideUS(&closed); !ok || us != 1000 {
		t.Errorf("closed-loop outside %d %v, want 1000", us, ok)
	}
	a := NewAggregate()
	for _, r := range []Result{open, closed, plain, whole} {
		a.Add(&r)
	}
	s := a.Summary(RunInfo{Mode: ModeClosed})
	st := s.ServerTime
	if st == nil {
		t.Fatal("no server_time")
	}
	if st.Requests != 3 || st.CachedTokens != 4 || st.PrefillMS.Count != 3 || st.OutsideMS.Count != 2 {
		t.Errorf("requests %d cached %d, prefill %d outside %d; want 3, 4, 3 and 2 (the whole reply has no outside)",
			st.Requests, st.CachedTokens, st.PrefillMS.Count, st.OutsideMS.Count)
	}
	if st.QueueMS == nil || st.QueueMS.Count != 1 || st.QueueMS.Max != 30 {
		t.Errorf("queue %+v, want one request of 30 ms", st.QueueMS)
	}
	if st.PrefillMS.Min != 20 || st.PrefillMS.Max != 24 || st.DecodeMS.Max != 130 || st.OutsideMS.Min != 1 || st.OutsideMS.Max != 8 {
		t.Errorf("prefill %+v decode %+v outside %+v", st.PrefillMS, st.DecodeMS, st.OutsideMS)
	}
	if s.Classes[DefaultClass].ServerTime == nil || s.Classes[DefaultClass].ServerTime.Requests != 3 {
		t.Errorf("class breakdown lacks server_time: %+v", s.Classes[DefaultClass].ServerTime)
	}
	b := NewAggregate()
	b.Add(&plain)
	if b.Summary(RunInfo{Mode: ModeClosed}).ServerTime != nil {
		t.Error("server_time present without any server timings")
	}
}

// TestServerTimeInfersTheWait: a server that reports no queue (llama.cpp)
// has each streamed request's wait inferred as its time outside the
// server beyond the least of them (the floor: a request that found the
// server free). Five requests found it free (1 ms outside), five waited
// 100 ms more: the floor is 1 ms, the wait 0 at p50 and 100 ms at p90.
// A server that reports its queue has no inferred wait.
func TestServerTimeInfersTheWait(t *testing.T) {
	t.Parallel()
	a := NewAggregate()
	for i := range 10 {
		outside := int64(1000)
		if i >= 5 {
			outside += 100_000
		}
		a.Add(&Result{ID: uint64(i), SendUS: int64(i) * 1000, Stream: true, TTFTUS: 20_000 + outside, E2EUS: 90_000 + outside, OutputTokens: 5,
			Server: &ServerTime{PrefillUS: 20_000, DecodeUS: 60_000}})
	}
	st := a.Summary(RunInfo{Mode: ModeClosed}).ServerTime
	if st == nil || st.WaitMS == nil {
		t.Fatalf("server_time %+v: want an inferred wait", st)
	}
	if st.OutsideFloorMS != 1 || st.WaitMS.Count != 10 || st.WaitMS.P50 != 0 || st.WaitMS.P90 < 99.9 || st.WaitMS.P90 > 100.1 || st.WaitMS.Min != 0 {
		t.Errorf("floor %v ms, wait %+v: want floor 1, wait 0 at p50 and 100 at p90", st.OutsideFloorMS, *st.WaitMS)
	}
	b := NewAggregate()
	b.Add(&Result{ID: 1, Stream: true, TTFTUS: 50_000, E2EUS: 90_000, OutputTokens: 5,
		Server: &ServerTime{QueueUS: 29_000, HasQueue: true, PrefillUS: 20_000, DecodeUS: 40_000}})
	if st := b.Summary(RunInfo{Mode: ModeClosed}).ServerTime; st.WaitMS != nil || st.OutsideFloorMS != 0 {
		t.Errorf("a server reporting its queue got an inferred wait: %+v", st)
	}
}

// TestOutsideOfATask: a chain or graph task's record carries its final
// call's server timings, so time outside the server is judged on that
// call's own TTFT, not on the task's.
func TestOutsideOfATask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []ChainStep
		want  int64
		ok    bool
	}{
		// plan 0-100 ms, answer sent at 100 ms, first token 25 ms later, of
		// which the server queued 5 and prefilled 18: 2 ms outside (the
		// task's TTFT of 125 ms would claim 102).
		{"chain", []ChainStep{{Name: "plan", SendUS: 0, DurUS: 100_000, TTFTUS: 40_000},
			{Name: "answer", SendUS: 100_000, DurUS: 200_000, TTFTUS: 25_000}}, 2000, true},
		// Two roots ending out of list order: the one that ended last is final.
		{"graph", []ChainStep{{Name: "slow", SendUS: 0, DurUS: 300_000, TTFTUS: 26_000},
			{Name: "fast", SendUS: 0, DurUS: 100_000, TTFTUS: 90_000}, {Name: "tool", Kind: "tool", Skipped: true}}, 3000, true},
		// A final call without a first token of its own: no figure.
		{"no ttft", []ChainStep{{Name: "embed", SendUS: 0, DurUS: 100_000}}, 0, false},
	}
	for _, tt := range tests {
		r := Result{SendUS: 0, Stream: true, TTFTUS: 125_000, E2EUS: 300_000, Chain: tt.steps,
			Server: &ServerTime{QueueUS: 5000, HasQueue: true, PrefillUS: 18_000}}
		if us, ok := OutsideUS(&r); us != tt.want || ok != tt.ok {
			t.Errorf("%s: outside %d %v, want %d %v", tt.name, us, ok, tt.want, tt.ok)
		}
	}
}
