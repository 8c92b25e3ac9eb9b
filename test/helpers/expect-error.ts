import type { HttpResult } from './stack';

/** Asserts an error answer in the envelope of its area: orders nest it, every other area is flat. */
export function expectError(res: HttpResult, status: number, code: string, area: string = 'products'): void {
  expect({ status: res.status, code: area === 'orders' ? res.body?.error?.code : res.body?.code }).toEqual({
    status,
    code,
  });
  const message = area === 'orders' ? res.body.error.message : res.body.message;
  expect(typeof message).toBe('string');
  expect(message.length).toBeGreaterThan(0);
  if (area === 'orders') expect(Object.keys(res.body)).toEqual(['error']);
}
