/**
 * Token estimates made before a call, to reserve budget. They must not be low: a reservation
 * that is too small lets concurrent calls overspend the day. English text runs about 4
 * characters a token, so 3 leaves room; a non-ASCII character (accents, CJK, emoji halves) is
 * counted as a token of its own, as tokenizers often split them; each message adds 8 for its
 * role and framing.
 */

const PER_MESSAGE = 8;

export function estimateTextTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 3) + other;
}

export function estimateTokens(messages: readonly { role?: string; content: string }[]): number {
  return messages.reduce((sum, m) => sum + PER_MESSAGE + estimateTextTokens(m.content), 0);
}
