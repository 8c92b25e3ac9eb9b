/**
 * The one error catalog. Every error the API answers is an AppError; one middleware renders it
 * in the envelope of the area the route belongs to.
 *
 * The spec gives each area its own codes for the same situation (a bad key is
 * `auth:invalid_token` in orders and products but `bad-request/missing-tenant` in inventory and
 * locations), so a catalog entry may carry one code per area; the area is known only when the
 * error is rendered, which keeps domain code free of it.
 */

export type Area = 'orders' | 'products' | 'inventory' | 'locations' | 'other';

/** A code per area, with `default` for the areas not named. */
export type AreaCodes = Partial<Record<Area, string>> & { default: string };

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | AreaCodes,
    message: string,
    /** Extra members of a flat error body (field, details, fieldErrors, parameter, …). */
    readonly extra: Record<string, unknown> = {},
    /** Response headers that go with the error (Retry-After, …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  codeFor(area: Area): string {
    return typeof this.code === 'string' ? this.code : (this.code[area] ?? this.code.default);
  }
}

const codes = {
  invalidToken: {
    default: 'auth:invalid_token',
    inventory: 'bad-request/missing-tenant',
    locations: 'bad-request/missing-tenant',
  },
  permissionDenied: { default: 'auth:permission_denied' },
  invalidInput: {
    default: 'validation-error',
    orders: 'validation:invalid_input',
    inventory: 'bad-request',
    locations: 'bad-request',
  },
  missingBody: {
    default: 'validation-error',
    orders: 'validation:invalid_input',
    inventory: 'bad-request/missing-body',
    locations: 'bad-request/missing-body',
  },
  invalidJson: {
    default: 'validation-error',
    orders: 'validation:invalid_input',
    inventory: 'bad-request/invalid-json',
    locations: 'bad-request/invalid-json',
  },
  payloadTooLarge: { default: 'payload-too-large', orders: 'validation:payload_too_large' },
  unsupportedMediaType: { default: 'unsupported-media-type', orders: 'validation:unsupported_media_type' },
  routeNotFound: { default: 'not-found', orders: 'route:not_found' },
  methodNotAllowed: { default: 'method-not-allowed', orders: 'route:method_not_allowed' },
  internal: { default: 'internal-error', orders: 'internal:error', locations: 'internal-server-error' },
} satisfies Record<string, AreaCodes>;

/** Constructors for the errors every area shares. Domain errors use `new AppError(...)` with the spec's literal code. */
export const errors = {
  invalidToken: (message = 'Missing, malformed, unknown or revoked credentials') =>
    new AppError(401, codes.invalidToken, message, {}, { 'WWW-Authenticate': 'Bearer' }),
  permissionDenied: (message: string) => new AppError(403, codes.permissionDenied, message),
  invalidInput: (message: string, fieldErrors?: FieldError[]) =>
    new AppError(
      400,
      codes.invalidInput,
      message,
      fieldErrors?.length ? { field: fieldErrors[0].field, fieldErrors } : {},
    ),
  missingBody: () =>
    new AppError(400, codes.missingBody, 'A JSON body is required', {
      field: '(body)',
      fieldErrors: [{ field: '(body)', message: 'is required' }],
    }),
  invalidJson: (message = 'Request body is not valid JSON') => new AppError(400, codes.invalidJson, message),
  payloadTooLarge: (limitBytes: number) =>
    new AppError(413, codes.payloadTooLarge, `Request body is larger than the limit of ${limitBytes} bytes`),
  unsupportedMediaType: (got: string) =>
    new AppError(415, codes.unsupportedMediaType, `Content-Type must be application/json, got "${got || 'none'}"`),
  routeNotFound: (method: string, path: string) =>
    new AppError(404, codes.routeNotFound, `No route for ${method} ${path}`),
  methodNotAllowed: (method: string, path: string, allow: string) =>
    new AppError(
      405,
      codes.methodNotAllowed,
      `${method} is not allowed on ${path}; allowed: ${allow}`,
      {},
      { Allow: allow },
    ),
  notFound: (code: string, message: string) => new AppError(404, code, message),
  internal: () => new AppError(500, codes.internal, 'Internal error'),
};

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
