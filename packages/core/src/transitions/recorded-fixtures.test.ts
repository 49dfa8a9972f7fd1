import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Span } from '../schema/index';
import { TraceToTransitions, type TraceToTransitionsOptions } from './trace-to-transitions';

const dir = fileURLToPath(new URL('./__fixtures__/', import.meta.url));
const recordings = readdirSync(dir).filter((f) => f.endsWith('.spans.json'));

function load(file: string): Span[] {
  const raw = JSON.parse(readFileSync(`${dir}${file}`, 'utf8')) as unknown[];
  return raw.map((s) => Span.parse(s));
}

describe('recorded span fixtures', () => {
  it('has at least one recording', () => {
    expect(recordings.length).toBeGreaterThan(0);
  });

  for (const file of recordings) {
    const expectedFile = file.replace(/\.spans\.json$/, '.expected.json');
    it(`${file} converts as recorded in ${expectedFile}`, () => {
      const expected = JSON.parse(readFileSync(`${dir}${expectedFile}`, 'utf8')) as {
        options?: { agentMatch?: string; rewardMatch?: TraceToTransitionsOptions['rewardMatch'] };
        transitions: unknown[];
      };
      const out = new TraceToTransitions(expected.options ?? {}).transitions(load(file));
      expect(JSON.parse(JSON.stringify(out))).toEqual(expected.transitions);
    });
  }

  it('agl-tracer-calc-agent: real tracer output gives two calculator calls, intermediate and final rewards', () => {
    const spans = load('agl-tracer-calc-agent.spans.json');
    const out = new TraceToTransitions({ agentMatch: 'calculator' }).transitions(spans);
    expect(out.map((t) => [t.agentName, t.reward, t.state.messages[0]?.content])).toEqual([
      ['calculator', 0.2, 'What is 2+3?'],
      ['calculator', 1, 'Tool says 5. Answer?'],
    ]);
    expect(out[0]?.action.message.toolCalls?.[0]?.name).toBe('add');
    expect(new TraceToTransitions({ agentMatch: 'someone-else' }).transitions(spans)).toEqual([]);
  });
});
