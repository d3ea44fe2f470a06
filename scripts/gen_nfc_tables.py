"""gen_nfc_tables.py prints, as JSON, the Unicode tables that canonical
composition (NFC) needs, from Python's unicodedata: the canonical combining
class of every code point that has one, the full canonical decomposition of
every code point that has one, and the primary composites (the pairs that
compose). scripts/gen_tokenizer_json_golden.js reads it, checks it against
Hugging Face tokenizers' own NFC and writes tokenizer/nfc_tables.go.

Usage: python3 gen_nfc_tables.py > tables.json
"""
import json
import sys
import unicodedata as ud

SBASE, LBASE, VBASE, TBASE = 0xAC00, 0x1100, 0x1161, 0x11A7


def main():
    ccc, decomp, pairs = {}, {}, []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or SBASE <= cp < SBASE + 11172:
            continue  # surrogates; Hangul syllables are algorithmic
        c = chr(cp)
        k = ud.combining(c)
        if k:
            ccc[cp] = k
        d = ud.normalize("NFD", c)
        if d != c:
            decomp[cp] = [ord(x) for x in d]
        m = ud.decomposition(c)
        if m and not m.startswith("<"):
            parts = [int(x, 16) for x in m.split()]
            # A primary composite: a two-part canonical mapping that NFC
            # keeps (not a composition exclusion).
            if len(parts) == 2 and ud.normalize("NFC", c) == c:
                pairs.append([parts[0], parts[1], cp])
    json.dump({"unicode": ud.unidata_version, "ccc": ccc, "decomp": decomp, "pairs": pairs}, sys.stdout)


if __name__ == "__main__":
    main()
