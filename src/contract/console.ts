// The console's JSON API (/console/api/*), as valibot schemas: the handlers validate what they
// take with them and build what they answer as their types, and the front-end reads the same
// types, so the two sides cannot drift.
import * as v from 'valibot';

const isoInstant = v.pipe(v.string(), v.isoTimestamp());

/** Who is signed in, and the token their changes carry in X-Console-Token. */
export const Me = v.object({
  oId: v.string(),
  name: v.string(),
  nickname: v.string(),
  expires: v.string(),
  token: v.string(),
});
export type Me = v.InferOutput<typeof Me>;

export const Done = v.object({ ok: v.literal(true) });
export type Done = v.InferOutput<typeof Done>;
