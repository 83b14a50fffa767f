package protocol

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/inferload/inferload/record"
)

// endWithout fails a stream that ended before the API's end-of-stream
// marker, naming the marker and, when the reply was not the streaming
// type the API sends (want), the Content-Type that says the server did
// not stream.
func (cl *call) endWithout(marker, want string, resp *http.Response) error {
	msg := fmt.Sprintf("stream ended without %s after %d content events", marker, cl.t.ContentEvents)
	ct := resp.Header.Get("Content-Type")
	if lct := strings.ToLower(ct); lct != "" && !strings.HasPrefix(lct, want) {
		msg += fmt.Sprintf(" (Content-Type %q: the server did not stream)", ct)
	}
	return &failure{record.ErrStreamIncomplete, msg}
}

// malformed fails a stream whose event or line did not parse.
func (cl *call) malformed(err error) error {
	return &failure{record.ErrMalformedEvent,
		fmt.Sprintf("event after %d content events: %v", cl.t.ContentEvents, err)}
}

// tooLarge fails a stream with an event or line over the size limit.
func (cl *call) tooLarge(err error) error {
	return &failure{record.ErrMalformedEvent, fmt.Sprintf("after %d content events: %v", cl.t.ContentEvents, err)}
}

// isBlank reports whether an event's data is empty or only spaces: a
// keep-alive.
func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// otherEvent sorts out the SSE events a native stream's reader does not
// scan: a keep-alive or an event of another type is skipped, and an event
// of type "error" (or an "error:" field) fails the stream as the OpenAI
// reader fails it.
func otherEvent(ev Event) (skip bool, err error) {
	switch string(ev.Type) {
	case "", "message":
		return isBlank(ev.Data), nil
	case "error":
		return false, streamError("error event: ", ev.Data)
	}
	return true, nil
}
