import * as v from 'valibot';
import { ValidationError } from '../domain/errors.js';

export interface Issue {
  field: string;
  message: string;
}

/** valibot issues → `[{field, message}]`, with `body` standing for the whole input. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): Issue[] {
  return issues.map((issue) => {
    const field = v.getDotPath(issue);
    // valibot reports a missing key as an issue of the object around it, at the key's path.
    if (field && issue.kind === 'schema' && issue.type === 'object' && issue.input === undefined) return { field, message: 'is required' };
    return { field: field ?? 'body', message: issue.message };
  });
}

/** Parses input with a schema, or throws a ValidationError whose message names the first field. */
export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  const issues = describeIssues(result.issues);
  throw new ValidationError(`${issues[0]!.field}: ${issues[0]!.message}`, { issues });
}

/** A ValidationError about one field, shaped like a schema failure (`data.issues` included). */
export function invalid(field: string, problem: string): ValidationError {
  return new ValidationError(`${field}: ${problem}`, { issues: [{ field, message: problem }] });
}
