package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// jsonString is encoding/json's quoting with HTML escaping off, the
// reference appendJSONString must match.
func jsonString(t testing.TB, s string) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

func TestAppendJSONStringMatches(t *testing.T) {
	t.Parallel()
	var every []byte
	for c := range 256 {
		every = append(every, byte(c))
	}
	for _, s := range []string{"", "plain", "a\"b\\c", "tab\tnl\ncr\r\b\f\x00\x1f\x7f", "<&>", "é中文🙂",
		"\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x80", string(every)} {
		if got, want := appendJSONString(nil, s), jsonString(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

// slowRender is Render through its map and encoding/json, the path
// renderPlain replaces.
func slowRender(t testing.TB, b OpenAIBody, api API) []byte {
	out, err := b.renderMap(api)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRenderPlainMatches(t *testing.T) {
	t.Parallel()
	conv := []ChatMessage{{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "hi\n\"there\""}}
	for _, api := range []API{APIChat, APICompletions} {
		for _, b := range []OpenAIBody{
			{},
			{Model: "m", Prompt: "p", MaxTokens: 5, Stream: true, IncludeUsage: true, IgnoreEOS: true},
			{Prompt: "中文 \u2028", MaxTokens: 0, ExplicitMaxTokens: true, Stream: false, IncludeUsage: true},
			{Model: "org/model", Messages: conv, MaxTokens: -3, ExplicitMaxTokens: true, Stream: true},
		} {
			got, ok := b.renderPlain(api)
			if !ok {
				t.Fatalf("%s %+v: renderPlain refused a plain body", api, b)
			}
			if want := slowRender(t, b, api); !bytes.Equal(got, want) {
				t.Errorf("%s %+v:\ngot  %s\nwant %s", api, b, got, want)
			}
		}
	}
	for _, b := range []OpenAIBody{{Extra: map[string]any{"top_p": 1}}, {Images: []Image{{URL: "data:,"}}}} {
		if _, ok := b.renderPlain(APIChat); ok {
			t.Errorf("renderPlain took %+v", b)
		}
	}
	if _, ok := (OpenAIBody{}).renderPlain(APIEmbeddings); ok {
		t.Error("renderPlain took an embeddings body")
	}
}

func FuzzRenderPlain(f *testing.F) {
	f.Add("hello", "m", "user", 16, true, true)
	f.Add("a\x00\"\\\u2028\xff", "", "sys\ntem", -1, false, true)
	f.Fuzz(func(t *testing.T, prompt, model, role string, maxTokens int, stream, usage bool) {
		for _, b := range []OpenAIBody{
			{Model: model, Prompt: prompt, MaxTokens: maxTokens, Stream: stream, IncludeUsage: usage, IgnoreEOS: usage},
			{Model: model, Messages: []ChatMessage{{Role: role, Content: prompt}, {Role: "user", Content: model}},
				MaxTokens: maxTokens, ExplicitMaxTokens: true, Stream: stream},
		} {
			for _, api := range []API{APIChat, APICompletions} {
				got, _ := b.renderPlain(api)
				if want := slowRender(t, b, api); !bytes.Equal(got, want) {
					t.Fatalf("%s %+v:\ngot  %s\nwant %s", api, b, got, want)
				}
			}
		}
	})
}

// BenchmarkRenderChat renders a 64-word chat body: path=plain is Render,
// path=map the map and encoding/json it replaces.
func BenchmarkRenderChat(b *testing.B) {
	body := OpenAIBody{Model: "tiny-sim", Prompt: string(bytes.Repeat([]byte("word "), 64)), MaxTokens: 200,
		Stream: true, IncludeUsage: true, IgnoreEOS: true}
	for _, bm := range []struct {
		name   string
		render func(OpenAIBody, API) ([]byte, error)
	}{{"path=plain", OpenAIBody.Render}, {"path=map", OpenAIBody.renderMap}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bm.render(body, APIChat); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
