import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser';

describe('SseParser', () => {
  it('splits events across arbitrary chunk boundaries, including CRLF split between chunks', () => {
    const text =
      'event: message_start\r\ndata: {"a":1}\r\n\r\n: comment\r\ndata: line1\r\ndata: line2\r\n\r\ndata: [DONE]\r\n\r\n';
    for (let cut = 1; cut < text.length; cut += 1) {
      const parser = new SseParser();
      const events = [...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut)), ...parser.flush()];
      expect(events.map((e) => [e.event, e.data])).toEqual([
        ['message_start', '{"a":1}'],
        [null, 'line1\nline2'],
        [null, '[DONE]'],
      ]);
    }
  });

  it('returns a trailing event without a blank line on flush', () => {
    const parser = new SseParser();
    expect(parser.push('data: x')).toEqual([]);
    expect(parser.flush().map((e) => e.data)).toEqual(['x']);
  });
});
