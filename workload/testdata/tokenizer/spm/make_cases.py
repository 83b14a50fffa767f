import json, random, sys
import sentencepiece as s
random.seed(11)
corpus = open('corpus.txt').read().split('\n')
texts = ["", " ", "  ", "Hello world", " Hello world", "Hello world ", "Hello  world", "the\tpeople\n    said",
  "12345 and 3.14", "café naïve", "日本語", "emoji 😀 test", "<s> the </s>", "<unk>", "▁the", "tool<tab>tab",
  "\n\n", "a\u00a0b", "x", "The Water.", "  leading and trailing  ", "Ünïcödé ümläüts", "\u2581\u2581 two bars",
  "lmm1\u2581", "\u2581", "t.kd r\u00fcm?au\u00e9,<tab>\u2581 ", "to bieen if can whe n l5559!", "at my 44482. Is", "\xff invalid?"]
texts += random.sample(corpus[:3000], 20)
texts.append(" ".join(corpus[:40]))
alphabet = list("abcdefghijklmnopqrstuvwxyzTWH .,?!0123456789\n\t") + ["é", "ü", "日", "😀", "▁", "<tab>"]
for i in range(25):
    texts.append("".join(random.choice(alphabet) for _ in range(random.randint(1, 40))))
for m in ['bpe-bytefallback', 'unigram', 'bpe-unk']:
    sp = s.SentencePieceProcessor(model_file='%s.model' % m)
    cases = [{"text": t, "ids": sp.encode(t), "pieces": sp.encode(t, out_type=str)} for t in texts]
    with open('%s.cases.json' % m, 'w') as f:
        f.write("[\n" + ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]\n")
print(len(texts))
