import { ApplicationFailure } from '@temporalio/common';
import { AppError, type AreaCodes } from './catalog';

/** What an AppError carries across Temporal: enough to answer the client as if no workflow stood between. */
interface CarriedError {
  appError: { status: number; code: string | AreaCodes; message: string; extra: Record<string, unknown> };
}

/**
 * A domain refusal (an AppError below 500) as a non-retryable ApplicationFailure: retrying cannot
 * change the answer. Its `type` is the error's code, so the Temporal UI shows what refused.
 */
export function toApplicationFailure(err: AppError): ApplicationFailure {
  const carried: CarriedError = {
    appError: { status: err.status, code: err.code, message: err.message, extra: err.extra },
  };
  return ApplicationFailure.create({
    message: err.message,
    type: typeof err.code === 'string' ? err.code : err.code.default,
    nonRetryable: true,
    details: [carried],
  });
}

/**
 * The AppError a workflow, update or activity failure carries, found anywhere in its cause chain
 * (WorkflowFailedError → ActivityFailure → ApplicationFailure); null when none does.
 */
export function carriedAppError(err: unknown): AppError | null {
  for (let cause = err, depth = 0; cause && depth < 10; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (!(cause instanceof ApplicationFailure)) continue;
    const carried = cause.details?.[0] as CarriedError | undefined;
    if (carried?.appError) {
      const e = carried.appError;
      return new AppError(e.status, e.code, e.message, e.extra);
    }
  }
  return null;
}
