package workload

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// The Chinese grammar writes simple narrative sentences ("昨天，老师在图书馆
// 认真地读了一本旧的书，然后回家了。"). Chinese words are not one token each
// in any tokenizer, so unlike the English grammar this one cannot count as
// it writes: TextZh writes a little more than needed, encodes it once and
// cuts it at a character boundary that gives exactly n tokens.

// Word lists of the Chinese grammar, written for this project.
var (
	zhTimes    = []string{"今天", "昨天", "早上", "晚上", "上个星期", "去年", "那天下午", "周末", "后来", "第二天", "每天早上", "春天"}
	zhSubjects = []string{
		"老师", "医生", "我的朋友", "他的父亲", "她的母亲", "那个孩子", "小女孩", "学生们",
		"邻居", "工程师", "司机", "作家", "农民", "我们", "他们", "大家", "哥哥", "妹妹",
	}
	zhPlaces  = []string{"学校", "图书馆", "公园", "市场", "办公室", "河边", "车站", "医院", "厨房", "村子里", "城市中心", "花园", "家里", "山上"}
	zhAdverbs = []string{"很快地", "慢慢地", "认真地", "又", "终于", "一起", "悄悄地", "高兴地", "仔细地"}
	zhVerbs   = []string{"看", "读", "写", "买", "找到", "带来", "打开", "修好", "准备", "画", "拿走", "洗", "送来", "借"}
	zhObjects = []struct{ measure, noun string }{
		{"一本", "书"}, {"一封", "信"}, {"一张", "照片"}, {"一张", "地图"}, {"一张", "桌子"}, {"一辆", "自行车"},
		{"一杯", "茶"}, {"一份", "报告"}, {"一份", "计划"}, {"一个", "故事"}, {"一个", "盒子"}, {"一首", "歌"},
		{"一把", "钥匙"}, {"一把", "椅子"}, {"两本", "杂志"}, {"几个", "苹果"}, {"一幅", "画"}, {"一台", "电脑"},
	}
	zhAdjs    = []string{"新", "旧", "红色", "漂亮", "简单", "重要", "有趣", "小小", "很大", "安静", "干净", "特别"}
	zhEndings = []string{
		"然后回家了", "心里很高兴", "觉得很满意", "因为天气很好", "可是时间不多了", "大家都笑了",
		"所以没有迟到", "还给朋友打了电话", "第二天又去了一次", "这件事让他们想了很久",
	}
)

// zhFillers end a text whose last character would overshoot by one token:
// each is one token after Chinese text in the common tokenizers.
var zhFillers = []string{"。", "，", "的", "了"}

// maxZhFitSteps bounds the search for a cut that gives exactly n tokens;
// it is almost always found within a character or two of the first guess.
const maxZhFitSteps = 64

// TextZh returns Chinese prose drawn from rng that tok encodes to exactly n
// tokens (n <= 0 gives ""); a nil tok means cl100k_base. The same rng state
// gives the same text.
func TextZh(tok Tokenizer, rng *rand.Rand, n int) string {
	if n <= 0 {
		return ""
	}
	if tok == nil {
		tok = defaultTokenizer()
	}
	var b strings.Builder
	for range maxZhAttempts {
		writeZh(&b, rng, n)
		ids := tok.Encode(b.String())
		for len(ids) <= n {
			writeZh(&b, rng, n-len(ids)+1)
			ids = tok.Encode(b.String())
		}
		s, ok := fitZh(tok, b.String(), len(tok.Decode(ids[:n])), n)
		if ok {
			return s
		}
		// No cut of this text gives n: keep the part below n and try
		// different text after it.
		b.Reset()
		b.WriteString(s)
	}
	return b.String()
}

// maxZhAttempts bounds how often TextZh rewrites the end of a text whose
// every cut misses n; one retry almost always suffices.
const maxZhAttempts = 8

// defaultTokenizer is cl100k_base, which is embedded and cannot fail to load.
func defaultTokenizer() Tokenizer {
	t, err := embeddedTokenizer(Cl100kBase)
	if err != nil {
		panic("workload: embedded cl100k_base tokenizer: " + err.Error())
	}
	return t
}

// fitZh returns the prefix of text, cut at a character boundary near byte
// guess, that tok encodes to exactly n tokens. When one character moves the
// count from below n to above it, a one-token filler may complete the
// shorter prefix; when none does, fitZh returns that shorter prefix and
// false, and the caller writes different text after it.
func fitZh(tok Tokenizer, text string, guess, n int) (string, bool) {
	p := runeStart(text, min(guess, len(text)))
	for range maxZhFitSteps {
		c := tok.Count(text[:p])
		if c == n && p > 0 {
			return text[:p], true
		}
		if c > n {
			p = runeStart(text, p-1)
			continue
		}
		q := nextRune(text, p)
		if q == p {
			break
		}
		if tok.Count(text[:q]) > n {
			if s, ok := fillTo(tok, text[:p], n); ok {
				return s, true
			}
			return text[:p], false
		}
		p = q
	}
	return text[:p], false
}

// fillTo appends the first filler that brings s to exactly n tokens.
func fillTo(tok Tokenizer, s string, n int) (string, bool) {
	for _, f := range zhFillers {
		if tok.Count(s+f) == n {
			return s + f, true
		}
	}
	return "", false
}

// runeStart returns the largest character boundary of s at or before p.
func runeStart(s string, p int) int {
	for p > 0 && p < len(s) && !utf8.RuneStart(s[p]) {
		p--
	}
	return max(p, 0)
}

// nextRune returns the character boundary after p, or p at the end of s.
func nextRune(s string, p int) int {
	if p >= len(s) {
		return p
	}
	_, size := utf8.DecodeRuneInString(s[p:])
	return p + size
}

// writeZh appends Chinese sentences to b until it holds at least about n
// tokens for cl100k_base (each character is one token or more there).
func writeZh(b *strings.Builder, rng *rand.Rand, n int) {
	para := paragraphSentences(rng)
	for chars := 0; chars < n; {
		start := b.Len()
		zhSentence(b, rng)
		para--
		if para == 0 {
			b.WriteString("\n\n")
			para = paragraphSentences(rng)
		}
		chars += utf8.RuneCountInString(b.String()[start:])
	}
}

// zhSentence writes one sentence: [time，] subject [在 place] [adverb] verb了
// measure [adjective的] object [，ending]。
func zhSentence(b *strings.Builder, rng *rand.Rand) {
	if rng.IntN(3) == 0 {
		b.WriteString(pick(rng, zhTimes))
		b.WriteString("，")
	}
	b.WriteString(pick(rng, zhSubjects))
	if rng.IntN(2) == 0 {
		b.WriteString("在")
		b.WriteString(pick(rng, zhPlaces))
	}
	if rng.IntN(3) == 0 {
		b.WriteString(pick(rng, zhAdverbs))
	}
	b.WriteString(pick(rng, zhVerbs))
	b.WriteString("了")
	obj := zhObjects[rng.IntN(len(zhObjects))]
	b.WriteString(obj.measure)
	if rng.IntN(2) == 0 {
		b.WriteString(pick(rng, zhAdjs))
		b.WriteString("的")
	}
	b.WriteString(obj.noun)
	if rng.IntN(2) == 0 {
		b.WriteString("，")
		b.WriteString(pick(rng, zhEndings))
	}
	b.WriteString("。")
}
