// What the new-key form must hold before it is sent, by the rules the service applies to it (its
// schema, and the expiry's form): a form left incomplete names its fields and sends nothing.
import * as v from 'valibot';
import { KeyCreateBody } from '../../contract/console.js';
import { parseSpecDateTime } from '../../domain/time.js';

export interface KeyForm {
  appId: string;
  app: string;
  allApps: boolean;
  permissions: string[];
  expires: string;
}

export type KeyField = 'appId' | 'app' | 'permissions' | 'expires';

export const FIELD_LABELS: Record<KeyField, string> = { appId: 'App id', app: 'App name', permissions: 'Permissions', expires: 'Expires' };

/** Each field's first problem. */
export type KeyProblems = Partial<Record<KeyField, string>>;

export const EMPTY_KEY_FORM: KeyForm = { appId: '', app: '', allApps: false, permissions: [], expires: '' };

/** The body POST /console/api/keys takes. */
export const keyBody = (form: KeyForm) => ({
  appId: form.appId.trim(),
  app: form.app.trim(),
  allApps: form.allApps,
  permissions: form.permissions,
  expires: form.expires.trim() || null,
});

const isField = (name: string | undefined): name is KeyField => name !== undefined && Object.hasOwn(FIELD_LABELS, name);

export function keyFormProblems(form: KeyForm): KeyProblems {
  const problems: KeyProblems = {};
  // The form names the app by its id; the schema alone would only say what an id looks like.
  if (!form.appId.trim()) problems.appId = 'is required: a new app’s id, or an existing app’s';
  for (const issue of v.safeParse(KeyCreateBody, keyBody(form)).issues ?? []) {
    const field = v.getDotPath(issue)?.split('.')[0];
    if (isField(field)) problems[field] ??= issue.message;
  }
  const expires = form.expires.trim();
  if (expires && !parseSpecDateTime(expires)) problems.expires ??= 'must be a real date and time written "YYYY-MM-DD HH:MM:SS" (UTC)';
  return problems;
}

/** `App id: is required …`: a problem as the form shows it, naming its field. */
export const problemText = (field: KeyField, problem: string) => `${FIELD_LABELS[field]}: ${problem}`;
