package record

import (
	"maps"
	"slices"
)

// Connections says how the run's requests reached the target: how many
// connections they opened and which protocol answered. On HTTP/1.1 a
// connection carries one request at a time, so a closed loop of N users
// opens about N; on HTTP/2 streams share connections, so "users" counts
// streams in flight, not connections (docs/plan.md, target.http2).
type Connections struct {
	// Opened counts records whose request opened a connection
	// (Result.NewConn), warm-up included: a connection opened then
	// carries later requests too.
	Opened int64 `json:"opened"`
	// Protocol is the protocol of every reply ("HTTP/1.1", "HTTP/2.0"),
	// or "mixed" when they differ; Protocols counts replies by protocol.
	Protocol  string           `json:"protocol"`
	Protocols map[string]int64 `json:"protocols"`
}

// ProtocolMixed is Connections.Protocol when replies came over more than
// one protocol.
const ProtocolMixed = "mixed"

// connState folds the records' connections and protocols.
type connState struct {
	opened int64
	protos map[string]int64
}

func (cs *connState) add(r *Result) {
	if r.NewConn {
		cs.opened++
	}
	if r.Proto != "" {
		if cs.protos == nil {
			cs.protos = map[string]int64{}
		}
		cs.protos[r.Proto]++
	}
}

// summary is nil when no request opened a connection or got a reply
// (records written before these fields existed).
func (cs *connState) summary() *Connections {
	if cs.opened == 0 && len(cs.protos) == 0 {
		return nil
	}
	c := &Connections{Opened: cs.opened, Protocol: ProtocolMixed, Protocols: maps.Clone(cs.protos)}
	if len(cs.protos) == 1 {
		c.Protocol = slices.Collect(maps.Keys(cs.protos))[0]
	}
	return c
}
