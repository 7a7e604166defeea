#!/usr/bin/env python3
"""Writes a large generated vault with the structure of real ones, deterministically.

Usage: scripts/bench/gen_large_vault.py DIR [NOTES] [SEED]   (default 100,000 notes, seed 1)

What makes it realistic enough for scale benchmarks (scan, index, sync, search), where the
`gen_vault` example's notes (one template, eight topics, four folders) are not:
- a folder tree a few levels deep (areas, projects by year, resources by kind) with tens to a
  few hundred notes a folder, and daily notes under Daily/YYYY/MM/ (a tenth of the notes);
- a vocabulary of 40,000 made-up words drawn with Zipf frequencies, plus 600 topics with their
  own words, so terms have the skewed statistics of real text and notes on one topic share words;
- note sizes spread like real ones (log-normal: most under 3 KB, a few past 30 KB);
- frontmatter on most notes (tags, created, status, aliases, a link-valued property), headings
  at levels 1 to 3, paragraphs, nested lists, tasks, code blocks, callouts, tables now and then;
- wikilinks across the whole vault with preferential targets (a few hub notes get many links),
  aliased links, heading links, embeds, and some links to notes that do not exist.
Only the standard library; the same arguments always give the same bytes.
"""

import os
import random
import sys

SYLLABLES = [
    c + v
    for c in ["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
              "br", "st", "tr", "pl", "gr", "ch", "sh", "th"]
    for v in ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
]


def make_words(rng, n):
    words, seen = [], set()
    while len(words) < n:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice([1, 2, 2, 3, 3, 4])))
        if rng.random() < 0.3:
            w += rng.choice(["n", "r", "s", "l", "t", "m"])
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Zipf:
    """Draws indexes 0..n-1 with probability proportional to 1 / (rank + 2) ** s."""

    def __init__(self, rng, n, s):
        weights = [1.0 / (i + 2) ** s for i in range(n)]
        total, acc, self.cdf = sum(weights), 0.0, []
        for w in weights:
            acc += w / total
            self.cdf.append(acc)
        self.rng = rng

    def draw(self):
        import bisect

        return min(bisect.bisect_left(self.cdf, self.rng.random()), len(self.cdf) - 1)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    root = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)

    vocab = make_words(rng, 40_000)
    common = Zipf(rng, len(vocab), 1.07)
    topics = [[vocab[rng.randrange(2_000, len(vocab))] for _ in range(25)] for _ in range(600)]
    topic_of = Zipf(rng, len(topics), 0.8)

    # Folders: areas with sub-areas, projects by year, resources by kind, an inbox, and dailies.
    folders = []
    for a in range(12):
        area = f"Areas/{vocab[a + 40].title()}"
        folders.append(area)
        for b in range(rng.randint(2, 6)):
            folders.append(f"{area}/{vocab[rng.randrange(60, 3_000)].title()}")
    for year in range(2019, 2027):
        for p in range(rng.randint(3, 9)):
            folders.append(f"Projects/{year}/{vocab[rng.randrange(60, 3_000)].title()} {p}")
    for kind in ["Books", "Articles", "People", "Recipes", "Places", "Courses", "Talks"]:
        folders.append(f"Resources/{kind}")
    folders.append("Inbox")
    daily_count = n // 10
    other = n - daily_count

    # Titles: two to four words, unique, plus the dailies' dates.
    titles, seen = [], set()
    while len(titles) < other:
        t = " ".join(vocab[rng.randrange(40, 8_000)] for _ in range(rng.choice([2, 2, 3, 3, 4])))
        t = t[0].upper() + t[1:]
        if t.lower() not in seen:
            seen.add(t.lower())
            titles.append(t)
    import datetime

    start = datetime.date(2026, 12, 1) - datetime.timedelta(days=daily_count - 1)
    dailies = [(start + datetime.timedelta(days=i)).isoformat() for i in range(daily_count)]
    # Preferential link targets: hub notes come first in this Zipf draw.
    hub = Zipf(rng, len(titles), 0.9)
    order = list(range(len(titles)))
    rng.shuffle(order)

    def sentence(topic):
        k = rng.randint(6, 18)
        words = [
            topic[rng.randrange(len(topic))] if rng.random() < 0.18 else vocab[common.draw()]
            for _ in range(k)
        ]
        words[0] = words[0].title()
        return " ".join(words) + rng.choice([".", ".", ".", "?", "!"])

    def link():
        r = rng.random()
        target = titles[order[hub.draw()]]
        if r < 0.05:
            return f"[[{vocab[rng.randrange(8_000, 40_000)].title()} missing]]"
        if r < 0.15:
            return f"[[{target}|{vocab[common.draw()]}]]"
        if r < 0.2:
            return f"[[{target}#{vocab[common.draw()].title()}]]"
        if r < 0.23:
            return f"![[{target}]]"
        return f"[[{target}]]"

    def paragraph(topic):
        parts = []
        for _ in range(rng.randint(2, 6)):
            s = sentence(topic)
            if rng.random() < 0.35:
                s = s[:-1] + " " + link() + s[-1]
            if rng.random() < 0.08:
                s += f" #{topic[0]}/{topic[rng.randrange(1, len(topic))]}"
            parts.append(s)
        return " ".join(parts)

    def body(topic, target_bytes):
        out, level2 = [], 0
        while sum(len(x) for x in out) < target_bytes:
            level = 2 if rng.random() < 0.7 or level2 == 0 else 3
            level2 += level == 2
            out.append("#" * level + " " + " ".join(vocab[common.draw()] for _ in range(rng.randint(1, 4))).title())
            out.append("")
            for _ in range(rng.randint(1, 3)):
                r = rng.random()
                if r < 0.55:
                    out.append(paragraph(topic))
                elif r < 0.75:
                    for _ in range(rng.randint(2, 6)):
                        out.append("- " + sentence(topic))
                        if rng.random() < 0.3:
                            out.append("  - " + sentence(topic))
                elif r < 0.85:
                    for _ in range(rng.randint(1, 5)):
                        out.append(f"- [{rng.choice([' ', 'x'])}] " + sentence(topic))
                elif r < 0.9:
                    out.append("```python")
                    out.append(f"def {vocab[common.draw()]}():\n    return {rng.randint(0, 999)}  # {vocab[common.draw()]}")
                    out.append("```")
                elif r < 0.95:
                    out.append(f"> [!{rng.choice(['note', 'tip', 'warning'])}] {sentence(topic)}")
                    out.append(f"> {sentence(topic)}")
                else:
                    out.append("| name | value |\n|---|---|")
                    for _ in range(rng.randint(2, 5)):
                        out.append(f"| {vocab[common.draw()]} | {rng.randint(1, 100)} |")
                out.append("")
        return "\n".join(out)

    def frontmatter(topic, created, title):
        if rng.random() < 0.25:
            return ""
        lines = ["---", f"tags: [{topic[0]}, {vocab[common.draw()]}]", f"created: {created}"]
        if rng.random() < 0.4:
            lines.append(f"status: {rng.choice(['draft', 'active', 'done', 'archived'])}")
        if rng.random() < 0.15:
            lines.append(f"aliases: [{title.split()[0]} {vocab[common.draw()]}]")
        if rng.random() < 0.2:
            lines.append(f'related: "[[{titles[order[hub.draw()]]}]]"')
        if rng.random() < 0.1:
            lines.append(f"rating: {rng.randint(1, 10)}")
        lines.append("---")
        return "\n".join(lines) + "\n"

    def size():
        return int(min(60_000, max(200, rng.lognormvariate(7.3, 0.9))))

    written = 0
    for i, title in enumerate(titles):
        topic = topics[topic_of.draw()]
        folder = rng.choice(folders)
        created = (datetime.date(2019, 1, 1) + datetime.timedelta(days=rng.randrange(2_900))).isoformat()
        text = frontmatter(topic, created, title) + f"# {title}\n\n" + body(topic, size()) + "\n"
        path = os.path.join(root, folder, title + ".md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written += len(text)
    for day in dailies:
        topic = topics[topic_of.draw()]
        lines = [f"---\ntags: [daily]\ncreated: {day}\n---", f"# {day}", "", "## Log", ""]
        for _ in range(rng.randint(1, 6)):
            lines.append("- " + sentence(topic) + (" " + link() if rng.random() < 0.5 else ""))
        lines += ["", "## Tasks", ""]
        for _ in range(rng.randint(0, 4)):
            lines.append(f"- [{rng.choice([' ', 'x'])}] " + sentence(topic))
        if rng.random() < 0.5:
            lines += ["", "## Notes", "", paragraph(topic)]
        text = "\n".join(lines) + "\n"
        path = os.path.join(root, "Daily", day[:4], day[5:7], day + ".md")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written += len(text)
    print(f"{n} notes ({other} notes, {daily_count} daily notes), {written / 1e6:.0f} MB in {root}")


if __name__ == "__main__":
    main()
