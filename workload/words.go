package workload

// words are common English words, each a single token — with its leading
// space — in both OpenAI tokenizers cl100k_base and o200k_base (checked with
// github.com/tiktoken-go/tokenizer v0.10.0 when the list was written). Text
// built from them therefore has one token per word in those tokenizers and
// close to that in Llama, Qwen or Mistral ones.
//
// There are exactly 512 (1<<wordBits) so that a word is 9 random bits: one
// 64-bit draw picks 7 words, with no rejection sampling and no bias.
//
// Changing this list changes every synthetic prompt: the golden test in
// generator_test.go fails on purpose so the change is seen in review.
var words = [...]string{
	" the", " of", " and", " to", " in", " is", " that", " for",
	" it", " as", " was", " with", " be", " by", " on", " not",
	" he", " this", " are", " or", " his", " from", " at", " which",
	" but", " have", " an", " they", " you", " were", " had", " her",
	" she", " there", " been", " one", " all", " we", " their", " has",
	" would", " when", " if", " so", " no", " more", " out", " up",
	" into", " do", " can", " said", " some", " other", " what", " about",
	" time", " them", " only", " these", " two", " may", " first", " then",
	" could", " any", " my", " like", " over", " him", " me", " new",
	" than", " its", " our", " most", " such", " man", " also", " very",
	" see", " people", " made", " after", " way", " many", " did", " years",
	" just", " well", " where", " much", " should", " even", " now", " must",
	" your", " between", " those", " being", " each", " under", " both", " day",
	" through", " how", " because", " life", " work", " same", " world", " here",
	" while", " last", " still", " might", " own", " part", " make", " take",
	" down", " three", " long", " since", " again", " great", " use", " year",
	" good", " back", " place", " never", " however", " without", " think", " men",
	" before", " us", " another", " know", " used", " house", " go", " small",
	" against", " state", " high", " old", " little", " off", " thus", " few",
	" every", " war", " number", " around", " point", " next", " form", " end",
	" things", " hand", " general", " per", " case", " left", " given", " large",
	" fact", " during", " often", " far", " water", " always", " yet", " later",
	" power", " group", " public", " set", " need", " put", " less", " problem",
	" thought", " system", " head", " mind", " body", " side", " order", " does",
	" face", " early", " second", " best", " among", " until", " young", " rather",
	" country", " present", " name", " half", " done", " away", " once", " felt",
	" nothing", " car", " perhaps", " city", " family", " word", " looked", " home",
	" seen", " keep", " light", " seemed", " open", " got", " help", " began",
	" street", " area", " night", " money", " turned", " kind", " today", " enough",
	" further", " school", " already", " whole", " human", " course", " least", " room",
	" company", " hands", " four", " heard", " sense", " several", " asked", " days",
	" five", " white", " different", " others", " eyes", " mean", " whether", " going",
	" gave", " called", " important", " real", " possible", " change", " social", " table",
	" law", " door", " within", " upon", " above", " below", " across", " along",
	" toward", " behind", " beyond", " near", " book", " story", " true", " land",
	" river", " voice", " question", " answer", " child", " children", " show", " play",
	" move", " live", " believe", " bring", " happen", " write", " provide", " sit",
	" stand", " lose", " pay", " meet", " include", " continue", " learn", " lead",
	" understand", " watch", " follow", " stop", " create", " speak", " read", " allow",
	" add", " spend", " grow", " offer", " remember", " love", " consider", " appear",
	" buy", " wait", " serve", " die", " send", " expect", " build", " stay",
	" fall", " cut", " reach", " kill", " remain", " suggest", " raise", " pass",
	" sell", " require", " report", " decide", " pull", " woman", " women", " father",
	" mother", " friend", " level", " office", " health", " person", " art", " history",
	" party", " result", " morning", " reason", " research", " girl", " guy", " moment",
	" air", " teacher", " force", " education", " foot", " boy", " age", " policy",
	" music", " market", " nation", " plan", " college", " interest", " death", " experience",
	" effect", " class", " control", " care", " field", " development", " role", " effort",
	" rate", " heart", " drug", " leader", " wife", " police", " price", " decision",
	" son", " view", " relationship", " town", " road", " arm", " difference", " value",
	" building", " action", " model", " season", " society", " tax", " director", " position",
	" player", " record", " paper", " space", " ground", " event", " official", " matter",
	" center", " couple", " site", " project", " activity", " star", " court", " oil",
	" situation", " cost", " industry", " figure", " image", " phone", " data", " picture",
	" practice", " piece", " product", " doctor", " wall", " patient", " worker", " news",
	" test", " movie", " north", " support", " technology", " step", " baby", " computer",
	" type", " attention", " film", " tree", " source", " plant", " hair", " fire",
	" south", " thing", " big", " short", " low", " late", " bad", " right",
	" full", " free", " hard", " easy", " clear", " simple", " strong", " sure",
	" better", " black", " red", " green", " blue", " dark", " bright", " warm",
	" cold", " hot", " deep", " wide", " quiet", " loud", " fast", " slow",
	" happy", " quickly", " slowly", " sometimes", " usually", " really", " almost", " soon",
	" together", " maybe", " tomorrow", " yesterday", " twice", " inside", " outside",
	" sun", " moon", " sea", " rain", " snow", " wind", " stone", " glass",
	" bread",
}

// wordBits is log2(len(words)).
const wordBits = 9

// Compile-time check that len(words) == 1<<wordBits: one of these
// constants would be negative, which does not compile, otherwise.
const (
	_ = uint(len(words) - 1<<wordBits)
	_ = uint(1<<wordBits - len(words))
)
