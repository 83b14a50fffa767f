# Writes corpus.txt, the training text of the models here (seeded, so the
# same file every time): sentences over 100 common English words, some
# numbers, indented lines, and a few accented, CJK and emoji lines.
import random
random.seed(3)
words = "the of and to in is that it was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part".split()
lines = []
for i in range(3000):
    ws = [random.choice(words) for _ in range(random.randint(3, 14))]
    if random.random() < 0.3: ws[0] = ws[0].capitalize()
    s = " ".join(ws)
    if random.random() < 0.2: s += " " + str(random.randint(0, 99999))
    s += random.choice([".", ".", "?", "!", ","])
    if random.random() < 0.05: s = "    " + s
    lines.append(s)
lines += ["café naïve résumé déjà vu", "Überraschung für Jürgen", "日本語のテキスト", "emoji 😀 test"]
open("corpus.txt", "w").write("\n".join(lines) + "\n")
