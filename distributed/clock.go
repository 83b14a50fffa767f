package distributed

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
)

// ClockOffset is how far a machine's clock is from the collector's: the
// collector's time minus this machine's, measured over the request with
// the shortest round trip, so the error is at most half of RTT.
type ClockOffset struct {
	Offset time.Duration `json:"offset"`
	RTT    time.Duration `json:"rtt"`
}

// clockProbes is how many round trips MeasureClock makes.
const clockProbes = 5

// MeasureClock asks the collector for its time clockProbes times and keeps
// the probe with the shortest round trip (as NTP does): its offset assumes
// the answer was made half-way through it.
func MeasureClock(ctx context.Context, client *http.Client, url string, now func() time.Time) (ClockOffset, error) {
	best := ClockOffset{RTT: -1}
	for range clockProbes {
		t0 := now()
		at, err := collectorNow(ctx, client, url)
		if err != nil {
			return ClockOffset{}, err
		}
		t1 := now()
		rtt := t1.Sub(t0)
		if best.RTT < 0 || rtt < best.RTT {
			best = ClockOffset{Offset: at.Sub(t0.Add(rtt / 2)), RTT: rtt}
		}
	}
	return best, nil
}

func collectorNow(ctx context.Context, client *http.Client, url string) (time.Time, error) {
	resp, err := call(ctx, client, http.MethodGet, strings.TrimRight(url, "/")+"/v1/clock", nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("collector %s: %w", url, err)
	}
	defer resp.Body.Close()
	var body struct {
		Now time.Time `json:"now"`
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return time.Time{}, fmt.Errorf("collector %s: %w", url, &StatusError{What: "clock", Code: resp.StatusCode, Status: resp.Status, Message: strings.TrimSpace(string(msg))})
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil || body.Now.IsZero() {
		return time.Time{}, fmt.Errorf("collector %s: clock: no time in the answer", url)
	}
	return body.Now, nil
}

// SegmentInfo is segment.json: which segment a run directory holds and
// its clock's offset from the collector's, so a merge places it on the
// collector's clock rather than trusting every machine's own.
type SegmentInfo struct {
	Segment   string      `json:"segment"`
	Collector string      `json:"collector"`
	Clock     ClockOffset `json:"clock"`
}

// WriteSegmentInfo writes segment.json into a run directory.
func WriteSegmentInfo(dir string, seg schedule.Segment, collector string, c ClockOffset) error {
	return rundir.WriteJSON(filepath.Join(dir, rundir.Segment), SegmentInfo{Segment: seg.String(), Collector: collector, Clock: c})
}
