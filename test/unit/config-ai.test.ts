import { loadConfig } from '../../shared/config';

/**
 * AI_BASE_URL is an http(s) URL without credentials: fetch refuses a URL holding a user and
 * password and quotes it whole in its error, which would carry the password into a tenant's job.
 * The process refuses to start instead, naming the variable and not the password.
 */
const base = {
  MONGODB_URI: 'mongodb://127.0.0.1:1',
  TEMPORAL_ADDRESS: '127.0.0.1:2',
  S3_ENDPOINT: 'http://127.0.0.1:3',
  S3_ACCESS_KEY_ID: 'a',
  S3_SECRET_ACCESS_KEY: 'b',
  SECRETS_KEY: 'k'.repeat(64),
};

test('a plain base URL is taken as it is', () => {
  expect(loadConfig({ ...base, AI_BASE_URL: 'http://127.0.0.1:11434/v1' }).ai?.baseUrl).toBe(
    'http://127.0.0.1:11434/v1',
  );
});

test.each([
  ['http://proxyuser:Pr0xyS3cret@127.0.0.1:4000/v1', /must not hold a user or password/],
  ['https://only-user@api.example.com/v1', /must not hold a user or password/],
  ['ftp://api.example.com/v1', /http\(s\) URL/],
  ['not a url', /http\(s\) URL/],
  ['http://proxyuser:Pr0xyS3cret@127.0.0.1:bad/v1', /http\(s\) URL/],
])('%s is refused at start', (url, message) => {
  let error: Error | undefined;
  try {
    loadConfig({ ...base, AI_BASE_URL: url });
  } catch (err) {
    error = err as Error;
  }
  expect(error?.message).toMatch(message);
  expect(error?.message).toContain('AI_BASE_URL');
  expect(error?.message).not.toContain('Pr0xyS3cret');
});
