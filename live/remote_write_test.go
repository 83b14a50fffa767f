package live

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	writev2 "github.com/prometheus/client_golang/exp/api/remote/genproto/v2"
	"google.golang.org/protobuf/proto"

	"github.com/inferload/inferload/record"
)

// rwReceiver is a remote-write 2.0 endpoint that decodes each push and
// hands it to the test.
func rwReceiver(t *testing.T, status int) (string, <-chan *writev2.Request) {
	t.Helper()
	got := make(chan *writev2.Request, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "io.prometheus.write.v2.Request") {
			t.Errorf("content type %q, want RW 2.0", ct)
		}
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			t.Errorf("snappy: %v", err)
		}
		req := &writev2.Request{}
		if err := proto.Unmarshal(raw, req); err != nil {
			t.Errorf("decode: %v", err)
		}
		select {
		case got <- req:
		default:
		}
		// A 2.0 receiver says how many samples it stored; the client
		// treats a 2xx without the count as a 1.0-only receiver.
		w.Header().Set("X-Prometheus-Remote-Write-Samples-Written", strconv.Itoa(len(req.Timeseries)))
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1/write", got
}

// findSample returns the value of the series with these labels.
func findSample(req *writev2.Request, name string, want map[string]string) (float64, bool) {
	for _, ts := range req.Timeseries {
		lbls := writev2.DesymbolizeLabels(ts.LabelsRefs, req.Symbols, nil)
		m := map[string]string{}
		for i := 0; i+1 < len(lbls); i += 2 {
			m[lbls[i]] = lbls[i+1]
		}
		if m["__name__"] != name {
			continue
		}
		match := true
		for k, v := range want {
			match = match && m[k] == v
		}
		if match && len(ts.Samples) == 1 {
			return ts.Samples[0].Value, true
		}
	}
	return 0, false
}

// TestRemoteWriteV2: the final push at Close carries every request
// observed, as counters and histogram buckets with sorted labels, stamped
// with the writer's clock.
func TestRemoteWriteV2(t *testing.T) {
	t.Parallel()
	url, got := rwReceiver(t, http.StatusNoContent)
	m := NewMetrics("rw-test", "v0")
	now := time.UnixMilli(1_800_000_000_000)
	w, err := StartRemoteWrite(url, m, RemoteWriteOptions{Interval: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := &record.Result{Stream: true, TTFTUS: 100_000, E2EUS: 400_000, OutputTokens: 10, EventsUS: []int64{100_000, 200_000}}
		if i == 4 {
			r.Error = record.ErrHTTP5xx
		}
		m.Observe(r)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := <-got
	if len(req.Timeseries) == 0 {
		t.Fatal("empty push")
	}
	for _, ts := range req.Timeseries {
		l := writev2.DesymbolizeLabels(ts.LabelsRefs, req.Symbols, nil)
		for i := 2; i+1 < len(l); i += 2 {
			if l[i-2] > l[i] {
				t.Errorf("labels not sorted: %v", l)
			}
		}
		if ts.Samples[0].Timestamp != now.UnixMilli() {
			t.Errorf("timestamp %d, want %d", ts.Samples[0].Timestamp, now.UnixMilli())
		}
	}
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	checked := 0
	// every pushed series carries the default job and instance labels
	for _, s := range flatten(fams, 0, []string{"instance", host, "job", "inferload"}) {
		name := s.labels[1]
		if !strings.HasSuffix(name, "_total") && !strings.HasSuffix(name, "_count") {
			continue
		}
		want := map[string]string{}
		for i := 2; i+1 < len(s.labels); i += 2 {
			want[s.labels[i]] = s.labels[i+1]
		}
		if v, ok := findSample(req, name, want); !ok || v != s.value {
			t.Errorf("%s%v = %v (found %v), want %v", name, want, v, ok, s.value)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d counters checked", checked)
	}
}

// TestRemoteWriteErrors: bad options are refused up front, and a receiver
// that refuses the pushes is reported at Close without hanging.
func TestRemoteWriteErrors(t *testing.T) {
	t.Parallel()
	m := NewMetrics("rw-test", "v0")
	tests := []struct {
		name, url string
		opts      RemoteWriteOptions
		want      string
	}{
		// An unknown protocol version is refused before any push.
		{"version", "http://127.0.0.1:1/api/v1/write", RemoteWriteOptions{Version: "3"}, `version "3"`},
		// A URL with no http(s) scheme is refused, not pushed to.
		{"scheme", "127.0.0.1:9090/api/v1/write", RemoteWriteOptions{}, "not an http(s) URL"},
	}
	for _, tt := range tests {
		if _, err := StartRemoteWrite(tt.url, m, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	url, _ := rwReceiver(t, http.StatusBadRequest)
	w, err := StartRemoteWrite(url, m, RemoteWriteOptions{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(context.Background()); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("Close = %v, want the receiver's 400", err)
	}
}
