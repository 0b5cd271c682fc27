// The console API from the page: JSON in and out, the session's token on every change, and the
// service's error form turned into one error type.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The field a 400 names. */
    readonly field?: string,
  ) {
    super(message);
  }
}

let token = '';

export function useToken(value: string): void {
  token = value;
}

export async function api<T>(path: string, change?: { body?: unknown }): Promise<T> {
  const init: RequestInit = change
    ? {
        method: 'POST',
        headers: { 'X-Console-Token': token, ...(change.body !== undefined && { 'Content-Type': 'application/json' }) },
        body: change.body === undefined ? null : JSON.stringify(change.body),
      }
    : {};
  let response: Response;
  try {
    response = await fetch(`/console/api${path}`, { ...init, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'The service could not be reached. Check the connection and try again.');
  }
  const body = await response.json().catch(() => undefined);
  if (!response.ok) {
    const field = body?.data?.issues?.[0]?.field;
    throw new ApiError(response.status, body?.message ?? `The service answered ${response.status}`, field);
  }
  return body as T;
}
