package schedule

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	tests := []struct {
		name    string
		ctx     context.Context
		due     time.Duration
		wantErr error
	}{
		// A request already due returns at once.
		{"already due", context.Background(), -time.Hour, nil},
		// Exactly due (offset 0 from a start in the past) returns at once.
		{"due now", context.Background(), 0, nil},
		// A canceled run issues nothing, even when a request is due.
		{"canceled and due", canceled, -time.Hour, context.Canceled},
		// A canceled run does not wait out a far-future due time.
		{"canceled, due in an hour", canceled, time.Hour, context.Canceled},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() { done <- Wait(tt.ctx, start, tt.due) }()
		select {
		case err := <-done:
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: Wait = %v, want %v", tt.name, err, tt.wantErr)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Wait did not return", tt.name)
		}
	}
}

func TestWaitCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Wait(ctx, time.Now(), time.Hour) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait ignored cancellation")
	}
}

func TestWaitRealTimer(t *testing.T) {
	t.Parallel()
	// One short real wait: it must not return early, and (with a generous
	// bound for a loaded 2-core machine) must not oversleep wildly.
	const due = 20 * time.Millisecond
	start := time.Now()
	if err := Wait(context.Background(), start, due); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < due || got > due+2*time.Second {
		t.Errorf("Wait(%v) took %v", due, got)
	}
}
