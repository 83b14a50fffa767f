package protocol

import (
	"io"
	"net/http"
	"sync"

	"github.com/inferload/inferload/record"
)

// torchServeReadBuffer matches the SSE reader's initial buffer: one Read
// of a chunked body rarely returns more.
const torchServeReadBuffer = 4 << 10

// readBuffers are the buffers TorchServe streams are read into, reused so
// a read costs no allocation.
var readBuffers = sync.Pool{New: func() any {
	b := make([]byte, torchServeReadBuffer)
	return &b
}}

// readTorchServeStream reads a streamed /predictions reply: the handler's
// output in HTTP chunks (send_intermediate_predict_response), opaque to
// the client. Each read that delivers bytes is one content event: the
// chunking is not visible once net/http has decoded it, and chunks that
// arrive together are read together, so the count is of arrivals - one a
// token when the server flushes each token and the client keeps up, fewer
// when it falls behind (docs/apis.md). The clean end of the body is the
// end.
func (cl *call) readTorchServeStream(resp *http.Response) error {
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	for empty := 0; ; {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			a := cl.readArrival()
			empty = 0
			cl.t.BytesIn += int64(n)
			if terr := cl.token(a, false); terr != nil {
				return terr
			}
		}
		switch {
		case err == io.EOF:
			cl.endRead()
			return emptyOutput(cl.t)
		case err != nil:
			return err
		case n == 0:
			if empty++; empty >= 100 {
				return errNoProgress
			}
		}
	}
}

// applyTorchServeBody checks a whole /predictions reply: any non-empty
// body is the answer, one content event.
func (cl *call) applyTorchServeBody(b []byte, a arrival) error {
	if len(b) > 0 {
		_ = cl.token(a, false) // one event never overruns
	}
	if cl.t.ContentEvents == 0 {
		return &failure{record.ErrEmptyOutput, "reply body is empty"}
	}
	return nil
}
