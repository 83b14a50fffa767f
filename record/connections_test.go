package record

import (
	"reflect"
	"testing"
)

// TestConnections: connections opened are counted over every record
// (warm-up and failures included), and the protocol is the replies' one,
// or mixed.
func TestConnections(t *testing.T) {
	t.Parallel()
	ok := func(proto string, opened, warmup bool) Result {
		return Result{Status: 200, E2EUS: 1000, Proto: proto, NewConn: opened, Warmup: warmup}
	}
	for _, tt := range []struct {
		name    string
		records []Result
		want    *Connections
	}{
		{"old records", []Result{{Status: 200, E2EUS: 1000}}, nil},
		{"http/1.1, one connection per user", []Result{ok("HTTP/1.1", true, true), ok("HTTP/1.1", true, false), ok("HTTP/1.1", false, false)},
			&Connections{Opened: 2, Protocol: "HTTP/1.1", Protocols: map[string]int64{"HTTP/1.1": 3}}},
		{"http/2 shares", []Result{ok("HTTP/2.0", true, false), ok("HTTP/2.0", false, false), ok("HTTP/2.0", false, false)},
			&Connections{Opened: 1, Protocol: "HTTP/2.0", Protocols: map[string]int64{"HTTP/2.0": 3}}},
		{"a connection reset before the reply", []Result{{Error: ErrConnReset, NewConn: true}, ok("HTTP/1.1", true, false)},
			&Connections{Opened: 2, Protocol: "HTTP/1.1", Protocols: map[string]int64{"HTTP/1.1": 1}}},
		{"mixed", []Result{ok("HTTP/1.1", true, false), ok("HTTP/2.0", true, false)},
			&Connections{Opened: 2, Protocol: ProtocolMixed, Protocols: map[string]int64{"HTTP/1.1": 1, "HTTP/2.0": 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAggregate()
			for i := range tt.records {
				a.Add(&tt.records[i])
			}
			if got := a.Summary(RunInfo{EndUS: 1e6}).Connections; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("connections %+v, want %+v", got, tt.want)
			}
		})
	}
}
