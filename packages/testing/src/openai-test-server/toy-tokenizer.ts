/**
 * A deterministic toy tokenizer: text splits into words, whitespace runs and single punctuation marks, and each
 * piece maps to a stable id (FNV-1a hash), so the same text always yields the same token ids on every machine.
 */
const PIECE = /\s+|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/gu;

/** Split text into the pieces the toy tokenizer turns into ids. */
export function toyPieces(text: string): string[] {
  return text.match(PIECE) ?? [];
}

/** The stable id of one piece: 100 + FNV-1a(piece) mod 50,000 (ids below 100 are reserved for specials). */
export function toyTokenId(piece: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < piece.length; i += 1) {
    hash ^= piece.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return 100 + (hash % 50_000);
}

/** Token ids of a text. */
export function toyTokenize(text: string): number[] {
  return toyPieces(text).map(toyTokenId);
}

/** A deterministic log-probability for a token id, in (-1, 0). */
export function toyLogprob(tokenId: number): number {
  return -((tokenId % 97) + 1) / 100;
}

/** Token ids of a chat prompt rendered as `<|role|>content<|end|>` per message plus `<|assistant|>`. */
export function toyChatPromptIds(messages: readonly { role: string; content: string }[]): number[] {
  const ids: number[] = [];
  for (const m of messages) {
    ids.push(1, ...toyTokenize(m.role), 2, ...toyTokenize(m.content), 3);
  }
  ids.push(1, ...toyTokenize('assistant'), 2);
  return ids;
}
