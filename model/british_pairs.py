"""British English copies of real training pairs: "What's your favorite color?" → "What's your favourite colour?"
with the same French, and, where the French says what the word means, British words for American ones ("the
apartment" → "the flat" where the French has "appartement", "the movies" → "the cinema" where it has "cinéma").

Why: Tatoeba's English is mostly American. Among the 2019 release's English sentences "colour" is in 2, "favourite"
in 1, "neighbour" in 1, "theatre" in 1, "maths" in none and "cinema" in none, so a class in Britain typing its own
sentences met words the model had hardly seen ("cinema" → "la camine"). Nothing here is invented: each copy is a
real pair whose English is respelt or has one word swapped for its British equivalent, and a swap is made only
where the French holds the word that fixes the meaning (a "store" is a "shop" where the French says "magasin").

    python -m model.british_pairs IN.tsv OUT.tsv     (writes only the pairs that changed)
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from .data import read_tsv, write_tsv

# Spellings: an American stem and its British one, at the start of a word ("colored", "colorful", "neighbors").
SPELLINGS = [("color", "colour"), ("favorite", "favourite"), ("neighbor", "neighbour"), ("honor", "honour"),
             ("flavor", "flavour"), ("behavior", "behaviour"), ("harbor", "harbour"),
             ("rumor", "rumour"), ("odor", "odour"), ("realiz", "realis"),
             ("recogniz", "recognis"), ("apologiz", "apologis"), ("organiz", "organis"), ("memoriz", "memoris"),
             ("criticiz", "criticis"), ("jewelry", "jewellery"), ("pajamas", "pyjamas"), ("airplane", "aeroplane"),
             ("traveled", "travelled"), ("traveling", "travelling"), ("traveler", "traveller"),
             ("canceled", "cancelled"), ("catalog", "catalogue")]
# Whole words spelt differently.
WORDS = [("theater", "theatre"), ("theaters", "theatres"), ("center", "centre"), ("centers", "centres"),
         ("gray", "grey"), ("humor", "humour"), ("labor", "labour"), ("math", "maths"), ("mom", "mum"),
         ("moms", "mums"), ("defense", "defence"), ("mustache", "moustache")]
# British words for American ones, each only where the French holds one of the words after it (a regular
# expression, case ignored). Longer phrases first: "movie theater" before "theater".
SWAPS = [("movie theaters", "cinemas", "cinéma"), ("movie theater", "cinema", "cinéma"),
         ("the movies", "the cinema", "cinéma"), ("an apartment", "a flat", "appartement"),
         ("an elevator", "a lift", "ascenseur"), ("an eraser", "a rubber", "gomme"),
         ("apartments", "flats", "appartement"),
         ("apartment", "flat", "appartement"), ("elevators", "lifts", "ascenseur"), ("elevator", "lift", "ascenseur"),
         ("cookies", "biscuits", "biscuit|gâteau"), ("cookie", "biscuit", "biscuit|gâteau"),
         ("candies", "sweets", "bonbon"), ("candy", "sweets", "bonbon"), ("vacations", "holidays", "vacances"),
         ("on vacation", "on holiday", "vacances"), ("vacation", "holiday", "vacances"),
         ("soccer", "football", r"\bfoot"), ("trucks", "lorries", "camion"), ("truck", "lorry", "camion"),
         ("sidewalks", "pavements", "trottoir"), ("sidewalk", "pavement", "trottoir"),
         ("a subway", "an underground", "métro"), ("subway", "underground", "métro"),
         ("pants", "trousers", "pantalon"), ("sweaters", "jumpers", r"\bpull"),
         ("sweater", "jumper", r"\bpull"), ("french fries", "chips", "frites"), ("mailman", "postman", "facteur"),
         ("gas station", "petrol station", "essence"), ("gas", "petrol", "essence"),
         ("grocery store", "grocer's", "épicerie"), ("stores", "shops", "magasin|boutique"),
         ("store", "shop", "magasin|boutique"), ("the fall", "the autumn", "automne"),
         ("in fall", "in autumn", "automne"), ("this fall", "this autumn", "automne"),
         ("last fall", "last autumn", "automne"), ("next fall", "next autumn", "automne"),
         ("garbage can", "bin", "poubelle"), ("trash can", "bin", "poubelle"), ("garbage", "rubbish", "ordure|déchet"),
         ("trash", "rubbish", "ordure|déchet"), ("eraser", "rubber", "gomme"), ("faucet", "tap", "robinet"),
         ("flashlight", "torch", "lampe"), ("parking lot", "car park", "parking"),
         ("highway", "motorway", "autoroute"), ("cell phone", "mobile phone", "portable|mobile"),
         ("cellphone", "mobile", "portable|mobile"), ("zip code", "postcode", "code postal"),
         ("schedule", "timetable", "emploi du temps"), ("principal", "headteacher", "directeur|directrice"),
         ("students", "pupils", "élèves"), ("student", "pupil", "élève"), ("yard", "garden", "jardin"),
         ("closet", "wardrobe", "armoire|penderie"), ("closet", "cupboard", "placard")]
SKIP_BEFORE = {"store": ("department", "convenience", "grocery", "liquor", "book"),
               "stores": ("department", "convenience", "grocery", "liquor", "book"),
               "candy": ("a", "of"),
               "pants": ("my", "your", "his", "her", "their", "our")}      # "my pants" may be underwear


def _case_like(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _replace(pattern: str, british: str, english: str, skip: tuple[str, ...] = ()) -> str:
    def swap(m: re.Match) -> str:
        before = english[:m.start()].split()
        if before and before[-1].lower() in skip:
            return m.group(0)
        return _case_like(british, m.group(0))
    return re.sub(pattern, swap, english, flags=re.IGNORECASE)


def british(english: str, french: str) -> str:
    """english with its American words swapped for British ones where french fixes the meaning, then respelt
    (the swaps read American spellings: "movie theater" is a "cinema", not a "movie theatre"); english itself
    where nothing applies."""
    out = english
    done: set[str] = set()                                  # "closet" is swapped once, by the first cue found
    for us, uk, cue in SWAPS:
        if us in done or not re.search(cue, french, flags=re.IGNORECASE):
            continue
        changed = _replace(rf"\b{re.escape(us)}\b", uk, out, SKIP_BEFORE.get(us, ()))
        if changed != out:
            done.add(us)
            out = changed
    for us, uk in SPELLINGS:
        out = _replace(rf"\b{us}", uk, out)
    for us, uk in WORDS:
        out = _replace(rf"\b{us}\b", uk, out)
    return out


def british_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The pairs whose English changed, with the British English and the same French, each once, in order."""
    made = {}
    for en, fr in pairs:
        uk = british(en, fr)
        if uk != en:
            made.setdefault((uk, fr), None)
    return list(made)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.british_pairs", description=__doc__.split("\n\n")[0])
    parser.add_argument("tsv", type=Path, help="the pairs to read (English<TAB>French)")
    parser.add_argument("out", type=Path, help="the TSV to write: the pairs whose English changed")
    a = parser.parse_args(argv)
    corpus = read_tsv(a.tsv)
    pairs = list(zip(corpus.src, corpus.tgt))
    made = british_pairs(pairs)
    write_tsv(a.out, made)
    print(f"{a.out}: {len(made)} of {len(pairs)} pairs in British English")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
