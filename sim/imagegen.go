package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The image-generation model behind POST /v1/images/generations: a
// diffusion model whose time grows with the pixels and the denoising
// steps. One image takes
//
//	imageGenBase + imageGenPerMPStep × megapixels × steps
//
// so 1024×1024 at the default 30 steps is 20 ms + 1.05 × 30 × 20 ms ≈
// 650 ms, 512×512 about 180 ms, and n images take n times one (the
// model draws them one after another). imageGenSlots images are drawn at
// once; further requests wait, and with the profile's queue_limit set, a
// request arriving to a full queue is refused with queue_full_status, so
// the failure rate climbs with concurrency as a real GPU's would.
// Times are divided by the server's speedup.
const (
	imageGenBase      = 20 * time.Millisecond
	imageGenPerMPStep = 20 * time.Millisecond
	imageGenSlots     = 2
	imageGenSteps     = 30 // when the request sets no "steps"
	imageGenMaxSide   = 4096
	imageGenMaxSteps  = 500
	imageGenMaxN      = 10
)

// imagesRequest is the part of an image generation request the simulator
// reads; other fields (a LoRA name, quality, style, ...) are accepted.
type imagesRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	Steps          *int   `json:"steps"`
	ResponseFormat string `json:"response_format"`
}

// imageJob is a validated image generation request.
type imageJob struct {
	n, width, height, steps int
	url                     bool
}

// cost is the job's simulated duration at speedup 1.
func (j imageJob) cost() time.Duration {
	mp := float64(j.width*j.height) / 1e6
	one := imageGenBase + time.Duration(mp*float64(j.steps)*float64(imageGenPerMPStep))
	return time.Duration(j.n) * one
}

// parseImages checks an image generation request.
func (s *Server) parseImages(body []byte) (imageJob, *apiError) {
	var req imagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return imageJob{}, badRequest("", "invalid JSON body: %v", err)
	}
	if req.Model != "" && req.Model != s.prof.Model {
		return imageJob{}, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
			msg: fmt.Sprintf("The model `%s` does not exist.", req.Model)}
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return imageJob{}, badRequest("prompt", "prompt is required")
	}
	j := imageJob{n: 1, width: 1024, height: 1024, steps: imageGenSteps, url: req.ResponseFormat == "url"}
	if req.N != nil {
		j.n = *req.N
	}
	if j.n < 1 || j.n > imageGenMaxN {
		return imageJob{}, badRequest("n", "n must be 1 to %d, got %d", imageGenMaxN, j.n)
	}
	if req.Size != "" {
		w, h, ok := parseSize(req.Size)
		if !ok {
			return imageJob{}, badRequest("size", "size %q: want WIDTHxHEIGHT, each 1 to %d", req.Size, imageGenMaxSide)
		}
		j.width, j.height = w, h
	}
	if req.Steps != nil {
		j.steps = *req.Steps
	}
	if j.steps < 1 || j.steps > imageGenMaxSteps {
		return imageJob{}, badRequest("steps", "steps must be 1 to %d, got %d", imageGenMaxSteps, j.steps)
	}
	if f := req.ResponseFormat; f != "" && f != "url" && f != "b64_json" {
		return imageJob{}, badRequest("response_format", "response_format must be url or b64_json, got %q", f)
	}
	return j, nil
}

// parseSize reads "1024x1024".
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, cut := strings.Cut(s, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	ok = cut && errW == nil && errH == nil && w >= 1 && h >= 1 && w <= imageGenMaxSide && h <= imageGenMaxSide
	return w, h, ok
}

// imageGen is the image model's admission: imageGenSlots generate, the
// rest wait, up to the profile's queue limit.
type imageGen struct {
	slots   chan struct{}
	mu      sync.Mutex
	waiting int
}

// acquire takes a slot, waiting for one unless limit (0: none) requests
// already wait; false means refused (queue full) or the client left.
func (g *imageGen) acquire(r *http.Request, done <-chan struct{}, limit int) (ok, full bool) {
	select {
	case g.slots <- struct{}{}:
		return true, false
	default:
	}
	g.mu.Lock()
	if limit > 0 && g.waiting >= limit {
		g.mu.Unlock()
		return false, true
	}
	g.waiting++
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.waiting--; g.mu.Unlock() }()
	select {
	case g.slots <- struct{}{}:
		return true, false
	case <-r.Context().Done():
	case <-done:
	}
	return false, false
}

func (g *imageGen) release() { <-g.slots }

// images answers POST /v1/images/generations with the image model above,
// injecting the server's faults as the chat endpoints do.
func (s *Server) images(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeAPIError(w, badRequest("", "reading request body: %v", err))
		return
	}
	job, aerr := s.parseImages(body)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	c, ok := s.wholeCall(w, r)
	if !ok {
		return
	}
	ok, full := s.imageGen.acquire(r, s.done, s.prof.QueueLimit)
	if full {
		writeAPIError(w, s.admissionError(ErrQueueFull))
		return
	}
	if !ok {
		return
	}
	defer s.imageGen.release()
	if !c.pause(time.Duration(float64(job.cost()) / s.speedup)) {
		return
	}
	c.finishImages(job)
}

// wholeCall starts a request answered in one body outside the engine
// (images, vector search): it picks the request's fault and plays those
// that come before any work, a status fault (answered at once) and a slow
// first byte. ok is false when the request is over.
func (s *Server) wholeCall(w http.ResponseWriter, r *http.Request) (c *call, ok bool) {
	rng := rand.New(rand.NewPCG(s.seed, s.arrivals.Add(1)))
	c = &call{s: s, w: w, r: r, ctx: r.Context(), fault: s.faults.Pick(rng.Float64())}
	switch c.fault.Kind {
	case FaultStatus:
		writeAPIError(w, statusFault(c.fault.Status))
		return c, false
	case FaultSlowFirstByte:
		return c, c.pause(c.fault.Delay)
	}
	return c, true
}

// finishImages writes the reply, or the request's fault in its place.
func (c *call) finishImages(job imageJob) {
	c.w.Header().Set("Content-Type", "application/json")
	c.writeWhole(imagesBody(job, time.Now().Unix()), func(e *apiError) { writeAPIError(c.w, e) })
}

// tinyPNG is every generated image: an 8×8 PNG, so the reply is cheap to
// send and a client that decodes it gets a real image.
var tinyPNG = sync.OnceValue(func() string {
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 4)
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return base64.StdEncoding.EncodeToString(b.Bytes())
})

// imagesBody renders OpenAI's reply: {"created", "data": [{"b64_json"}
// or {"url"}, ...]}.
func imagesBody(job imageJob, created int64) []byte {
	b := fmt.Appendf(nil, `{"created":%d,"data":[`, created)
	for i := range job.n {
		if i > 0 {
			b = append(b, ',')
		}
		if job.url {
			b = fmt.Appendf(b, `{"url":"https://images.invalid/inferload-sim/%d-%d.png"}`, created, i)
		} else {
			b = append(append(append(b, `{"b64_json":"`...), tinyPNG()...), `"}`...)
		}
	}
	return append(b, "]}"...)
}
