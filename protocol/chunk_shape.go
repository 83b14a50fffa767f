package protocol

import "bytes"

// chunkShape spares a stream most of its chunk scans. A server writes every
// token's chunk with the same bytes around the token's text (same id,
// created, model, index, a null finish_reason), so once a full scan has read
// a chunk whose only output is one non-empty string, a later chunk with the
// same bytes before and after a string in that place differs from it by one
// string token alone. JSON's grammar sees a string token whole, so that
// chunk is as well formed as the one learned and reads as the same Chunk:
// two comparisons and a scan of the new string decide it, where a full scan
// walks every member (about a fifth of the client's CPU when reads carry
// many tokens). Anything else (the first chunk, usage, a finish reason, an
// error) fails the comparison and gets the full scan, which learns again.
//
// A chunkShape belongs to one stream at a time; reset it between streams.
type chunkShape struct {
	prefix []byte // the learned chunk up to and including the string's opening quote
	suffix []byte // the learned chunk from the string's closing quote on
	chunk  Chunk  // what the learned chunk read as: Content or Reasoning, nothing else
	text   bool   // the learned string is the chunk's Text
	ok     bool
}

// reset forgets the learned chunk, keeping the buffers.
func (sh *chunkShape) reset() {
	sh.prefix, sh.suffix, sh.ok = sh.prefix[:0], sh.suffix[:0], false
}

// scan reads data into c exactly as ScanChunk does.
func (sh *chunkShape) scan(data []byte, c *Chunk) error {
	if sh.ok && sh.matches(data) {
		*c = sh.chunk
		if sh.text {
			c.Text = data[len(sh.prefix) : len(data)-len(sh.suffix)]
		}
		return nil
	}
	s := scanner{b: data}
	if err := s.chunk(c); err != nil {
		return err
	}
	sh.learn(data, c, &s)
	return nil
}

// matches reports whether data is the learned chunk with another non-empty,
// well-formed string in place of the learned one.
func (sh *chunkShape) matches(data []byte) bool {
	end := len(data) - len(sh.suffix) // where data's closing quote must be
	if end <= len(sh.prefix) || !bytes.HasPrefix(data, sh.prefix) || !bytes.HasSuffix(data, sh.suffix) {
		return false
	}
	s := scanner{b: data, i: len(sh.prefix) - 1} // at the opening quote
	_, _, err := s.str()
	return err == nil && s.i == end+1
}

// learn keeps data's shape when its output was one string and it carried
// nothing else: no usage, finish reason, timings or error, whose slices
// would alias data.
func (sh *chunkShape) learn(data []byte, c *Chunk, s *scanner) {
	sh.ok = false
	if s.outputs != 1 || s.out[0] == 0 || c.Content == c.Reasoning || c.Usage || c.Error ||
		c.FinishReason != nil || c.Timings.Present {
		return
	}
	sh.prefix = append(sh.prefix[:0], data[:s.out[0]]...)
	sh.suffix = append(sh.suffix[:0], data[s.out[1]:]...)
	sh.chunk, sh.ok = *c, true
	sh.text, sh.chunk.Text = c.Text != nil, nil // Text aliases data: matches sets it
}
