/**
 * Characters that render as nothing: zero-width space / non-joiner / joiner, word joiner, invisible operators, BOM,
 * soft hyphen, Mongolian vowel separator. A secret split by one of them is still a secret.
 */
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]/u;

/** Letters that look like ASCII ones (Cyrillic, Greek, Latin lookalikes) and dash lookalikes; NFKC does the rest. */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  в: 'B',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ј: 'j',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ӏ: 'l',
  ɡ: 'g',
  ɑ: 'a',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
  Ѕ: 'S',
  І: 'I',
  Ј: 'J',
  Ү: 'Y',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  ο: 'o',
  ν: 'v',
  ι: 'i',
  κ: 'k',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
  '\ufe63': '-',
  '\uff0d': '-',
};

/**
 * Text as the detectors see it, with the way back: `starts[i]` / `ends[i]` are the original UTF-16 range of
 * normalised unit `i` (`null` when the text was plain ASCII and came through unchanged).
 */
export interface ScanText {
  text: string;
  starts: number[] | null;
  ends: number[] | null;
}

/** Anything but printable ASCII and whitespace: text without it comes through as it is (no copy, no map). */
const NOT_PLAIN = /[^\t\n\r\u0020-\u007e]/u;

/**
 * Removes invisible characters and folds confusable letters to ASCII (a lookalike table, then NFKC per character:
 * fullwidth and mathematical letters), keeping a map from each normalised unit back to the original text.
 */
export function normalizeForScan(original: string): ScanText {
  if (!NOT_PLAIN.test(original)) return { text: original, starts: null, ends: null };
  let text = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let index = 0;
  for (const char of original) {
    const start = index;
    index += char.length;
    if (char.charCodeAt(0) < 0x80) {
      text += char;
      starts.push(start);
      ends.push(index);
      continue;
    }
    if (INVISIBLE.test(char)) continue;
    const mapped = CONFUSABLES[char] ?? char.normalize('NFKC');
    for (let i = 0; i < mapped.length; i += 1) {
      starts.push(start);
      ends.push(index);
    }
    text += mapped;
  }
  return { text, starts, ends };
}

/** The original range of normalised units `[start, end)`. */
export function originalRange(scan: ScanText, start: number, end: number): [number, number] {
  if (!scan.starts || !scan.ends) return [start, end];
  return [scan.starts[start]!, scan.ends[end - 1]!];
}
