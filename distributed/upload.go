package distributed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/inferload/inferload/rundir"
	"github.com/inferload/inferload/schedule"
)

// Ready tells the collector at url that segment seg is ready and waits for
// the common start the collector gives once every segment is: the instant
// to pass as experiment.Options.StartAt.
func Ready(ctx context.Context, client *http.Client, url string, seg schedule.Segment) (time.Time, error) {
	resp, err := call(ctx, client, http.MethodPost, segmentURL(url, seg, "ready"), nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("collector %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return time.Time{}, fmt.Errorf("collector %s: %w", url, &StatusError{What: "ready", Code: resp.StatusCode, Status: resp.Status, Message: strings.TrimSpace(string(msg))})
	}
	var body struct {
		StartAt time.Time `json:"start_at"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.StartAt.IsZero() {
		return time.Time{}, fmt.Errorf("collector %s: ready: no start instant in the answer", url)
	}
	return body.StartAt, nil
}

// call makes one request of the collector's API.
func call(ctx context.Context, client *http.Client, method, url string, body io.Reader) (*http.Response, error) {
	return callWith(ctx, client, method, url, body, nil)
}

// inFlightHeader carries a segment's requests in flight on its uploads,
// for the collector's live view.
const inFlightHeader = "X-Inferload-In-Flight"

// callWith is call with extra headers.
func callWith(ctx context.Context, client *http.Client, method, url string, body io.Reader, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	return client.Do(req)
}

func segmentURL(url string, seg schedule.Segment, rest string) string {
	return fmt.Sprintf("%s/v1/segments/%d/%s", strings.TrimRight(url, "/"), seg.Index, rest)
}

// Uploader streams a segment's run directory to the collector while the
// run writes it: every Every, the complete lines each file gained since
// the last upload (a lost machine loses what its last second wrote). The
// collector unreachable, it keeps the run directory and tries again next
// time; nothing the run does waits on it.
type Uploader struct {
	client *http.Client
	url    string
	seg    schedule.Segment
	dir    string
	every  time.Duration
	// inFlight, when set, reads the segment's requests in flight, sent
	// with each upload of records.
	inFlight func() int

	mu   sync.Mutex
	sent map[string]int64 // bytes of each file the collector holds

	stop chan struct{}
	done chan struct{}
}

// uploadOrder sends the records first: they are what a lost machine must
// not lose.
var uploadOrder = []string{rundir.Records, rundir.Events, rundir.Telemetry, rundir.Spans, rundir.Plan, rundir.Experiment, rundir.Env, rundir.Segment}

// StartUpload begins streaming dir (a segment's run directory) to url;
// inFlight (nil: none) reads the requests in flight, which each upload of
// records reports. Call Finish once the run has written its last line.
func StartUpload(client *http.Client, url string, seg schedule.Segment, dir string, every time.Duration, inFlight func() int) *Uploader {
	u := &Uploader{client: client, url: url, seg: seg, dir: dir, every: every, inFlight: inFlight, sent: map[string]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go u.loop()
	return u
}

func (u *Uploader) loop() {
	defer close(u.done)
	// At once: the plan, the experiment and the clock's zero are written
	// before the first request, and a machine lost in its first second
	// must still be placed in the merged run.
	u.pass(context.Background())
	t := time.NewTicker(u.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			u.pass(context.Background())
		case <-u.stop:
			return
		}
	}
}

// Finish stops the periodic uploads, sends what remains and tells the
// collector the segment is done, retrying until ctx ends. Its error says
// what the collector still lacks; the run directory holds it all.
func (u *Uploader) Finish(ctx context.Context) error {
	close(u.stop)
	<-u.done
	for {
		err := u.pass(ctx)
		if err == nil {
			if err = u.post(ctx, "done"); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("collector %s never took segment %s's last lines (%v); they are all in %s", u.url, u.seg, err, u.dir)
		case <-time.After(u.every):
		}
	}
}

// pass uploads each file's new complete lines once.
func (u *Uploader) pass(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var errs []error
	for _, name := range uploadOrder {
		errs = append(errs, u.file(ctx, name))
	}
	return errors.Join(errs...)
}

// file uploads name's bytes beyond what the collector holds, up to the
// last newline, or the last whole frame of a compressed file (a line or
// frame still being written waits for the next pass), in pieces of at
// most maxUpload until it has caught up.
func (u *Uploader) file(ctx context.Context, name string) error {
	for {
		full, err := u.piece(ctx, name)
		if err != nil || !full {
			return err
		}
	}
}

// piece uploads one piece of name and says whether it was a full one
// (more may follow).
func (u *Uploader) piece(ctx context.Context, name string) (bool, error) {
	from := u.sent[name]
	chunk, err := readFrom(filepath.Join(u.dir, name), from, maxUpload)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil // not written yet (telemetry off, say)
	}
	if err != nil {
		return false, err
	}
	full := len(chunk) == maxUpload
	whole := chunk
	switch {
	case strings.HasSuffix(name, ".jsonl"):
		whole = chunk[:bytes.LastIndexByte(chunk, '\n')+1]
	case strings.HasSuffix(name, ".zst"):
		whole = chunk[:rundir.CompleteFrames(chunk)] // a frame being written waits too
	}
	if len(whole) > 0 || !full {
		chunk = whole
	}
	// else: one line or frame is longer than a piece. Its bytes are
	// written for good (the files are only appended to), so it goes in
	// pieces; the collector's live view holds its start until the rest
	// comes.
	if len(chunk) == 0 && name != rundir.Records {
		return false, nil
	}
	// Records are put every pass, empty when none finished: the
	// collector hears the segment is alive, and its requests in flight,
	// even in a second without a completion.
	size, err := u.put(ctx, name, from, chunk)
	if size >= 0 {
		u.sent[name] = size // on a conflict too: resend from what it holds
	}
	return full && len(chunk) > 0 && err == nil, err
}

// readFrom reads up to limit bytes of path from offset.
func readFrom(path string, offset int64, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, int64(limit)))
}

// put appends chunk at offset and returns the collector's size, or -1
// when it did not answer with one. A 409 says the collector holds less
// than assumed (it restarted): the next pass resends from its size.
func (u *Uploader) put(ctx context.Context, name string, offset int64, chunk []byte) (int64, error) {
	url := segmentURL(u.url, u.seg, "files/"+name) + fmt.Sprintf("?offset=%d", offset)
	h := http.Header{"Content-Type": {uploadType}}
	if name == rundir.Records && u.inFlight != nil {
		h.Set(inFlightHeader, strconv.Itoa(u.inFlight()))
	}
	resp, err := callWith(ctx, u.client, http.MethodPut, url, bytes.NewReader(chunk), h)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusConflict {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return -1, fmt.Errorf("%s: %s: %s", name, resp.Status, strings.TrimSpace(string(msg)))
	}
	var body struct {
		Size int64 `json:"size"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return -1, fmt.Errorf("%s: %w", name, err)
	}
	if resp.StatusCode == http.StatusConflict {
		return body.Size, fmt.Errorf("%s: the collector holds %d bytes, not %d: resending", name, body.Size, offset)
	}
	return body.Size, nil
}

func (u *Uploader) post(ctx context.Context, what string) error {
	resp, err := call(ctx, u.client, http.MethodPost, segmentURL(u.url, u.seg, what), nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", what, resp.Status)
	}
	return nil
}

// Sent is how many bytes of each file the collector acknowledged.
func (u *Uploader) Sent() map[string]int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.sent)
}
