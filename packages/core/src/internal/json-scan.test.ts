import { describe, expect, it } from 'vitest';
import { JsonScanMismatch, closingQuote, jsonStructure, skipValue, stringEnd, valueEnd } from './json-scan';

describe('json-scan', () => {
  it('finds the quote that ends a string, past escaped quotes and escaped backslashes', () => {
    const text = String.raw`"a\"b\\"x`;
    expect(closingQuote(text, 1)).toBe(7);
    expect(stringEnd(text, 1)).toBe(8);
    expect(closingQuote('"never', 1)).toBe(-1);
    expect(() => stringEnd('"never', 1)).toThrow(JsonScanMismatch);
  });

  it('skips whole values: strings, containers with strings inside, numbers and literals', () => {
    const text = '{"a":[1,"]}",{"b":null}],"c":-1.5e3,"d":true}';
    expect(valueEnd(text, 0)).toBe(text.length);
    expect(valueEnd(text, 5)).toBe(24);
    expect(valueEnd(text, text.indexOf('-1.5'))).toBe(text.indexOf(',"d"'));
    expect(valueEnd('[1,2}', 0)).toBe(-1);
    expect(valueEnd(',', 0)).toBe(-1);
    expect(() => skipValue('{"a":', 0)).toThrow(JsonScanMismatch);
  });

  it('counts depth and values without parsing, ignoring brackets inside strings', () => {
    expect(jsonStructure('{"a":[[1,2],"[[["]}')).toEqual({ depth: 3, values: 5 });
    expect(jsonStructure('[{},{},{},{}]', 3).values).toBeGreaterThanOrEqual(3);
  });
});
