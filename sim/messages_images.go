package sim

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"
)

// This file: images on the Messages API, as Anthropic takes them. An
// image is a content block {"type": "image", "source": ...} whose source
// is base64 ({"type": "base64", "media_type": "image/png", "data": ...})
// or a url ({"type": "url", "url": ...}); it costs what the same image
// costs as a chat image_url part (vision.go), and hashes as the data URI
// or URL chat would send, so the same image hits the same cache blocks on
// either route. OpenAI's image_url part is a 400 here, as Anthropic
// answers it.

// imageSource is a Messages API image block's source.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// addImageSource charges an image block's tokens to h: a base64 image's
// size comes from its header, a url's is unfetchedImageSide square.
func addImageSource(h *PromptHasher, raw json.RawMessage) error {
	var src imageSource
	if err := json.Unmarshal(raw, &src); err != nil {
		return fmt.Errorf("image source: want an object with a type: %v", err)
	}
	switch src.Type {
	case "base64":
		if !strings.HasPrefix(src.MediaType, "image/") {
			return fmt.Errorf("image source.media_type %q: want image/jpeg, image/png, image/gif or image/webp", src.MediaType)
		}
		w, ht, err := base64ImageSize(src.Data)
		if err != nil {
			return fmt.Errorf("image source.data: %w", err)
		}
		chargeImage(h, dataURIKey(src.MediaType, src.Data), w, ht)
	case "url":
		if !strings.HasPrefix(src.URL, "http://") && !strings.HasPrefix(src.URL, "https://") {
			return fmt.Errorf("image source.url %.40q: want an http(s) URL", src.URL)
		}
		chargeImage(h, maphash.String(imageSeed, src.URL), unfetchedImageSide, unfetchedImageSide)
	default:
		return fmt.Errorf("image source.type %q: want base64 or url", src.Type)
	}
	return nil
}

// dataURIKey is the hash of the data URI holding data, as addImage keys
// the same image sent as an image_url part, without building the URI.
func dataURIKey(mediaType, data string) uint64 {
	var m maphash.Hash
	m.SetSeed(imageSeed)
	m.WriteString("data:")
	m.WriteString(mediaType)
	m.WriteString(";base64,")
	m.WriteString(data)
	return m.Sum64()
}

// checkImageBlocks refuses OpenAI's image_url parts in a Messages
// conversation with Anthropic's 400: its content blocks are tagged by
// type, and image_url is not one of the tags.
func checkImageBlocks(msgs []apiMessage) *apiError {
	for i, m := range msgs {
		for k, b := range contentBlocks(m.Content) {
			if b.Type == "image_url" {
				at := fmt.Sprintf("messages.%d.content.%d.type", i, k)
				return badRequest(at, "%s: Input tag 'image_url' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'tool_use', 'tool_result' (an image is {\"type\": \"image\", \"source\": {...}})", at)
			}
		}
	}
	return nil
}
