/**
 * Token counts made before a call, to reserve budget. They are upper bounds, not guesses: a
 * reservation that is too small lets the call, and concurrent ones, spend past the day's budget.
 * The tokenizers of the models we call (byte-level BPE, or SentencePiece with byte fallback)
 * never make a token of less than one byte, so a text's UTF-8 length bounds its tokens (English
 * runs about 4 bytes a token: the reservation is freed down to the real use once the call is
 * answered). Each message adds 8 for its role and framing.
 */

const PER_MESSAGE = 8;

export function estimateTextTokens(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function estimateTokens(messages: readonly { role?: string; content: string }[]): number {
  return messages.reduce((sum, m) => sum + PER_MESSAGE + estimateTextTokens(m.content), 0);
}
