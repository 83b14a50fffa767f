package sim

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	_ "image/gif" // image.DecodeConfig reads GIF, JPEG and PNG headers
	_ "image/jpeg"
	_ "image/png"
	"strings"
)

// How an image becomes prompt tokens, after the tiling vision models use
// (OpenAI's high-detail rule, without its final shrink to 768 pixels on
// the short side, so resolution keeps mattering as it does for models
// that tile at native size):
//
//   - an image larger than 2048×2048 is first scaled down to fit,
//     keeping its aspect ratio;
//   - it is cut into 512×512 tiles, a partial tile counting as a whole;
//   - it costs imageBaseTokens plus imageTileTokens per tile.
//
// Worked examples: 64×64 is 1 tile, 255 tokens; 1024×1024 is 4 tiles,
// 765 tokens; 1920×1080 is 4×3 = 12 tiles, 2125 tokens — eight times the
// prefill of the thumbnail a test might have sent instead. An http(s)
// URL, which the simulator never fetches, counts as 1024×1024.
const (
	imageBaseTokens = 85
	imageTileTokens = 170
	imageTile       = 512
	imageMaxSide    = 2048
	// unfetchedImageSide is the side of the square an image the
	// simulator cannot see is taken to be.
	unfetchedImageSide = 1024
)

// ImageTokens is the prompt cost of a w×h image under the rule above.
func ImageTokens(w, h int) int {
	if w <= 0 || h <= 0 {
		return 0
	}
	if long := max(w, h); long > imageMaxSide {
		w = max(w*imageMaxSide/long, 1)
		h = max(h*imageMaxSide/long, 1)
	}
	tiles := ((w + imageTile - 1) / imageTile) * ((h + imageTile - 1) / imageTile)
	return imageBaseTokens + imageTileTokens*tiles
}

// imageSeed keys the image hashes: the same image in two requests hashes
// alike within one simulator, so its blocks hit the prefix cache as a
// real server's multimodal cache does.
var imageSeed = maphash.MakeSeed()

// contentPart is one element of a chat message's content array, or a
// Messages API content block: an image (Source, messages_images.go), a
// tool_use (ID, Name, Input) or a tool_result (ToolUseID, Content: a
// string or text blocks).
type contentPart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ImageURL  json.RawMessage `json:"image_url"`
	Source    json.RawMessage `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// addImage charges an image_url part's tokens to h: a data URI's size
// comes from its header, decoded without the pixels.
func addImage(h *PromptHasher, raw json.RawMessage) error {
	var u struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(raw, &u.URL) != nil {
		if err := json.Unmarshal(raw, &u); err != nil {
			return errors.New("image_url must be a string or an object with a url")
		}
	}
	w, ht, err := imageSize(u.URL)
	if err != nil {
		return err
	}
	chargeImage(h, maphash.String(imageSeed, u.URL), w, ht)
	return nil
}

// chargeImage adds a w×h image's tokens to h, each hashed from key (the
// image's URL), so the same image hits the prefix cache.
func chargeImage(h *PromptHasher, key uint64, w, ht int) {
	for i := range ImageTokens(w, ht) {
		h.AddToken(key ^ uint64(i+1)*fnvPrime)
	}
}

// imageSize reads an image URL's size: a data URI's header, or the
// assumed size of an http(s) URL.
func imageSize(url string) (w, h int, err error) {
	switch {
	case strings.HasPrefix(url, "http://"), strings.HasPrefix(url, "https://"):
		return unfetchedImageSide, unfetchedImageSide, nil
	case !strings.HasPrefix(url, "data:"):
		return 0, 0, fmt.Errorf("image_url %.40q: want a data: URI or an http(s) URL", url)
	}
	meta, payload, ok := strings.Cut(url[len("data:"):], ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, errors.New("image_url data URI: want data:image/...;base64,<data>")
	}
	w, h, err = base64ImageSize(payload)
	if err != nil {
		return 0, 0, fmt.Errorf("image_url data URI: %w", err)
	}
	return w, h, nil
}

// base64ImageSize reads a base64-encoded image's size from its header.
func base64ImageSize(payload string) (w, h int, err error) {
	dec := base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload))
	cfg, _, err := image.DecodeConfig(dec)
	if err != nil {
		return 0, 0, fmt.Errorf("cannot read the image's size: %v", err)
	}
	return cfg.Width, cfg.Height, nil
}
