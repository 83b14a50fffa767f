package protocol

import (
	"fmt"
	"strings"
)

// This file: images as Anthropic's Messages API takes them. A message
// with images is an array of content blocks: its text as a text block
// (when not empty), then one image block per image, in the order chat
// sends its image_url parts. An image block names its source:
//
//	{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR..."}}
//	{"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}}
//
// A data URI becomes a base64 source with the URI's media type; an
// http(s) URL a url source. OpenAI's "detail" has no counterpart and is
// left out.

// imageBlock is a Messages API image content block.
type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

// imageSource is an image block's source: base64 (MediaType, Data) or
// url (URL).
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// messagesImage is img as an image block. A URL that is neither a base64
// data URI nor http(s) is an error: sending the message without it would
// measure another request.
func messagesImage(img Image) (imageBlock, error) {
	u := img.URL
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return imageBlock{"image", imageSource{Type: "url", URL: u}}, nil
	}
	data, ok := ImageData(u)
	meta, _, _ := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	mediaType := strings.TrimSuffix(meta, ";base64")
	if !ok || !strings.HasPrefix(mediaType, "image/") {
		return imageBlock{}, fmt.Errorf("render body: the messages API takes an image as a base64 data URI (data:image/...;base64,) or an http(s) URL, not %.40q", u)
	}
	return imageBlock{"image", imageSource{Type: "base64", MediaType: mediaType, Data: data}}, nil
}

// imagesTurn is a message with images as content blocks: its text, then
// its images.
func imagesTurn(m ChatMessage) (*messagesTurn, error) {
	t := &messagesTurn{Role: m.Role, Content: make([]any, 0, len(m.Images)+1)}
	if m.Content != "" {
		t.Content = append(t.Content, textPart{"text", m.Content})
	}
	for _, img := range m.Images {
		b, err := messagesImage(img)
		if err != nil {
			return nil, err
		}
		t.Content = append(t.Content, b)
	}
	return t, nil
}
